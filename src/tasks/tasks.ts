// Task records: creation from an uploaded PDF, reading, listing, cancel and permanent delete.
// The spec's edges: cancel (DELETE …/tasks/:id) and delete-record (DELETE …/tasks/:id/record) are
// separate, so one request never changes meaning with the task's state.
import { randomUUID } from 'node:crypto';
import { Transform, type Readable } from 'node:stream';
import type { Clock } from '../config/clock.ts';
import type { Db, Dialect } from '../db/database.ts';
import type { TaskKind, TaskStatus } from '../db/schema.ts';
import { recordNotification } from '../notifications/notifications.ts';
import type { ObjectStore } from '../storage/object-store.ts';
import { StorageUnavailableError } from '../storage/object-store.ts';
import { NotAPdfError, UnreadablePdfError } from '../documents/pdf/errors.ts';
import { GlossaryError, parseGlossary, type Glossary } from '../documents/translate/glossary.ts';
import type { Translator } from '../documents/translate/translator.ts';
import * as store from './tasks.store.ts';

export const TASK_KINDS: readonly TaskKind[] = ['translate', 'docparse'];
const TERMINAL: readonly TaskStatus[] = ['finished', 'failed', 'cancelled'];

export type TaskContext = {
  db: Db;
  dialect: Dialect;
  clock: Clock;
  objects: ObjectStore;
  /** undefined when no translation engine is configured */
  translator: Translator | undefined;
  uploadMaxBytes: number;
};

