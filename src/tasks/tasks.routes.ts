// The first-party task API: /api/v1/{translate,docparse}/tasks. HTTP in and out only; the rules are
// in tasks.ts. The caller comes from the request hook the document APIs share (request.documentCaller):
// the person's session cookie, an API key (X-Api-Key) or an OAuth access token with scope `documents`.
import { create as contentDisposition } from 'content-disposition';
import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { TaskKind } from '../db/schema.ts';
import { GLOSSARY_MAX_JSON } from '../documents/translate/glossary.ts';
import { pageImage } from './page-images.ts';
import { ObjectNotFoundError, StorageUnavailableError } from '../storage/object-store.ts';
import {
  cancelTask,
  checkDocparseOptions,
  checkTranslationOptions,
  createTask,
  deleteTaskRecord,
  getTask,
  listTasks,
  resultFile,
  TASK_KINDS,
  TaskError,
  type TaskContext,
} from './tasks.ts';

type Options = {
  ctx: TaskContext;
  /** the page language of a request, so the task's notification is written in it */
  localeOf: (request: FastifyRequest) => string;
};

const ID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

function notFound(): TaskError {
  return new TaskError(404, 'not_found', 'No such task. It may have been deleted.');
}

/** The multipart fields a task creation reads, besides `file`. */
const FIELDS = new Set(['source_lang', 'target_lang', 'glossary']);

export const taskRoutes: FastifyPluginAsync<Options> = async (app, { ctx, localeOf }) => {
  // Loaded here, not at module load: CLI commands import the app's modules but never parse uploads.
  const { default: multipart } = await import('@fastify/multipart');
  await app.register(multipart, {
    // fieldSize: a glossary (at most GLOSSARY_MAX_JSON characters, up to 4 bytes each in UTF-8) is the largest field.
    limits: { fileSize: ctx.uploadMaxBytes, files: 1, fields: 10, fieldSize: 4 * GLOSSARY_MAX_JSON, parts: 12, headerPairs: 50 },
  });

  app.setErrorHandler((error: FastifyError | TaskError, request, reply) => {
    if (error instanceof TaskError) {
      if (error.retryAfterSeconds) reply.header('retry-after', String(error.retryAfterSeconds));
      return reply.code(error.status).header('cache-control', 'no-store').send({ error: error.code, message: error.message });
    }
    if (error instanceof StorageUnavailableError) {
      request.log.error({ err: error }, 'storage unavailable');
      return reply.code(503).header('retry-after', '30').send({ error: 'storage_unavailable', message: 'File storage is unreachable right now. Try again in a minute.' });
    }
    // A refused caller (request.documentCaller) carries its status; past a key's limit, Retry-After too.
    const retryAfter = (error as { retryAfterSeconds?: unknown }).retryAfterSeconds;
    if (typeof retryAfter === 'number') reply.header('retry-after', String(retryAfter));
    if (error instanceof ObjectNotFoundError) return reply.code(404).send({ error: 'not_found', message: 'The file is missing from storage.' });
    const code = (error as FastifyError).code;
    if (code === 'FST_INVALID_MULTIPART_CONTENT_TYPE') return reply.code(415).send({ error: 'unsupported_media_type', message: 'Send the file as multipart/form-data with a field named file.' });
    if (code === 'FST_FILES_LIMIT' || code === 'FST_PARTS_LIMIT' || code === 'FST_FIELDS_LIMIT') return reply.code(400).send({ error: 'bad_request', message: 'Send one file and only the fields source_lang, target_lang and glossary.' });
    if (code === 'FST_REQ_FILE_TOO_LARGE') return reply.code(413).send({ error: 'file_too_large', message: `The file is larger than ${Math.round(ctx.uploadMaxBytes / 1048576)} MB.` });
    throw error;
  });

  const kindOf = (request: FastifyRequest): TaskKind => {
    const kind = (request.params as { kind: string }).kind;
    if (!TASK_KINDS.includes(kind as TaskKind)) throw new TaskError(404, 'not_found', `Nothing is served at ${request.method} ${request.url.split('?', 1)[0]}.`);
    return kind as TaskKind;
  };
  const idOf = (request: FastifyRequest): string => {
    const id = (request.params as { id: string }).id;
    if (!new RegExp(`^${ID}$`).test(id)) throw notFound();
    return id;
  };

  app.post('/api/v1/:kind/tasks', async (request, reply) => {
    const kind = kindOf(request);
    const { sub } = await request.documentCaller({ sessions: true, stateChanging: true });
    if (!request.isMultipart()) throw new TaskError(415, 'unsupported_media_type', 'Send the file as multipart/form-data with a field named file.');
    const fields: Record<string, string> = {};
    const parts = request.parts();
    const readField = (part: { fieldname: string; value: unknown }) => {
      if (!FIELDS.has(part.fieldname)) throw new TaskError(400, 'bad_request', `Unknown field ${part.fieldname.slice(0, 40)}; send file, source_lang, target_lang and (optionally) glossary.`);
      if (part.fieldname in fields) throw new TaskError(400, 'bad_request', `The field ${part.fieldname} was sent twice.`);
      fields[part.fieldname] = typeof part.value === 'string' ? part.value.trim() : '';
    };
    const options = async () => (kind === 'translate' ? checkTranslationOptions(ctx, fields.source_lang, fields.target_lang, fields.glossary) : checkDocparseOptions(fields.source_lang, fields.target_lang));
    for await (const part of parts) {
      if (part.type === 'field') {
        readField(part);
        continue;
      }
      if (part.fieldname !== 'file') throw new TaskError(400, 'bad_request', 'The PDF goes in a field named file.');
      // Fields sent before the file are checked before anything is stored.
      if (kind === 'translate' && fields.source_lang && fields.target_lang) await options();
      const view = await createTask(ctx, {
        sub,
        kind,
        locale: localeOf(request),
        upload: { fileName: part.filename, file: part.file, tooLarge: () => part.file.truncated },
        options: async () => {
          // Fields after the file: read them now (the file has been consumed), then check.
          for await (const rest of parts) {
            if (rest.type === 'file') throw new TaskError(400, 'bad_request', 'Send one file per task.');
            readField(rest);
          }
          return options();
        },
      });
      return reply.code(201).header('cache-control', 'no-store').header('location', `/api/v1/${kind}/tasks/${view.id}`).send(view);
    }
    throw new TaskError(400, 'missing_file', 'Attach the PDF in a field named file.');
  });

  app.get('/api/v1/:kind/tasks', async (request, reply) => {
    const kind = kindOf(request);
    const { sub } = await request.documentCaller({ sessions: true });
    const query = request.query as Record<string, unknown>;
    const cursor = typeof query.cursor === 'string' ? query.cursor : undefined;
    const limit = typeof query.limit === 'string' && /^\d{1,3}$/.test(query.limit) ? Number(query.limit) : undefined;
    return reply.header('cache-control', 'no-store').send(await listTasks(ctx, sub, kind, { cursor, limit }));
  });

  app.get('/api/v1/:kind/tasks/:id', async (request, reply) => {
    const kind = kindOf(request);
    const { sub } = await request.documentCaller({ sessions: true });
    return reply.header('cache-control', 'no-store').send(await getTask(ctx, sub, kind, idOf(request)));
  });

  // A result name may have one folder (`pictures/page-1-1.png`, issue 17); resultFile serves only
  // names listed in the task's files, so `..` or any other path can name nothing else.
  app.get('/api/v1/:kind/tasks/:id/files/*', async (request, reply) => {
    const kind = kindOf(request);
    const { sub } = await request.documentCaller({ sessions: true });
    const { file, key, task } = await resultFile(ctx, sub, kind, idOf(request), (request.params as { '*': string })['*']);
    return sendObject(ctx, request, reply, key, file.size, file.content_type, downloadName(task.source_name, file.name));
  });

  // The result view's page images: /pages/3.png (the source) or /pages/3.png?file=translated.
  app.get('/api/v1/:kind/tasks/:id/pages/:page', async (request, reply) => {
    const kind = kindOf(request);
    const { sub } = await request.documentCaller({ sessions: true });
    const page = /^(\d{1,5})\.png$/.exec((request.params as { page: string }).page);
    if (!page) throw new TaskError(404, 'not_found', 'Pages are named by their number: 1.png, 2.png …');
    const file = (request.query as Record<string, unknown>).file ?? 'source';
    if (file !== 'source' && file !== 'translated') throw new TaskError(400, 'bad_request', 'file is source or translated.');
    const png = await pageImage(ctx, sub, kind, idOf(request), file, Number(page[1]));
    return reply.type('image/png').header('cache-control', 'private, max-age=3600').header('x-content-type-options', 'nosniff').send(png);
  });

  // spec: "DELETE /api/v1/{translate,docparse}/tasks/:id — cancel an in-flight task"
  app.delete('/api/v1/:kind/tasks/:id', async (request, reply) => {
    const kind = kindOf(request);
    const { sub } = await request.documentCaller({ sessions: true, stateChanging: true });
    return reply.header('cache-control', 'no-store').send(await cancelTask(ctx, sub, kind, idOf(request)));
  });

  // spec: "DELETE /api/v1/{translate,docparse}/tasks/:id/record — permanently delete a finished task"
  app.delete('/api/v1/:kind/tasks/:id/record', async (request, reply) => {
    const kind = kindOf(request);
    const { sub } = await request.documentCaller({ sessions: true, stateChanging: true });
    await deleteTaskRecord(ctx, sub, kind, idOf(request));
    return reply.code(204).send();
  });
};

