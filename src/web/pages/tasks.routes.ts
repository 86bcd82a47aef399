// /tasks: upload a PDF for parsing or translation, follow its progress, cancel it, download the
// results, delete the record. The server renders both lists so the page reads (and downloads work)
// before the script loads; static/tasks.js then uploads through the task API, updates rows in place
// and polls the list while anything is queued or running.
import type { FastifyPluginAsync } from 'fastify';
import type { TaskKind } from '../../db/schema.ts';
import type { LanguagePair } from '../../documents/translate/translator.ts';
import { isTerminal, listTasks, type TaskContext, type TaskView } from '../../tasks/tasks.ts';
import type { Messages } from '../i18n/en.ts';
import type { Locale } from '../i18n/i18n.ts';
import { formatDate, formatSize, localeOf, renderPage } from './view.ts';

/** How long the page waits for the engine to list its languages before offering the common ones. */
const LANGUAGE_PAIRS_TIMEOUT_MS = 3000;

/** Offered when the engine cannot say which pairs it has (openai), or did not answer in time. */
const COMMON_LANGUAGES = ['en', 'zh', 'es', 'fr', 'de', 'ja', 'ko', 'ru', 'pt', 'it', 'ar', 'hi'];

/** The file every finished parsing task has, shown by Preview. */
const PREVIEW_FILE = 'document.md';

type Text = Messages['tasks'];

/** `{name}` placeholders in the task texts, which the browser script fills the same way. */
function fill(template: string, values: Record<string, string | number>): string {
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => (name in values ? String(values[name]) : whole));
}

/** What the translation form offers: the engine's pairs, or (when it cannot say) common languages. */
type LanguageChoice = {
  state: 'pairs' | 'unknown' | 'none' | 'not-configured';
  sources: Array<{ code: string; name: string }>;
  targets: Array<{ code: string; name: string }>;
  /** "en:es,es:en" for the script, which narrows the target list to the chosen source's pairs */
  pairs: string;
  source: string;
  target: string;
};

async function languagePairs(ctx: TaskContext): Promise<LanguagePair[] | undefined | 'not-configured'> {
  if (!ctx.translator) return 'not-configured';
  return ctx.translator.languagePairs(AbortSignal.timeout(LANGUAGE_PAIRS_TIMEOUT_MS)).catch(() => undefined);
}

function languageChoice(locale: Locale, offered: LanguagePair[] | undefined | 'not-configured'): LanguageChoice {
  const names = new Intl.DisplayNames([locale], { type: 'language' });
  const collator = new Intl.Collator(locale);
  const named = (codes: Iterable<string>) =>
    [...new Set(codes)].map((code) => ({ code, name: languageName(names, code) })).sort((a, b) => collator.compare(a.name, b.name));
  // A person usually wants a document in the language they read this page in.
  const pageLanguage = locale.split('-')[0]!;
  if (Array.isArray(offered)) {
    const pair = offered.find((p) => p.target === pageLanguage) ?? offered.find((p) => p.source === pageLanguage) ?? offered[0];
    return {
      state: offered.length > 0 ? 'pairs' : 'none',
      sources: named(offered.map((p) => p.source)),
      targets: named(offered.map((p) => p.target)),
      pairs: offered.map((p) => `${p.source}:${p.target}`).join(','),
      source: pair?.source ?? '',
      target: pair?.target ?? '',
    };
  }
  const languages = named(COMMON_LANGUAGES);
  return {
    state: offered === 'not-configured' ? 'not-configured' : 'unknown',
    sources: languages,
    targets: languages,
    pairs: '',
    source: COMMON_LANGUAGES.find((code) => code !== pageLanguage)!,
    target: pageLanguage,
  };
}

function languageName(names: Intl.DisplayNames, code: string): string {
  try {
    return names.of(code) ?? code;
  } catch {
    return code;
  }
}

