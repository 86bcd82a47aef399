// A docling-serve conversion is a mapping onto docparse tasks (STYLE: "a compatibility API is a
// mapping, not a second engine"): each file becomes a docparse task of the caller — in their task list,
// run by the workers like every task, deleted with their account — and the conversion (its `task_id`)
// remembers which tasks it made and how to shape the answer. Nothing here reads a PDF.
import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { Clock } from '../config/clock.ts';
import { cancelTask, createTask, getTask, isTerminal, TaskError, type ParseOptions, type TaskContext, type TaskView } from '../tasks/tasks.ts';
import type { ConversionStatus, TaskStatusResponse } from './docling-serve.ts';
import type { AnswerOptions } from './options.ts';
import * as store from './conversions.store.ts';
import type { OutboundPolicy } from '../net/guarded-fetch.ts';

export type ConvertContext = {
  tasks: TaskContext;
  /** SIGNET_FETCH_SOURCES */
  fetchSources: boolean;
  /** the deployment's outbound policy for the guarded fetch (loopback only for tests) */
  outbound: OutboundPolicy;
};

/** One file of a conversion: the task made for it, or why none was (not a PDF, too large …). */
export type ConversionDocument = { filename: string; task_id: string } | { filename: string; error: string; skipped?: true };

export type Conversion = { id: string; sub: string; answer: AnswerOptions; documents: ConversionDocument[]; createdAt: number };

/** A file as the routes hand it over: its name as sent, and its bytes once. */
export type IncomingFile = { filename: string; open(): Readable; tooLarge(): boolean };

/** docling-serve answers an unknown (or another tenant's) task_id with 404 "Task not found." */
export class ConversionNotFound extends Error {
  override name = 'ConversionNotFound';
}

const SKIPPED = 'Not converted: an earlier file failed and abort_on_error is set.';

/** The name a client gave, without control characters (the answer's `filename` echoes it as docling-serve does). */
const sentName = (name: string) => name.replace(/[\u0000-\u001f\u007f]/g, '').slice(0, 500) || 'document.pdf';

/**
 * Makes the conversion: a docparse task per file, in order. A file that cannot become a task (not a
 * PDF, larger than the limit, unreadable) is a failed document of the conversion with its reason —
 * never a refusal of the whole request; with abort_on_error the files after it are skipped. Storage
 * or database trouble is thrown (the request fails as a whole).
 */
export async function createConversion(
  ctx: ConvertContext,
  input: { sub: string; locale: string; files: IncomingFile[]; parse: ParseOptions; answer: AnswerOptions },
): Promise<Conversion> {
  const documents: ConversionDocument[] = [];
  let aborted = false;
  for (const file of input.files) {
    const filename = sentName(file.filename);
    if (aborted) {
      documents.push({ filename, error: SKIPPED, skipped: true });
      continue;
    }
    try {
      const task = await createTask(ctx.tasks, {
        sub: input.sub,
        kind: 'docparse',
        locale: input.locale,
        upload: { fileName: filename, file: file.open(), tooLarge: file.tooLarge },
        options: async () => undefined,
        parseOptions: input.parse,
      });
      documents.push({ filename, task_id: task.id });
    } catch (error) {
      // 503 (storage unreachable) is the service's trouble, not the file's.
      if (!(error instanceof TaskError) || error.status >= 500) throw error;
      documents.push({ filename, error: error.message });
      aborted = input.answer.abortOnError;
    }
  }
  const conversion: Conversion = { id: randomUUID(), sub: input.sub, answer: input.answer, documents, createdAt: ctx.tasks.clock() };
  await store.insertConversion(ctx.tasks.db, { id: conversion.id, sub: conversion.sub, answer_options: JSON.stringify(conversion.answer), documents: JSON.stringify(documents), created_at: conversion.createdAt });
  return conversion;
}

