// docling-serve's conversion API (issue 40), as its clients send it: /v1/convert/{file,source}[/async],
// /v1/status/poll/:task_id, /v1/result/:task_id, and the /v1alpha/… paths of docling-serve 0.x that
// deployed clients still call. HTTP in and out only: options.ts reads the options, conversions.ts maps
// them onto docparse tasks, answer.ts shapes the answer. Callers: a person's API key (X-Api-Key) or an
// OAuth access token with scope `documents` (request.documentCaller); never a cookie. Refusals are
// docling-serve's `{"detail": …}`.
import { createReadStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createWriteStream } from 'node:fs';
import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { SECOND } from '../config/clock.ts';
import { StorageUnavailableError } from '../storage/object-store.ts';
import { TaskError } from '../tasks/tasks.ts';
import { conversionAnswer } from './answer.ts';
import { allEnded, ConversionNotFound, createConversion, documentStates, findConversion, taskStatus, waitForConversion, type Conversion, type ConvertContext, type IncomingFile } from './conversions.ts';
import { RESULT_NOT_READY_DETAIL, SYNC_TIMEOUT_DETAIL, TASK_NOT_FOUND_DETAIL, type HttpErrorBody } from './docling-serve.ts';
import { fetchSource, SourceFetchError } from './fetch-source.ts';
import { OptionError, readOptions, zipTargetType, type ConvertOptions } from './options.ts';

type Options = {
  ctx: ConvertContext;
  localeOf: (request: FastifyRequest) => string;
  /** how long a synchronous conversion is waited for (docling-serve's DOCLING_SERVE_MAX_SYNC_WAIT, 120 s) */
  maxSyncWaitMs?: number;
  /** how often a waiting request looks at its tasks */
  pollMs?: number;
};

/** Files in one request (docling-serve's max_sources_per_request is of this order). */
export const MAX_FILES = 20;
/** `GET /v1/status/poll/…?wait=S` waits at most this long. */
const MAX_POLL_WAIT_MS = 30 * SECOND;

/** A refusal in docling-serve's shape. */
class ConvertRefusal extends Error {
  readonly status: number;
  readonly detail: HttpErrorBody['detail'];
  constructor(status: number, detail: HttpErrorBody['detail']) {
    super(typeof detail === 'string' ? detail : detail.map((d) => d.msg).join('; '));
    this.status = status;
    this.detail = detail;
  }
}

/** The JSON body of /v1/convert/source: v1's `sources` and `target`, and v1alpha's `file_sources`, `http_sources`. */
type SourceBody = {
  options?: Record<string, unknown>;
  sources?: Array<Record<string, unknown>>;
  file_sources?: Array<Record<string, unknown>>;
  http_sources?: Array<Record<string, unknown>>;
  target?: { kind?: unknown };
};

const VERSIONS = ['v1', 'v1alpha'] as const;

