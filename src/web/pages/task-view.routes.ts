// The result view of a finished task, one page at a time (issue 17 item 6, issue 18 item 5):
//  - parsing: the source page image with the blocks document.json found outlined on it (headings,
//    tables, pictures … in different colours, with a legend), beside that page's Markdown, rendered
//    safely (result-markdown.ts, loaded on first use);
//  - translation: the source page beside its translated page, or (the bilingual reading order)
//    one after the other.
// Plain links for paging (?page=N), so it works with the keyboard and without script; the images
// come from the task API's page-image route, drawn on first request and cached (page-images.ts).
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { TaskKind } from '../../db/schema.ts';
import { getTask, LAYOUT_CHECK, resultFile, TaskError, type TaskContext, type TaskView } from '../../tasks/tasks.ts';
import { ObjectNotFoundError } from '../../storage/object-store.ts';
import type { CheckSummary } from '../../documents/translate/overlay/check-pdf.ts';
import type { Messages } from '../i18n/en.ts';
import { formatSize, localeOf, renderError, renderPage } from './view.ts';

type Box = { l: number; t: number; r: number; b: number };
type Outline = { kind: keyof Messages['taskView']['labels']; x: number; y: number; width: number; height: number };

/** docling labels → the view's outline kinds (each has its colour in signet.css). */
const KIND_OF: Record<string, Outline['kind']> = {
  title: 'heading',
  section_header: 'heading',
  text: 'text',
  list_item: 'list',
  table: 'table',
  picture: 'picture',
  caption: 'caption',
  footnote: 'footnote',
  code: 'code',
  formula: 'code',
  page_header: 'furniture',
  page_footer: 'furniture',
};

type DoclingItem = { label?: string; prov?: Array<{ page_no?: number; bbox?: Box }> };
type DoclingJson = { texts?: DoclingItem[]; tables?: DoclingItem[]; pictures?: DoclingItem[]; pages?: Record<string, { size?: { width?: number; height?: number } }> };

async function readText(ctx: TaskContext, key: string): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of (await ctx.objects.get(key)).body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** A result file's text, or undefined when the task has no such file. */
async function resultText(ctx: TaskContext, sub: string, kind: TaskKind, id: string, name: string): Promise<string | undefined> {
  try {
    const { key } = await resultFile(ctx, sub, kind, id, name);
    return await readText(ctx, key);
  } catch (error) {
    if ((error instanceof TaskError && error.status === 404) || error instanceof ObjectNotFoundError) return undefined;
    throw error;
  }
}

/** The outlines of one page, in SVG user units = PDF points with the origin at the top left. */
export function pageOutlines(json: DoclingJson, pageNo: number): { width: number; height: number; outlines: Outline[] } {
  const size = json.pages?.[String(pageNo)]?.size;
  const width = size?.width ?? 612;
  const height = size?.height ?? 792;
  const outlines: Outline[] = [];
  for (const item of [...(json.texts ?? []), ...(json.tables ?? []), ...(json.pictures ?? [])]) {
    const kind = KIND_OF[item.label ?? ''];
    for (const prov of item.prov ?? []) {
      if (!kind || prov.page_no !== pageNo || !prov.bbox) continue;
      const { l, t, r, b } = prov.bbox;
      // BOTTOMLEFT origin (docling) → SVG's top-left origin.
      outlines.push({ kind, x: l, y: height - t, width: Math.max(1, r - l), height: Math.max(1, t - b) });
    }
  }
  return { width, height, outlines };
}

function pageNumber(request: FastifyRequest, total: number): number {
  const raw = (request.query as Record<string, unknown>).page;
  const page = typeof raw === 'string' && /^\d{1,5}$/.test(raw) ? Number(raw) : 1;
  return Math.min(Math.max(page, 1), Math.max(total, 1));
}

const fill = (template: string, values: Record<string, string | number>) => template.replace(/\{(\w+)\}/g, (whole, name: string) => (name in values ? String(values[name]) : whole));