/** A refusal with its HTTP status and the first-party API's error code; the message says what to do. */
export class TaskError extends Error {
  readonly status: number;
  readonly code: string;
  readonly retryAfterSeconds: number | undefined;
  constructor(status: number, code: string, message: string, retryAfterSeconds?: number) {
    super(message);
    this.name = 'TaskError';
    this.status = status;
    this.code = code;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

export type ResultFile = { name: string; size: number; content_type: string };

export type TaskView = {
  id: string;
  kind: TaskKind;
  status: TaskStatus;
  progress: { done: number; total: number; unit: 'pages' };
  source: { name: string; size: number; pages: number };
  options: { source_lang: string; target_lang: string; glossary?: Glossary } | { source_lang: string } | Record<string, never>;
  files: Array<ResultFile & { url: string }>;
  error: string | null;
  /** Sentences about what a finished result lacks and why (for example pages without text); empty when nothing is missing. */
  notes: string[];
  created_at: string;
  updated_at: string;
  started_at: string | null;
  finished_at: string | null;
};

/** A translation's layout check (issue 26), per page: written by run-task.ts, read by the result view. */
export const LAYOUT_CHECK = 'layout-check.json';
export const sourceKey = (id: string) => `tasks/${id}/source.pdf`;
export const resultKey = (id: string, name: string) => `tasks/${id}/${name}`;
/** The object-store folder of a task's cached page images (page-images.ts): deleted with the task. */
export const pageImagePrefix = (id: string) => `tasks/${id}/pages/`;
export const isTerminal = (status: TaskStatus) => TERMINAL.includes(status);

export function taskView(row: store.TaskRow): TaskView {
  const files = JSON.parse(row.files) as ResultFile[];
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  return {
    id: row.id,
    kind: row.kind,
    status: row.status,
    progress: { done: row.progress_done, total: row.progress_total || row.source_pages, unit: 'pages' },
    source: { name: row.source_name, size: row.source_size, pages: row.source_pages },
    options: row.kind === 'translate' ? translateOptions(row) : row.source_lang ? { source_lang: row.source_lang } : {},
    files: files.map((f) => ({ ...f, url: `/api/v1/${row.kind}/tasks/${row.id}/files/${f.name.split('/').map(encodeURIComponent).join('/')}` })),
    error: row.error,
    notes: row.notes ? (JSON.parse(row.notes) as string[]) : [],
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
    started_at: iso(row.started_at),
    finished_at: iso(row.finished_at),
  };
}

function translateOptions(row: store.TaskRow): TaskView['options'] {
  const options = { source_lang: row.source_lang ?? '', target_lang: row.target_lang ?? '' };
  return row.glossary ? { ...options, glossary: JSON.parse(row.glossary) as Glossary } : options;
}

export type TranslationOptions = { source?: string; target: string; glossary?: Glossary };

const LANGUAGE = /^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$/;

/**
 * Checks translation options; asks the engine about the pair when it can say. The source language may be
 * left out: the worker then tells it from the text, as `signet translate` and translate_pdf do, and the
 * task's notes say what it took.
 */
export async function checkTranslationOptions(ctx: TaskContext, sourceLang: string | undefined, targetLang: string | undefined, glossaryJson?: string): Promise<TranslationOptions> {
  if (!targetLang) throw new TaskError(400, 'missing_language', 'Choose the target language (target_lang), e.g. es; the source language (source_lang) is told from the text when left out.');
  return checkLanguages(ctx, sourceLang || undefined, targetLang, glossaryJson);
}

/**
 * As checkTranslationOptions, with the source language optional (issue 39: translate_pdf's
 * `source_lang` "optional"): without it the worker tells it from the text, as `signet translate` does,
 * and only the target is checked against the engine's pairs now.
 */
export async function checkTranslationTarget(ctx: TaskContext, sourceLang: string | undefined, targetLang: string): Promise<{ source?: string; target: string }> {
  return checkLanguages(ctx, sourceLang || undefined, targetLang);
}

async function checkLanguages(ctx: TaskContext, sourceLang: string | undefined, targetLang: string, glossaryJson?: string): Promise<{ source?: string; target: string; glossary?: Glossary }> {
  if (!LANGUAGE.test(targetLang) || (sourceLang !== undefined && !LANGUAGE.test(sourceLang))) throw new TaskError(400, 'invalid_language', 'Languages are ISO 639-1 codes such as en, es or zh.');
  if (sourceLang === targetLang) throw new TaskError(400, 'invalid_language', 'The source and target languages are the same; choose two different languages.');
  const pairs = ctx.translator ? await ctx.translator.languagePairs().catch(() => undefined) : undefined;
  if (pairs && !pairs.some((p) => (sourceLang === undefined || p.source === sourceLang) && p.target === targetLang)) {
    const offered = pairs.map((p) => `${p.source}→${p.target}`).join(', ');
    throw new TaskError(422, 'unsupported_language_pair', `The translation engine cannot translate ${sourceLang ?? 'into'} ${sourceLang === undefined ? '' : 'to '}${targetLang}. It offers: ${offered || 'no pairs'}.`);
  }
  const languages = sourceLang === undefined ? { target: targetLang } : { source: sourceLang, target: targetLang };
  if (glossaryJson === undefined || glossaryJson === '') return languages;
  try {
    const glossary = parseGlossary(glossaryJson);
    return Object.keys(glossary).length > 0 ? { ...languages, glossary } : languages;
  } catch (error) {
    if (error instanceof GlossaryError) throw new TaskError(400, 'invalid_glossary', error.message);
    throw error;
  }
}

/** The languages OCR can read scanned pages in (issue 17, item 4), by the task's source_lang. */
export const OCR_LANGUAGES: Record<string, string[]> = { en: ['eng'], zh: ['chi_sim', 'eng'] };

/**
 * What a docparse task may be asked for beyond the defaults (issue 40: the docling-serve options a
 * conversion maps onto its task). Absent fields keep the engine's defaults.
 */
export type ParseOptions = {
  /** auto (default): OCR pages without a text layer; off: never; force: every page */
  ocr?: 'auto' | 'off' | 'force';
  /** tesseract language names (eng, chi_sim, …) for OCR; absent: by source_lang, else detected */
  ocrLanguages?: string[];
  /** only these pages, 1-based and inclusive */
  pageRange?: [number, number];
  /** false: no pictures are cut (default true) */
  pictures?: boolean;
  /** false: tables come out as their text, without rows and columns (default true) */
  tableStructure?: boolean;
};

/** A task's stored parse options (undefined for the defaults). */
export function parseOptionsOf(row: Pick<store.TaskRow, 'parse_options'>): ParseOptions {
  return row.parse_options ? (JSON.parse(row.parse_options) as ParseOptions) : {};
}

/** Checks parsing options: an optional source_lang for scanned pages (en or zh; absent = detect). */
export function checkDocparseOptions(sourceLang: string | undefined, targetLang: string | undefined): { source: string } | undefined {
  if (targetLang) throw new TaskError(400, 'bad_request', 'Document parsing takes no target_lang; only an optional source_lang (en or zh) for scanned pages.');
  if (!sourceLang) return undefined;
  if (!(sourceLang in OCR_LANGUAGES)) throw new TaskError(400, 'invalid_language', `Scanned pages can be read as en or zh; leave source_lang out to have the language detected.`);
  return { source: sourceLang };
}

/** Passes the upload through, keeping a copy for the PDF check; refuses a non-PDF at its first bytes. */
function inspectingStream(): Transform & { bytes(): Buffer } {
  const chunks: Buffer[] = [];
  let seen = 0;
  const stream = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk);
      seen += chunk.length;
      // A PDF starts with "%PDF-" within its first 1024 bytes; anything else is refused before it is stored.
      if (seen >= 1024 && seen - chunk.length < 1024) {
        const head = Buffer.concat(chunks).subarray(0, 1024);
        if (!head.includes('%PDF-')) return callback(new NotAPdfError('The file is not a PDF. Upload a .pdf file.'));
      }
      callback(null, chunk);
    },
  }) as Transform & { bytes(): Buffer };
  stream.bytes = () => Buffer.concat(chunks);
  return stream;
}

