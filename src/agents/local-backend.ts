// The back-end of `signet mcp`: the tools on files of this machine, with no server, database or
// sign-in (as `signet parse` and `signet translate`). Each call is a "local task": a folder
// `{out}/tasks/{task_id}/` holding source.pdf, the results the task's engine writes (tasks/run-task.ts,
// the same code the worker runs) and task.json, its record. Results are handed out as file:// resource
// links to those files, readable through resources/read too (for agents that cannot open files).
import { randomUUID } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { NotAPdfError, UnreadablePdfError } from '../documents/pdf/errors.ts';
import type { OcrMode } from '../documents/pdf/ocr-page.ts';
import type { Translator } from '../documents/translate/translator.ts';
import type { TasksTable } from '../db/schema.ts';
import { createFsObjectStore } from '../storage/fs.ts';
import { ToolInputError, type AgentFile, type AgentTask, type DocumentBackend, type PdfInput, type TaskKindName, type Waiting } from './backend.ts';
import { readWhole, resourceContent } from './resources.ts';

export type LocalBackendOptions = {
  /** where the local tasks' folders go (created when missing) */
  out: string;
  maxPdfBytes: number;
  /** the translation engine, made on the first translation (Apertium, or SIGNET_TRANSLATE_*) */
  translator: () => Promise<Translator>;
  /** reader processes for one document (SIGNET_PARSE_THREADS) */
  threads: number;
  /** where a relative `path` is read from */
  cwd: string;
};

const RECORD = 'task.json';
const LANGUAGE = /^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$/;