/** One row of the list, as the template draws it (the script draws the same from the API's JSON). */
type TaskRowView = {
  id: string;
  kind: TaskKind;
  status: TaskView['status'];
  statusText: string;
  name: string;
  /** ISO time, for the script to keep the list newest first */
  created: string;
  languages: string;
  progress: { done: number; total: number; text: string };
  times: Array<{ label: string; iso: string; text: string }>;
  error: string;
  files: Array<{ name: string; url: string; size: string }>;
  inFlight: boolean;
  /** the address of document.md when the row offers Preview */
  preview: string;
  /** the result view of a finished task */
  view: string;
};

function taskRowView(locale: Locale, text: Text, names: Intl.DisplayNames, task: TaskView): TaskRowView {
  const options = task.options as { source_lang?: string; target_lang?: string };
  const languages =
    options.source_lang && options.target_lang
      ? fill(text.languages, { source: languageName(names, options.source_lang), target: languageName(names, options.target_lang) })
      : '';
  const total = task.progress.total;
  const time = (label: string, iso: string | null) => (iso ? [{ label, iso, text: formatDate(locale, Date.parse(iso)) }] : []);
  const preview = task.kind === 'docparse' && task.status === 'finished' ? task.files.find((f) => f.name === PREVIEW_FILE)?.url : undefined;
  return {
    id: task.id,
    kind: task.kind,
    status: task.status,
    statusText: text.status[task.status],
    name: task.source.name,
    created: task.created_at,
    languages,
    progress: { done: task.progress.done, total, text: fill(total === 1 ? text.progressOne : text.progressOther, { done: task.progress.done, total }) },
    times: [...time(text.created, task.created_at), ...time(text.started, task.started_at), ...time(text.ended, task.finished_at)],
    error: task.error ?? '',
    files: task.files.map((f) => ({ name: f.name, url: f.url, size: formatSize(locale, f.size) })),
    inFlight: !isTerminal(task.status),
    preview: preview ?? '',
    view: task.status === 'finished' ? `/tasks/${task.kind}/${task.id}` : '',
  };
}

/** A row with nothing in it: the script's pattern for tasks that appear after the page loaded. */
function blankRow(kind: TaskKind): TaskRowView {
  return { id: '', kind, status: 'queued', statusText: '', name: '', created: '', languages: '', progress: { done: 0, total: 0, text: '' }, times: [], error: '', files: [], inFlight: true, preview: '', view: '' };
}

export const tasksRoutes: FastifyPluginAsync<{ ctx: TaskContext }> = async (app, { ctx }) => {
  app.get('/tasks', async (request, reply) => {
    const session = await request.currentSession();
    if (!session) return reply.redirect('/signin?return=%2Ftasks', 302);
    const locale = localeOf(request);
    const [docparse, translate, offered] = await Promise.all([
      listTasks(ctx, session.sub, 'docparse', {}),
      listTasks(ctx, session.sub, 'translate', {}),
      languagePairs(ctx),
    ]);
    return renderPage(ctx.db, request, reply, 'tasks', (t) => t.tasks.title, (t) => {
      const names = new Intl.DisplayNames([locale], { type: 'language' });
      const section = (kind: TaskKind, list: { tasks: TaskView[]; next_cursor: string | null }) => ({
        kind,
        rows: list.tasks.map((task) => taskRowView(locale, t.tasks, names, task)),
        blank: blankRow(kind),
        nextCursor: list.next_cursor ?? '',
      });
      return {
        docparse: section('docparse', docparse),
        translate: section('translate', translate),
        languages: languageChoice(locale, offered),
        uploadLimit: fill(t.tasks.uploadLimit, { mb: Math.round(ctx.uploadMaxBytes / 1024 / 1024) }),
        previewCaption: fill(t.tasks.previewCaption, { file: PREVIEW_FILE }),
        // Everything the script writes, in the page's language (a data attribute: escaped, never run).
        script: JSON.stringify({ locale, text: t.tasks, previewFile: PREVIEW_FILE }),
      };
    });
  });
};