export type Upload = { fileName: string; file: Readable; tooLarge(): boolean };

/** Cuts the upload at the size limit with a 413, so nothing truncated is ever stored as if whole. */
function limitError(ctx: TaskContext): TaskError {
  const mb = Math.round(ctx.uploadMaxBytes / 1024 / 1024);
  return new TaskError(413, 'file_too_large', `The file is larger than ${mb} MB. Upload a smaller PDF, or split it.`);
}

/**
 * Creates a task from an uploaded PDF: streams it to storage, checks it really is a PDF that opens,
 * then records the task. A refused upload leaves no record and no object.
 */
export async function createTask(
  ctx: TaskContext,
  input: {
    sub: string;
    kind: TaskKind;
    locale: string;
    upload: Upload;
    options: () => Promise<{ source?: string; target?: string; glossary?: Glossary } | undefined>;
    /** docparse tasks: options beyond the defaults */
    parseOptions?: ParseOptions;
  },
): Promise<TaskView> {
  const id = randomUUID();
  const key = sourceKey(id);
  const inspecting = inspectingStream();
  input.upload.file.on('limit', () => inspecting.destroy(limitError(ctx)));
  input.upload.file.on('error', (error) => inspecting.destroy(error));
  // The store's put reads `inspecting` and rejects with its error; this listener only keeps a second
  // 'error' (emitted after the put has already given up) from becoming an uncaught exception.
  inspecting.on('error', () => {});
  let stored = false;
  try {
    const { size } = await ctx.objects.put(key, input.upload.file.pipe(inspecting), { contentType: 'application/pdf' });
    stored = true;
    if (input.upload.tooLarge()) throw limitError(ctx);
    const data = inspecting.bytes();
    if (data.length < 5 || !data.subarray(0, 1024).includes('%PDF-')) throw new NotAPdfError('The file is not a PDF. Upload a .pdf file.');
    // pdf.js loads on the first upload, not at start-up.
    const { inspectPdf } = await import('../documents/pdf/extract.ts');
    const { pages } = await inspectPdf(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
    const options = await input.options();
    const now = ctx.clock();
    const noEngine = input.kind === 'translate' && ctx.translator === undefined;
    const row: store.TaskRow = {
      id,
      sub: input.sub,
      kind: input.kind,
      status: 'queued',
      locale: input.locale,
      source_name: cleanFileName(input.upload.fileName),
      source_size: size,
      source_pages: pages,
      source_lang: options?.source ?? null,
      target_lang: options?.target ?? null,
      glossary: options?.glossary ? JSON.stringify(options.glossary) : null,
      progress_done: 0,
      progress_total: pages,
      error: null,
      files: '[]',
      notes: null,
      parse_options: input.kind === 'docparse' && input.parseOptions && Object.keys(input.parseOptions).length > 0 ? JSON.stringify(input.parseOptions) : null,
      attempts: 0,
      lease_owner: null,
      lease_expires_at: null,
      created_at: now,
      updated_at: now,
      started_at: null,
      finished_at: null,
    };
    if (noEngine) {
      // spec'd by our issue: "the task fails at once with a message that names the setting to add"
      Object.assign(row, { status: 'failed', finished_at: now, error: NO_ENGINE_MESSAGE });
      await ctx.db.transaction().execute(async (trx) => {
        await store.insertTask(trx, row);
        await recordTaskNotification(trx, ctx.dialect, now, row);
      });
    } else {
      await store.insertTask(ctx.db, row);
    }
    return taskView(row);
  } catch (error) {
    if (stored) await ctx.objects.delete(key).catch(() => {});
    throw asTaskError(error);
  }
}

export const NO_ENGINE_MESSAGE =
  'No translation engine is configured. The operator can set SIGNET_TRANSLATE_ENGINE to apertium, libretranslate or openai (with SIGNET_TRANSLATE_URL for the last two); then upload the file again.';

function asTaskError(error: unknown): unknown {
  if (error instanceof NotAPdfError) return new TaskError(415, 'not_a_pdf', error.message);
  if (error instanceof UnreadablePdfError) return new TaskError(422, 'unreadable_pdf', error.message);
  if (error instanceof StorageUnavailableError) return new TaskError(503, 'storage_unavailable', 'File storage is unreachable right now. Try again in a minute.', 30);
  return error;
}

/** The name a person gave the file, without folders or control characters, at most 200 characters. */
export function cleanFileName(name: string): string {
  // eslint-disable-next-line no-control-regex
  const base = name.split(/[/\\]/).pop()!.replace(/[\u0000-\u001f\u007f]/g, '').trim();
  return (base || 'document.pdf').slice(0, 200);
}

/** The notification a finished or failed task sends its owner, in the owner's language. */
export async function recordTaskNotification(trx: Db, dialect: Dialect, now: number, row: store.TaskRow): Promise<void> {
  if (row.status !== 'finished' && row.status !== 'failed') return;
  const category = row.kind === 'translate' ? 'translation' : 'docparse';
  await recordNotification(trx, dialect, now, {
    sub: row.sub,
    locale: row.locale,
    link: `/tasks#task-${row.id}`,
    event: row.status === 'finished' ? { category, outcome: 'finished', fileName: row.source_name } : { category, outcome: 'failed', fileName: row.source_name, error: row.error ?? '' },
  });
}

async function owned(ctx: TaskContext, sub: string, kind: TaskKind, id: string): Promise<store.TaskRow> {
  const row = await store.findOwnedTask(ctx.db, sub, kind, id);
  // Another person's task is indistinguishable from one that does not exist.
  if (!row) throw new TaskError(404, 'not_found', 'No such task. It may have been deleted.');
  return row;
}

export async function getTask(ctx: TaskContext, sub: string, kind: TaskKind, id: string): Promise<TaskView> {
  return taskView(await owned(ctx, sub, kind, id));
}

/** Newest first; the cursor is opaque to clients. */
export async function listTasks(ctx: TaskContext, sub: string, kind: TaskKind, options: { cursor?: string; limit?: number }): Promise<{ tasks: TaskView[]; next_cursor: string | null }> {
  const limit = Math.min(Math.max(options.limit ?? 20, 1), 100);
  const before = options.cursor === undefined ? undefined : decodeCursor(options.cursor);
  const rows = await store.listTasks(ctx.db, sub, kind, limit + 1, before);
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return { tasks: page.map(taskView), next_cursor: rows.length > limit && last ? encodeCursor(last) : null };
}

function encodeCursor(row: store.TaskRow): string {
  return Buffer.from(`${row.created_at}:${row.id}`).toString('base64url');
}

function decodeCursor(cursor: string): { createdAt: number; id: string } {
  const match = /^(\d{1,15}):([0-9a-f-]{36})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match) throw new TaskError(400, 'invalid_cursor', 'The cursor is not one this API gave out; start again without it.');
  return { createdAt: Number(match[1]), id: match[2]! };
}