export function createLocalBackend(options: LocalBackendOptions): DocumentBackend {
  const root = path.resolve(options.out);
  const objects = createFsObjectStore(root);
  const folderOf = (id: string) => path.join(root, 'tasks', id);
  const uriOf = (id: string, name: string) => pathToFileURL(path.join(folderOf(id), ...name.split('/'))).href;

  const readPdf = async (pdf: PdfInput): Promise<{ data: Uint8Array; name: string }> => {
    if ('data' in pdf) return { data: pdf.data, name: pdf.filename };
    const file = path.resolve(options.cwd, pdf.path);
    let info;
    try {
      info = await stat(file);
    } catch {
      throw new ToolInputError(`No file at ${file}; give the path of a PDF on this machine.`);
    }
    if (!info.isFile()) throw new ToolInputError(`${file} is not a file; give the path of a PDF.`);
    if (info.size > options.maxPdfBytes) throw new ToolInputError(`The file is larger than ${Math.round(options.maxPdfBytes / 1048576)} MB (signet mcp --max-mb raises the limit).`);
    const buffer = await readFile(file).catch((error: unknown) => {
      throw new ToolInputError(`${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}).`);
    });
    return { data: new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength), name: path.basename(file) };
  };

  const record = async (id: string): Promise<AgentTask> => {
    if (!/^[0-9a-f-]{36}$/.test(id)) throw new ToolInputError('No such task. It may have been deleted.');
    try {
      return JSON.parse(await readFile(path.join(folderOf(id), RECORD), 'utf8')) as AgentTask;
    } catch {
      throw new ToolInputError('No such task. It may have been deleted.');
    }
  };
  const save = (task: AgentTask) => objects.put(`tasks/${task.task_id}/${RECORD}`, Buffer.from(`${JSON.stringify(task, null, 2)}\n`), { contentType: 'application/json' });

  /** Runs the task's engine here and now; the answer is the finished (or failed) task. */
  const run = async (kind: TaskKindName, pdf: PdfInput, settings: { ocrMode?: OcrMode; source?: string | undefined; target?: string }, waiting: Waiting): Promise<AgentTask> => {
    const { data, name } = await readPdf(pdf);
    const head = Buffer.from(data.subarray(0, 1024));
    if (!head.includes('%PDF-')) throw new ToolInputError(`${name} is not a PDF.`);
    const { inspectPdf } = await import('../documents/pdf/extract.ts');
    let pages: number;
    try {
      ({ pages } = await inspectPdf(data));
    } catch (error) {
      if (error instanceof NotAPdfError || error instanceof UnreadablePdfError) throw new ToolInputError(`${name}: ${error.message}`);
      throw error;
    }
    const translator = kind === 'translate' ? await options.translator() : undefined;
    const id = randomUUID();
    const now = Date.now();
    const task: AgentTask = {
      task_id: id,
      kind,
      status: 'running',
      source: { name, pages },
      progress: { done: 0, total: pages },
      options: kind === 'translate' ? JSON.parse(JSON.stringify({ source_lang: settings.source, target_lang: settings.target })) : {},
      files: [],
      error: null,
      notes: [],
      created_at: new Date(now).toISOString(),
      finished_at: null,
    };
    await objects.put(`tasks/${id}/source.pdf`, data, { contentType: 'application/pdf' });
    await save(task);
    const row: TasksTable = {
      id, sub: 'local', kind, status: 'running', locale: 'en', source_name: name, source_size: data.byteLength, source_pages: pages,
      source_lang: settings.source ?? null, target_lang: settings.target ?? null, glossary: null, progress_done: 0, progress_total: pages,
      error: null, files: '[]', notes: null, attempts: 1, lease_owner: null, lease_expires_at: null, created_at: now, updated_at: now, started_at: now, finished_at: null,
    };
    const { runTask, TaskFailure } = await import('../tasks/run-task.ts');
    try {
      const result = await runTask(row, { objects, translator }, {
        signal: waiting.signal,
        threads: options.threads,
        ...(settings.ocrMode ? { ocrMode: settings.ocrMode } : {}),
        onProgress: (done, total) => waiting.onProgress(done, total, `${done} of ${total} pages`),
      });
      const files: AgentFile[] = [{ name: 'source.pdf', size: data.byteLength, content_type: 'application/pdf' }, ...result.files].map((file) => ({ name: file.name, uri: uriOf(id, file.name), mime_type: file.content_type.split(';', 1)[0]!, size: file.size }));
      if (result.sourceLang !== undefined) task.options = { source_lang: result.sourceLang, target_lang: settings.target! };
      Object.assign(task, { status: 'finished', files, notes: result.notes, progress: { done: pages, total: pages }, finished_at: new Date().toISOString() });
    } catch (error) {
      if (waiting.signal.aborted) {
        // The agent cancelled the call: the record says so, and the answer goes nowhere.
        Object.assign(task, { status: 'cancelled', error: 'The agent cancelled the call.', finished_at: new Date().toISOString() });
        await save(task).catch(() => {});
        throw error;
      }
      // The engine's reasons are the task's (a damaged page, a language not told); anything else too, in one line.
      const message = error instanceof TaskFailure || error instanceof Error ? error.message.split('\n', 1)[0]! : String(error);
      Object.assign(task, { status: 'failed', error: message, finished_at: new Date().toISOString() });
    }
    await save(task);
    return task;
  };

  /** The file a file:// URI names, when it is a listed file of a local task; else "no such resource". */
  const fileOf = async (uri: string): Promise<{ file: string; entry: AgentFile }> => {
    const refuse = () => new ToolInputError(`No such resource: ${uri.slice(0, 300)}. Read the file:// links that parse_pdf, translate_pdf and get_task return.`);
    let file: string;
    try {
      file = fileURLToPath(uri);
    } catch {
      throw refuse();
    }
    const relative = path.relative(path.join(root, 'tasks'), file).split(path.sep);
    if (relative.length < 2 || relative[0] === '..') throw refuse();
    const task = await record(relative[0]!).catch(() => {
      throw refuse();
    });
    // Only names the task lists: `..` or any other path can name nothing else.
    const entry = task.files.find((f) => f.name === relative.slice(1).join('/'));
    if (!entry) throw refuse();
    return { file, entry };
  };

  return {
    localFiles: true,
    maxPdfBytes: options.maxPdfBytes,
    resourceTemplate: { uriTemplate: `${pathToFileURL(path.join(root, 'tasks')).href}/{task_id}/{+name}`, name: 'task-file', description: 'A result file of a local parse or translation (document.md, document.json, pictures/…, translated.pdf, bilingual.pdf, translated.md).' },
    parse: (pdf, parseOptions, waiting) => run('docparse', pdf, { ocrMode: parseOptions.ocr }, waiting),
    translate(pdf, languages, waiting) {
      if (!LANGUAGE.test(languages.targetLang) || (languages.sourceLang !== undefined && !LANGUAGE.test(languages.sourceLang))) throw new ToolInputError('Languages are ISO 639-1 codes such as en, es or zh.');
      if (languages.sourceLang === languages.targetLang) throw new ToolInputError('The source and target languages are the same; choose two different languages.');
      return run('translate', pdf, { source: languages.sourceLang, target: languages.targetLang }, waiting);
    },
    // A local task ran in the call that made it: there is nothing to wait for.
    wait: (taskId) => record(taskId),
    task: record,
    async tasks(kind) {
      const ids = await readdir(path.join(root, 'tasks')).catch(() => [] as string[]);
      const tasks = (await Promise.all(ids.map((id) => record(id).catch(() => undefined)))).filter((t): t is AgentTask => t !== undefined && (kind === undefined || t.kind === kind));
      return tasks.sort((a, b) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : 0)).slice(0, 50);
    },
    async readText(taskId, name) {
      const task = await record(taskId);
      const entry = task.files.find((f) => f.name === name);
      if (!entry) throw new ToolInputError(`The task has no file named ${name}.`);
      return readFile(fileURLToPath(entry.uri), 'utf8');
    },
    async readResource(uri) {
      const { entry } = await fileOf(uri);
      const { body } = await objects.get(path.relative(root, fileURLToPath(entry.uri)).split(path.sep).join('/'));
      return resourceContent(uri, entry.mime_type, await readWhole(body, Math.max(options.maxPdfBytes * 2, 64 * 1048576)));
    },
  };
}