export const convertRoutes: FastifyPluginAsync<Options> = async (app, { ctx, localeOf, maxSyncWaitMs = 120 * SECOND, pollMs = 250 }) => {
  const { default: multipart } = await import('@fastify/multipart');
  // A file over the limit is cut, not thrown: it becomes a failed document of the answer, as docling-serve reports a file it cannot convert.
  await app.register(multipart, { throwFileSizeLimit: false, limits: { fileSize: ctx.tasks.uploadMaxBytes, files: MAX_FILES, fields: 200, fieldSize: 64 * 1024, parts: MAX_FILES + 200, headerPairs: 50 } });

  app.setErrorHandler((error: FastifyError | Error, request, reply) => {
    const send = (status: number, detail: HttpErrorBody['detail']) => reply.code(status).header('cache-control', 'no-store').send({ detail } satisfies HttpErrorBody);
    if (error instanceof ConvertRefusal) return send(error.status, error.detail);
    if (error instanceof OptionError) return send(422, [{ type: 'value_error', loc: ['body', ...error.loc], msg: error.message }]);
    if (error instanceof ConversionNotFound) return send(404, TASK_NOT_FOUND_DETAIL);
    if (error instanceof SourceFetchError) return send(error.status, error.message);
    if (error instanceof TaskError) {
      if (error.retryAfterSeconds) reply.header('retry-after', String(error.retryAfterSeconds));
      return send(error.status, error.message);
    }
    if (error instanceof StorageUnavailableError) {
      request.log.error({ err: error }, 'storage unavailable');
      reply.header('retry-after', '30');
      return send(503, 'File storage is unreachable right now. Try again in a minute.');
    }
    const retryAfter = (error as { retryAfterSeconds?: unknown }).retryAfterSeconds;
    if (typeof retryAfter === 'number') reply.header('retry-after', String(retryAfter));
    const code = (error as FastifyError).code;
    if (code === 'FST_INVALID_MULTIPART_CONTENT_TYPE') return send(415, 'Send the files as multipart/form-data in fields named files.');
    if (code === 'FST_FILES_LIMIT' || code === 'FST_PARTS_LIMIT' || code === 'FST_FIELDS_LIMIT') return send(422, `Too many files or fields: at most ${MAX_FILES} files in one request.`);
    if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') return send(413, `The request is larger than the limit (files up to ${Math.round(ctx.tasks.uploadMaxBytes / 1048576)} MB).`);
    if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return send(415, 'Send the request as application/json.');
    const status = (error as { statusCode?: unknown }).statusCode;
    // A refused caller (401/403/429) and Fastify's own 4xx (a malformed JSON body …) in docling-serve's shape.
    if (typeof status === 'number' && status >= 400 && status < 500) return send(status, error.message);
    throw error;
  });

  /** The caller: an API key or an OAuth access token with scope documents; the session cookie does not count here. */
  const callerOf = async (request: FastifyRequest) => (await request.documentCaller({ sessions: false })).sub;

  /** Reads a multipart request: every `files` part spooled to a private temporary folder, every other field as an option. */
  async function readMultipart(request: FastifyRequest, dir: string): Promise<{ files: IncomingFile[]; options: ConvertOptions }> {
    if (!request.isMultipart()) throw new ConvertRefusal(415, 'Send the files as multipart/form-data in fields named files.');
    const fields = new Map<string, string[]>();
    const files: IncomingFile[] = [];
    for await (const part of request.parts()) {
      if (part.type === 'field') {
        fields.set(part.fieldname, [...(fields.get(part.fieldname) ?? []), typeof part.value === 'string' ? part.value : String(part.value)]);
        continue;
      }
      if (part.fieldname !== 'files') {
        part.file.resume();
        continue;
      }
      const spooled = path.join(dir, String(files.length));
      await pipeline(part.file, createWriteStream(spooled, { mode: 0o600 }));
      const truncated = part.file.truncated;
      files.push({ filename: part.filename || `file${files.length === 0 ? '' : `_${files.length}`}.pdf`, open: () => createReadStream(spooled), tooLarge: () => truncated });
    }
    if (files.length === 0) throw new ConvertRefusal(422, [{ type: 'missing', loc: ['body', 'files'], msg: 'Field required' }]);
    const options = readOptions((name) => fields.get(name), zipTargetType(fields.get('target_type')));
    return { files, options };
  }

  /** Reads /v1/convert/source's JSON: base64 `file_sources`/`sources`, and `http_sources` when fetching is on. */
  async function readSources(request: FastifyRequest): Promise<{ files: IncomingFile[]; options: ConvertOptions }> {
    const body = (typeof request.body === 'object' && request.body !== null ? request.body : {}) as SourceBody;
    const raw = body.options && typeof body.options === 'object' ? body.options : {};
    const options = readOptions((name) => raw[name], body.target?.kind === 'zip');
    const fileSources = [...(body.file_sources ?? []), ...(body.sources ?? []).filter((s) => s.kind === 'file')];
    const httpSources = [...(body.http_sources ?? []), ...(body.sources ?? []).filter((s) => s.kind === 'http')];
    const other = (body.sources ?? []).find((s) => s.kind !== 'file' && s.kind !== 'http');
    if (other) throw new ConvertRefusal(422, [{ type: 'union_tag_invalid', loc: ['body', 'sources'], msg: `Signet converts sources of kind file and http, not ${JSON.stringify(String(other.kind)).slice(0, 40)}.` }]);
    if (fileSources.length + httpSources.length === 0) throw new ConvertRefusal(422, [{ type: 'missing', loc: ['body', 'sources'], msg: 'Send at least one source: file_sources (base64_string, filename) or sources.' }]);
    if (fileSources.length + httpSources.length > MAX_FILES) throw new ConvertRefusal(422, `Too many sources: at most ${MAX_FILES} in one request.`);
    if (httpSources.length > 0 && !ctx.fetchSources) {
      throw new ConvertRefusal(400, 'This Signet does not fetch http_sources: the operator has not turned it on (SIGNET_FETCH_SOURCES=on). Send the file itself instead, as file_sources with base64_string and filename, or to /v1/convert/file.');
    }
    const files: IncomingFile[] = fileSources.map((source, index) => {
      if (typeof source.base64_string !== 'string' || typeof source.filename !== 'string') {
        throw new ConvertRefusal(422, [{ type: 'missing', loc: ['body', 'file_sources', index], msg: 'A file source has base64_string and filename.' }]);
      }
      const bytes = Buffer.from(source.base64_string, 'base64');
      return { filename: source.filename, open: () => Readable.from([bytes]), tooLarge: () => bytes.length > ctx.tasks.uploadMaxBytes };
    });
    for (const [index, source] of httpSources.entries()) {
      if (typeof source.url !== 'string') throw new ConvertRefusal(422, [{ type: 'missing', loc: ['body', 'http_sources', index, 'url'], msg: 'Field required' }]);
      const fetched = await fetchSource(source.url, { maxBytes: ctx.tasks.uploadMaxBytes }, ctx.outbound);
      files.push({ filename: fetched.filename, open: () => Readable.from([fetched.bytes]), tooLarge: () => false });
    }
    return { files, options };
  }

  /** Answers a conversion whose documents have all ended: docling-serve's JSON, or its zip. */
  async function answerConversion(reply: FastifyReply, conversion: Conversion, states: Awaited<ReturnType<typeof documentStates>>): Promise<FastifyReply> {
    const answer = await conversionAnswer(ctx, states, conversion.answer);
    reply.header('cache-control', 'no-store');
    if (answer.kind === 'json') return reply.send(answer.body);
    return reply.type('application/zip').header('content-disposition', 'attachment; filename="converted_docs.zip"').send(Buffer.from(answer.bytes));
  }

  /** The synchronous routes: make the conversion, wait for its tasks (docling-serve's time limit: 504), answer. */
  async function convertAndWait(request: FastifyRequest, reply: FastifyReply, sub: string, input: { files: IncomingFile[]; options: ConvertOptions }): Promise<FastifyReply> {
    const conversion = await createConversion(ctx, { sub, locale: localeOf(request), files: input.files, ...input.options });
    // The connection's idle timeout would close a quiet wait: hold it open as long as the wait lasts.
    // (An injected request, in tests, has no real socket.)
    const socket = request.raw.socket as (typeof request.raw.socket & { setTimeout?: unknown }) | undefined;
    const holdable = typeof socket?.setTimeout === 'function';
    const idle = socket?.timeout ?? 0;
    if (holdable) socket!.setTimeout(maxSyncWaitMs + 30 * SECOND);
    // The response closing before it was written means the client went away: stop waiting (the tasks go on).
    const gone = new AbortController();
    const onClose = () => gone.abort();
    reply.raw.once('close', onClose);
    try {
      const states = await waitForConversion(ctx, conversion, { clock: ctx.tasks.clock, maxWaitMs: maxSyncWaitMs, pollMs, signal: gone.signal });
      if (!states) throw new ConvertRefusal(504, SYNC_TIMEOUT_DETAIL(Math.round(maxSyncWaitMs / SECOND)));
      return await answerConversion(reply, conversion, states);
    } finally {
      reply.raw.off('close', onClose);
      if (holdable && !socket!.destroyed) socket!.setTimeout(idle);
    }
  }

  async function submitted(reply: FastifyReply, conversion: Conversion): Promise<FastifyReply> {
    return reply.header('cache-control', 'no-store').send(taskStatus(conversion, await documentStates(ctx, conversion)));
  }

  // Source bodies carry base64 files: the body limit is one file's worth (base64 is 4/3 larger) and some.
  const sourceBodyLimit = Math.ceil((ctx.tasks.uploadMaxBytes * 4) / 3) + 1024 * 1024;

  for (const version of VERSIONS) {
    app.post(`/${version}/convert/file`, async (request, reply) => {
      const sub = await callerOf(request);
      const dir = await mkdtemp(path.join(tmpdir(), 'signet-convert-'));
      try {
        return await convertAndWait(request, reply, sub, await readMultipart(request, dir));
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });

    app.post(`/${version}/convert/file/async`, async (request, reply) => {
      const sub = await callerOf(request);
      const dir = await mkdtemp(path.join(tmpdir(), 'signet-convert-'));
      try {
        const input = await readMultipart(request, dir);
        return await submitted(reply, await createConversion(ctx, { sub, locale: localeOf(request), files: input.files, ...input.options }));
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });

    app.post(`/${version}/convert/source`, { bodyLimit: sourceBodyLimit }, async (request, reply) => {
      const sub = await callerOf(request);
      return convertAndWait(request, reply, sub, await readSources(request));
    });

    app.post(`/${version}/convert/source/async`, { bodyLimit: sourceBodyLimit }, async (request, reply) => {
      const sub = await callerOf(request);
      const input = await readSources(request);
      return submitted(reply, await createConversion(ctx, { sub, locale: localeOf(request), files: input.files, ...input.options }));
    });

    // `?wait=S`: docling-serve waits up to S seconds for the conversion to end before answering.
    app.get(`/${version}/status/poll/:task_id`, async (request, reply) => {
      const sub = await callerOf(request);
      const conversion = await findConversion(ctx, sub, (request.params as { task_id: string }).task_id);
      const waitRaw = Number((request.query as Record<string, unknown>).wait ?? 0);
      const waitMs = Number.isFinite(waitRaw) && waitRaw > 0 ? Math.min(waitRaw * SECOND, MAX_POLL_WAIT_MS) : 0;
      const states = waitMs > 0 ? ((await waitForConversion(ctx, conversion, { clock: ctx.tasks.clock, maxWaitMs: waitMs, pollMs })) ?? (await documentStates(ctx, conversion))) : await documentStates(ctx, conversion);
      return reply.header('cache-control', 'no-store').send(taskStatus(conversion, states));
    });

    app.get(`/${version}/result/:task_id`, async (request, reply) => {
      const sub = await callerOf(request);
      const conversion = await findConversion(ctx, sub, (request.params as { task_id: string }).task_id);
      const states = await documentStates(ctx, conversion);
      if (!allEnded(states)) throw new ConvertRefusal(404, RESULT_NOT_READY_DETAIL);
      return answerConversion(reply, conversion, states);
    });
  }
};