/** spec: "DELETE /api/v1/…/tasks/:id — cancel an in-flight task"; a task that already ended is 409. */
export async function cancelTask(ctx: TaskContext, sub: string, kind: TaskKind, id: string): Promise<TaskView> {
  const row = await owned(ctx, sub, kind, id);
  if (isTerminal(row.status) || !(await store.cancelTask(ctx.db, id, ctx.clock()))) {
    throw new TaskError(409, 'task_ended', `The task has already ended (${(await store.findTask(ctx.db, id))?.status ?? row.status}); there is nothing to cancel. Delete its record instead.`);
  }
  return taskView((await store.findTask(ctx.db, id))!);
}

/**
 * spec: delete-record on a running task is 400; on a finished one it removes "record and all files",
 * permanently; with storage unreachable it is 503 and nothing is hidden. Objects go first, the row
 * last: a failure in between leaves the record listed, and a retry completes the delete.
 */
export async function deleteTaskRecord(ctx: TaskContext, sub: string, kind: TaskKind, id: string): Promise<void> {
  const row = await owned(ctx, sub, kind, id);
  if (!isTerminal(row.status)) throw new TaskError(400, 'task_in_flight', 'The task is still running. Cancel it first, then delete its record.');
  const files = JSON.parse(row.files) as ResultFile[];
  try {
    const pages = await ctx.objects.list(pageImagePrefix(id));
    await ctx.objects.deleteMany([sourceKey(id), ...files.map((f) => resultKey(id, f.name)), ...pages]);
  } catch (error) {
    throw asTaskError(error);
  }
  await store.deleteTerminalTask(ctx.db, id);
}