/** The caller's conversion, or ConversionNotFound (another person's is indistinguishable from none). */
export async function findConversion(ctx: ConvertContext, sub: string, id: string): Promise<Conversion> {
  const row = /^[0-9a-f-]{36}$/.test(id) ? await store.findOwnedConversion(ctx.tasks.db, sub, id) : undefined;
  if (!row) throw new ConversionNotFound('Task not found.');
  return { id: row.id, sub: row.sub, answer: JSON.parse(row.answer_options) as AnswerOptions, documents: JSON.parse(row.documents) as ConversionDocument[], createdAt: Number(row.created_at) };
}

/** Each document with its task as it is now (undefined: refused at upload, or the task was deleted since). */
export type DocumentState = { document: ConversionDocument; task: TaskView | undefined };

/**
 * The conversion's documents with their tasks. With abort_on_error, a failed task cancels the ones
 * still waiting or running (docling-serve stops converting after the first failure).
 */
export async function documentStates(ctx: ConvertContext, conversion: Conversion): Promise<DocumentState[]> {
  const states = await Promise.all(
    conversion.documents.map(async (document) => ({
      document,
      task: 'task_id' in document ? await getTask(ctx.tasks, conversion.sub, 'docparse', document.task_id).catch((error: unknown) => (error instanceof TaskError && error.status === 404 ? undefined : Promise.reject(error))) : undefined,
    })),
  );
  if (conversion.answer.abortOnError && states.some((s) => s.task?.status === 'failed')) {
    for (const state of states) {
      if (state.task && !isTerminal(state.task.status)) state.task = await cancelTask(ctx.tasks, conversion.sub, 'docparse', state.task.id).catch(() => state.task);
    }
  }
  return states;
}

/** Whether every document has reached its end (finished, failed, cancelled, refused, deleted). */
export const allEnded = (states: DocumentState[]) => states.every((s) => s.task === undefined || isTerminal(s.task.status));

/** A document's docling status: its task's, mapped. */
export function documentStatus(state: DocumentState): ConversionStatus {
  if (!state.task) return 'skipped' in state.document ? 'skipped' : 'failure';
  switch (state.task.status) {
    case 'queued':
      return 'pending';
    case 'running':
      return 'started';
    case 'finished':
      return 'success';
    default:
      return 'failure';
  }
}

/** docling-serve's TaskStatusResponse for the conversion. */
export function taskStatus(conversion: Conversion, states: DocumentState[]): TaskStatusResponse {
  const statuses = states.map(documentStatus);
  const count = (...wanted: ConversionStatus[]) => statuses.filter((s) => wanted.includes(s)).length;
  const inFlight = count('pending', 'started');
  const succeeded = count('success');
  const status: ConversionStatus = inFlight > 0 ? (count('started') > 0 || inFlight < statuses.length ? 'started' : 'pending') : succeeded > 0 ? 'success' : 'failure';
  const failedTask = states.find((s) => s.task?.status === 'failed');
  return {
    task_id: conversion.id,
    task_type: 'convert',
    task_status: status,
    task_position: null,
    task_meta: { num_docs: statuses.length, num_processed: statuses.length - inFlight, num_succeeded: succeeded, num_partially_succeeded: 0, num_failed: statuses.length - inFlight - succeeded },
    error_message: status === 'failure' ? (failedTask?.task?.error ?? states.map((s) => ('error' in s.document ? s.document.error : undefined)).find((e) => e !== undefined) ?? null) : null,
  };
}

/**
 * Waits until every document has ended, looking every `pollMs`, for at most `maxWaitMs` by the
 * injected clock (docling-serve's DOCLING_SERVE_MAX_SYNC_WAIT). Returns the states, or undefined when
 * the time ran out or `signal` ended the wait (the client went away); the tasks go on either way.
 */
export async function waitForConversion(ctx: ConvertContext, conversion: Conversion, wait: { clock: Clock; maxWaitMs: number; pollMs: number; signal?: AbortSignal }): Promise<DocumentState[] | undefined> {
  const started = wait.clock();
  for (;;) {
    const states = await documentStates(ctx, conversion);
    if (allEnded(states)) return states;
    if (wait.clock() - started >= wait.maxWaitMs || wait.signal?.aborted) return undefined;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, wait.pollMs);
      wait.signal?.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve();
      }, { once: true });
    });
  }
}