/** Results are named after the upload: report.pdf → report.translated.pdf, report.md … */
function downloadName(sourceName: string, fileName: string): string {
  const stem = sourceName.replace(/\.pdf$/i, '');
  if (fileName === 'source.pdf') return sourceName;
  // pictures/page-1-1.png → report.pictures-page-1-1.png: a download name has no folders.
  return `${stem}.${fileName.replace(/^document\./, '').replaceAll('/', '-')}`;
}

/** Streams a stored object, honouring one `Range: bytes=a-b` (resumable downloads of large PDFs). */
async function sendObject(ctx: TaskContext, request: FastifyRequest, reply: FastifyReply, key: string, size: number, contentType: string, fileName: string): Promise<FastifyReply> {
  reply
    .header('content-type', contentType)
    .header('content-disposition', contentDisposition(fileName))
    .header('accept-ranges', 'bytes')
    .header('cache-control', 'private, no-store')
    .header('x-content-type-options', 'nosniff');
  const range = /^bytes=(\d{0,15})-(\d{0,15})$/.exec(request.headers.range ?? '');
  if (range && (range[1] !== '' || range[2] !== '') && size > 0) {
    const start = range[1] === '' ? Math.max(size - Number(range[2]), 0) : Number(range[1]);
    const end = range[1] === '' || range[2] === '' ? size - 1 : Math.min(Number(range[2]), size - 1);
    if (start > end || start >= size) return reply.code(416).header('content-range', `bytes */${size}`).send();
    const { body } = await ctx.objects.get(key, { start, end });
    return reply.code(206).header('content-range', `bytes ${start}-${end}/${size}`).header('content-length', String(end - start + 1)).send(body);
  }
  const { body } = await ctx.objects.get(key);
  return reply.header('content-length', String(size)).send(body);
}