export const taskViewRoutes: FastifyPluginAsync<{ ctx: TaskContext }> = async (app, { ctx }) => {
  app.get('/tasks/:kind/:id', async (request, reply) => {
    const { kind, id } = request.params as { kind: string; id: string };
    const session = await request.currentSession();
    if (!session) return reply.redirect(`/signin?return=${encodeURIComponent(`/tasks/${kind}/${id}`)}`, 302);
    if ((kind !== 'docparse' && kind !== 'translate') || !/^[0-9a-f-]{36}$/.test(id)) return renderError(ctx.db, request, reply, 404, (t) => t.pageNotFound);
    let task: TaskView;
    try {
      task = await getTask(ctx, session.sub, kind, id);
    } catch (error) {
      if (error instanceof TaskError && error.status === 404) return renderError(ctx.db, request, reply, 404, (t) => t.pageNotFound);
      throw error;
    }
    const total = task.source.pages;
    const page = pageNumber(request, total);
    const api = `/api/v1/${kind}/tasks/${id}`;
    const finished = task.status === 'finished';
    const bilingual = (request.query as Record<string, unknown>).order === 'bilingual';
    const parsed = kind === 'docparse' && finished ? await parsedPage(ctx, session.sub, id, page, `${api}/files/`) : undefined;
    const translated = kind === 'translate' && finished && task.files.some((f) => f.name === 'translated.pdf');
    const check = translated && task.files.some((f) => f.name === LAYOUT_CHECK) ? layoutCheck(await resultText(ctx, session.sub, 'translate', id, LAYOUT_CHECK)) : undefined;
    const base = `/tasks/${kind}/${id}`;
    // The result files to download (pictures are linked from document.md and document.html, and listed on the task page).
    const locale = localeOf(request);
    const downloads = finished ? task.files.filter((f) => !f.name.startsWith('pictures/') && f.name !== LAYOUT_CHECK) : [];
    const pictureCount = task.files.filter((f) => f.name.startsWith('pictures/')).length;
    const link = (p: number, order = bilingual) => `${base}?page=${p}${order ? '&order=bilingual' : ''}`;
    return renderPage(ctx.db, request, reply, 'task-view', (t) => fill(t.taskView.title, { name: task.source.name }), (t) => ({
      s: t.taskView,
      task,
      kind,
      finished,
      page,
      total,
      pageOf: fill(t.taskView.pageOf, { page, total }),
      previous: page > 1 ? link(page - 1) : '',
      next: page < total ? link(page + 1) : '',
      pages: Array.from({ length: total }, (_, i) => ({ n: i + 1, href: link(i + 1), current: i + 1 === page })),
      sourceImage: `${api}/pages/${page}.png`,
      translatedImage: translated ? `${api}/pages/${page}.png?file=translated` : '',
      sourceAlt: fill(parsed ? t.taskView.sourceAlt : t.taskView.sourcePlainAlt, { page }),
      translatedAlt: fill(t.taskView.translatedAlt, { page }),
      parsed,
      bilingual,
      sideBySideHref: link(page, false),
      bilingualHref: link(page, true),
      legend: Object.entries(t.taskView.labels).map(([key, label]) => ({ key, label })),
      downloads: downloads.map((f) => ({ name: f.name, url: f.url, size: formatSize(locale, f.size), format: (t.taskView.formats as Record<string, string>)[f.name] ?? '' })),
      pictures: pictureCount === 0 ? '' : fill(pictureCount === 1 ? t.taskView.picturesOne : t.taskView.picturesMany, { n: pictureCount }),
      check: check && {
        here: problemsOf(t.taskView, check.find((c) => c.page === page)),
        pages: check.map((c) => ({ n: c.page, href: link(c.page), text: fill(t.taskView.checkOnPage, { page: c.page, problems: problemsOf(t.taskView, c).join(', ') }) })),
      },
    }), { here: link(page) });
  });
};

/** layout-check.json of a translation (run-task.ts): the pages where the check found something. */
function layoutCheck(json: string | undefined): CheckSummary | undefined {
  if (json === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(json);
    return Array.isArray(value) ? (value as CheckSummary).filter((c) => Number.isInteger(c?.page)) : undefined;
  } catch {
    return undefined;
  }
}

/** "3 places where text overlaps", … for one page of the check; empty when the page is clean. */
function problemsOf(s: Messages['taskView'], page: CheckSummary[number] | undefined): string[] {
  if (!page) return [];
  const say = (n: number, forms: { one: string; many: string }) => (n > 0 ? [n === 1 ? forms.one : fill(forms.many, { n })] : []);
  return [
    ...say(page.overlaps, s.checkOverlaps),
    ...say(page.gutter, s.checkGutter),
    ...say(page.drawings, s.checkDrawings),
    ...say(page.belowMargin, s.checkMargin),
    ...say(page.missingGlyphs ?? 0, s.checkGlyphs),
    ...say(page.styleFallbacks ?? 0, s.checkStyles),
  ];
}

async function parsedPage(ctx: TaskContext, sub: string, id: string, page: number, filesUrl: string) {
  const [md, json] = await Promise.all([resultText(ctx, sub, 'docparse', id, 'document.md'), resultText(ctx, sub, 'docparse', id, 'document.json')]);
  let doc: DoclingJson = {};
  try {
    doc = json ? (JSON.parse(json) as DoclingJson) : {};
  } catch {
    doc = {};
  }
  const { width, height, outlines } = pageOutlines(doc, page);
  // Loaded on the first result view, not at start: markdown-it and sanitize-html are ~3.5 MB of heap a
  // server that only signs people in never needs (issue 20, memory).
  const { pageSection, resultHtml } = await import('./result-markdown.ts');
  const section = md ? pageSection(md, page) : '';
  return { html: section ? resultHtml(section, filesUrl) : '', width, height, outlines, kinds: [...new Set(outlines.map((o) => o.kind))] };
}