/**
 * Removes the files of every task of a person from object storage: the source and every result. For
 * deleting the account — its task rows go with it (a cascade), so its files must go first: storage
 * unreachable throws StorageUnavailableError before anything is deleted, and a retry starts over.
 * Returns how many objects were removed.
 */
export async function deleteTaskFilesOf(db: Db, objects: ObjectStore, sub: string): Promise<number> {
  const rows = await store.listTaskFilesOf(db, sub);
  const pages = (await Promise.all(rows.map((row) => objects.list(pageImagePrefix(row.id))))).flat();
  const keys = [...rows.flatMap((row) => [sourceKey(row.id), ...(JSON.parse(row.files) as ResultFile[]).map((f) => resultKey(row.id, f.name))]), ...pages];
  if (keys.length > 0) await objects.deleteMany(keys);
  return keys.length;
}

/** A result file of the caller's task, for download. */
export async function resultFile(ctx: TaskContext, sub: string, kind: TaskKind, id: string, name: string): Promise<{ file: ResultFile; key: string; task: store.TaskRow }> {
  const row = await owned(ctx, sub, kind, id);
  if (name === 'source.pdf') return { file: { name, size: row.source_size, content_type: 'application/pdf' }, key: sourceKey(id), task: row };
  const file = (JSON.parse(row.files) as ResultFile[]).find((f) => f.name === name);
  if (!file) throw new TaskError(404, 'not_found', `The task has no file named ${name}.`);
  return { file, key: resultKey(id, name), task: row };
}

// ---- for operators (the admin console): every person's tasks, never their files' contents ----

export type QueueSummary = { counts: Record<TaskStatus, number>; oldestQueuedAt: number | undefined };

export async function queueSummary(db: Db): Promise<QueueSummary> {
  const byStatus = await store.countByStatus(db);
  const counts = { queued: 0, running: 0, finished: 0, failed: 0, cancelled: 0 } satisfies Record<TaskStatus, number>;
  for (const [status, n] of byStatus) counts[status] = n;
  return { counts, oldestQueuedAt: await store.oldestQueuedAt(db) };
}

/** The tasks running now, by the worker holding each one's lease (its heartbeat id): what each worker runs. */
export async function runningTasksByWorker(db: Db): Promise<Map<string, Array<{ id: string; kind: TaskKind; name: string }>>> {
  const byWorker = new Map<string, Array<{ id: string; kind: TaskKind; name: string }>>();
  for (const row of await store.runningTasksWithOwner(db)) {
    const list = byWorker.get(row.lease_owner) ?? [];
    list.push({ id: row.id, kind: row.kind, name: row.source_name });
    byWorker.set(row.lease_owner, list);
  }
  return byWorker;
}

/** A task as an operator sees it: the record with its owner and lease, the files by name and size. */
export type OperatorTaskView = TaskView & { sub: string; attempts: number; lease_owner: string | null };

function operatorView(row: store.TaskRow): OperatorTaskView {
  return { ...taskView(row), sub: row.sub, attempts: row.attempts, lease_owner: row.lease_owner };
}

export async function listAnyTasks(db: Db, filter: { kind?: TaskKind | undefined; status?: TaskStatus | undefined }, options: { cursor?: string | undefined; limit?: number }): Promise<{ tasks: OperatorTaskView[]; next_cursor: string | null }> {
  const limit = Math.min(Math.max(options.limit ?? 25, 1), 100);
  const before = options.cursor === undefined ? undefined : decodeCursor(options.cursor);
  const rows = await store.listAnyTasks(db, filter, limit + 1, before);
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return { tasks: page.map(operatorView), next_cursor: rows.length > limit && last ? encodeCursor(last) : null };
}

export async function findAnyTask(db: Db, id: string): Promise<OperatorTaskView | undefined> {
  if (!/^[0-9a-f-]{36}$/.test(id)) return undefined;
  const row = await store.findTask(db, id);
  return row ? operatorView(row) : undefined;
}

/** Cancels anyone's in-flight task; a task that already ended is a TaskError (409), as for its owner. */
export async function cancelAnyTask(db: Db, clock: Clock, id: string): Promise<OperatorTaskView> {
  const row = /^[0-9a-f-]{36}$/.test(id) ? await store.findTask(db, id) : undefined;
  if (!row) throw new TaskError(404, 'not_found', 'No such task. It may have been deleted.');
  if (isTerminal(row.status) || !(await store.cancelTask(db, id, clock()))) {
    throw new TaskError(409, 'task_ended', `The task has already ended (${(await store.findTask(db, id))?.status ?? row.status}); there is nothing to cancel.`);
  }
  return operatorView((await store.findTask(db, id))!);
}

