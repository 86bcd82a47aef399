// The back-end of `/mcp`: the tools act as the signed-in person, through the same task functions as
// the upload page and the task API (tasks/tasks.ts). A tool's PDF becomes a task in their list; the
// worker runs it as any other; the tool waits, polling the record, and reports its progress.
import { setTimeout as delay } from 'node:timers/promises';
import { Readable } from 'node:stream';
import type { TaskKind } from '../db/schema.ts';
import { ObjectNotFoundError, StorageUnavailableError } from '../storage/object-store.ts';
import { checkTranslationTarget, createTask, getTask, isTerminal, listTasks, resultFile, TASK_KINDS, TaskError, type TaskContext, type TaskView } from '../tasks/tasks.ts';
import { ToolInputError, type AgentTask, type DocumentBackend, type PdfInput, type TaskKindName, type Waiting } from './backend.ts';
import { parseTaskFileUri, readWhole, resourceContent, TASK_FILE_TEMPLATE, taskFileUri } from './resources.ts';

export type TaskBackendOptions = {
  ctx: TaskContext;
  /** the person the access token names */
  sub: string;
  /** the language of the task's notification (the agent's Accept-Language, else English) */
  locale: string;
  /** how often a waiting tool reads the task's progress */
  pollMs: number;
  /** how long a tool waits for its task before answering with the task as it is */
  maxWaitMs: number;
  /** aborted when the server shuts down: waiting tools answer at once with their task as it is */
  stopping?: AbortSignal;
};

/** How many tasks list_tasks returns (the newest; the Tasks page has them all). */
const LISTED = 50;

const NOT_FOUND = 'No such task. It may have been deleted, or it is not yours.';

export function agentTask(view: TaskView): AgentTask {
  const options = 'target_lang' in view.options ? { source_lang: view.options.source_lang || undefined, target_lang: view.options.target_lang } : {};
  return {
    task_id: view.id,
    kind: view.kind,
    status: view.status,
    source: { name: view.source.name, pages: view.source.pages },
    progress: { done: view.progress.done, total: view.progress.total },
    options: JSON.parse(JSON.stringify(options)) as AgentTask['options'],
    files: view.files.map((file) => ({ name: file.name, uri: taskFileUri(view.id, file.name), mime_type: file.content_type.split(';', 1)[0]!, size: file.size })),
    error: view.error,
    notes: view.notes,
    created_at: view.created_at,
    finished_at: view.finished_at,
  };
}

/** A refusal of the task functions, as the agent should read it (the message already says what to do). */
function asToolError(error: unknown): unknown {
  if (error instanceof TaskError) return new ToolInputError(error.message);
  if (error instanceof StorageUnavailableError) return new ToolInputError('File storage is unreachable right now. Try again in a minute.');
  if (error instanceof ObjectNotFoundError) return new ToolInputError('The file is missing from storage.');
  return error;
}

async function refusing<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw asToolError(error);
  }
}

export function createTaskBackend(options: TaskBackendOptions): DocumentBackend {
  const { ctx, sub } = options;

  /** The caller's task of either kind; another person's is "not found", as one that never existed. */
  const find = async (taskId: string): Promise<TaskView> => {
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(taskId)) throw new ToolInputError(NOT_FOUND);
    for (const kind of TASK_KINDS) {
      try {
        return await getTask(ctx, sub, kind, taskId);
      } catch (error) {
        if (!(error instanceof TaskError && error.status === 404)) throw asToolError(error);
      }
    }
    throw new ToolInputError(NOT_FOUND);
  };

  const wait = async (taskId: string, waiting: Waiting): Promise<AgentTask> => {
    const began = performance.now();
    const signal = options.stopping ? AbortSignal.any([waiting.signal, options.stopping]) : waiting.signal;
    for (;;) {
      const view = await find(taskId);
      if (isTerminal(view.status)) return agentTask(view);
      const { done, total } = view.progress;
      waiting.onProgress(done, total, view.status === 'queued' ? 'queued: waiting for a worker' : `${done} of ${total} pages`);
      // The wait ends with the request (the agent cancelled), with the server (shutting down: the agent
      // picks the task up on another node) or after maxWaitMs: the task goes on, and the answer says
      // how to pick it up again.
      if (signal.aborted || performance.now() - began >= options.maxWaitMs) return agentTask(view);
      await delay(options.pollMs, undefined, { signal }).catch(() => {});
    }
  };

  const create = (kind: TaskKind, pdf: PdfInput, taskOptions: () => Promise<{ source?: string; target?: string } | undefined>) =>
    refusing(async () => {
      if (!('data' in pdf)) throw new ToolInputError('Send the PDF as data (base64) with filename.');
      const file = Readable.from([Buffer.from(pdf.data.buffer, pdf.data.byteOffset, pdf.data.byteLength)]);
      return createTask(ctx, { sub, kind, locale: options.locale, upload: { fileName: pdf.filename, file, tooLarge: () => pdf.data.byteLength > ctx.uploadMaxBytes }, options: taskOptions });
    });

  return {
    localFiles: false,
    maxPdfBytes: ctx.uploadMaxBytes,
    resourceTemplate: { uriTemplate: TASK_FILE_TEMPLATE, name: 'task-file', description: 'A result file of one of your tasks (document.md, document.json, pictures/…, translated.pdf, bilingual.pdf, translated.md).' },
    async parse(pdf, parseOptions, waiting) {
      // A parsing task records no OCR mode yet: the worker reads pages without a text layer by OCR
      // (auto). Until tasks carry one (issue 40's parse options), another mode is refused, not ignored.
      if (parseOptions.ocr !== 'auto') throw new ToolInputError(`ocr ${parseOptions.ocr} is not available on this server yet; leave ocr out (auto: pages without a text layer are read by OCR).`);
      const view = await create('docparse', pdf, async () => undefined);
      return wait(view.id, waiting);
    },
    async translate(pdf, languages, waiting) {
      // Checked before the upload is stored, so a wrong language leaves nothing behind.
      const checked = await refusing(() => checkTranslationTarget(ctx, languages.sourceLang, languages.targetLang));
      const view = await create('translate', pdf, async () => checked);
      return wait(view.id, waiting);
    },
    wait,
    task: async (taskId) => agentTask(await find(taskId)),
    async tasks(kind: TaskKindName | undefined) {
      const kinds = kind === undefined ? TASK_KINDS : [kind];
      const lists = await refusing(() => Promise.all(kinds.map((k) => listTasks(ctx, sub, k, { limit: LISTED }))));
      const views = lists.flatMap((list) => list.tasks).sort((a, b) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : a.id < b.id ? 1 : -1));
      return views.slice(0, LISTED).map(agentTask);
    },
    async readText(taskId, name) {
      const view = await find(taskId);
      return refusing(async () => {
        const { key } = await resultFile(ctx, sub, view.kind, taskId, name);
        const { body } = await ctx.objects.get(key);
        return (await readWhole(body, ctx.uploadMaxBytes * 4)).toString('utf8');
      });
    },
    async readResource(uri) {
      const { taskId, name } = parseTaskFileUri(uri);
      const view = await find(taskId);
      return refusing(async () => {
        const { file, key } = await resultFile(ctx, sub, view.kind, taskId, name);
        const { body } = await ctx.objects.get(key);
        return resourceContent(uri, file.content_type, await readWhole(body, Math.max(ctx.uploadMaxBytes * 2, 64 * 1048576)));
      });
    },
  };
}
