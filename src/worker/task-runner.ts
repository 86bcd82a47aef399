// The task side of `signet worker`: claim → run under a lease with a heartbeat → record the outcome.
// A lease is how several workers on several hosts share one queue: a worker that dies stops renewing
// its lease, the lease expires, and the task is claimed again (or failed after its last attempt) —
// never stuck in `running`. The heartbeat is also how a cancel reaches the running work.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../config/clock.ts';
import type { Db, Dialect } from '../db/database.ts';
import { isDatabaseUnavailable } from '../db/errors.ts';
import type { ObjectStore } from '../storage/object-store.ts';
import { StorageUnavailableError } from '../storage/object-store.ts';
import type { TaskKind } from '../db/schema.ts';
import { UnreadablePdfError } from '../documents/pdf/errors.ts';
import { warmReader } from '../documents/pdf/reader-client.ts';
import { TranslationError, UnsupportedLanguagePairError } from '../documents/translate/translator.ts';
import type { Translator } from '../documents/translate/translator.ts';
import type { OcrEngine } from '../documents/ocr/ocr.ts';
import { discardResults, runTask, TaskFailure } from '../tasks/run-task.ts';
import { recordTaskNotification } from '../tasks/tasks.ts';
import * as store from '../tasks/tasks.store.ts';
import { startPollLoop } from './loop.ts';

export type TaskRunnerDeps = {
  db: Db;
  dialect: Dialect;
  clock: Clock;
  objects: ObjectStore;
  translator: Translator | undefined;
  logger: Logger;
  /** The OCR engine for pages without text (default: tesseract when installed); null for none. */
  ocr?: OcrEngine | null;
};

export type TaskRunnerOptions = {
  /** the runner's id, the lease_owner of the tasks it claims (the worker's heartbeat id); random when absent */
  owner?: string;
  kinds?: TaskKind[];
  /** how long a claim holds without a heartbeat */
  leaseMs?: number;
  heartbeatMs?: number;
  /** how often an idle worker looks for work */
  pollMs?: number;
  /** claims per task, a lease that expired counting as one */
  maxAttempts?: number;
  /**
   * Tasks this runner works on at once (SIGNET_WORKER_CONCURRENCY, default 1). The first slot takes
   * every kind; the others take only translation tasks, whose time is mostly spent waiting on the
   * translation engine (an HTTP service) — parsing is CPU-bound, and a second parse on the same core
   * would only make both slower.
   */
  concurrency?: number;
  /** Reader processes one document's pages are read by side by side (SIGNET_PARSE_THREADS). */
  parseThreads?: number;
};

/** Kinds whose engine waits on I/O, which the extra slots of a worker may run beside the first. */
const WAITING_KINDS: readonly TaskKind[] = ['translate'];

const ABANDONED = 'The worker running this task stopped repeatedly before it finished. Try again with a smaller file, or ask the operator to check the worker logs.';
const INTERNAL = 'The task failed because of an internal error. Try again; if it fails again, ask the operator (the worker log has the details).';

/** What the owner is told when the run fails; undefined means "give it back and retry later". */
function failureMessage(error: unknown): string | undefined {
  if (error instanceof TaskFailure || error instanceof UnreadablePdfError || error instanceof UnsupportedLanguagePairError) return error.message;
  if (error instanceof TranslationError) return error.retryable ? undefined : error.message;
  if (error instanceof StorageUnavailableError || isDatabaseUnavailable(error)) return undefined;
  return INTERNAL;
}

export function startTaskRunner(deps: TaskRunnerDeps, options: TaskRunnerOptions = {}): { stop(): Promise<void> } {
  const owner = options.owner ?? randomUUID();
  const kinds = options.kinds ?? ['translate', 'docparse'];
  const leaseMs = options.leaseMs ?? 30_000;
  const heartbeatMs = options.heartbeatMs ?? Math.min(2_000, leaseMs / 3);
  const pollMs = options.pollMs ?? 1_000;
  const maxAttempts = options.maxAttempts ?? 3;
  const log = deps.logger.child({ worker: owner });
  // The first document then finds pdf.js loaded in an idle reader process (≈ 300 ms saved).
  warmReader();
  const running = new Set<AbortController>();
  let stopping = false;

  async function failAbandoned(): Promise<void> {
    const now = deps.clock();
    const failed = await store.failAbandonedTasks(deps.db, { now, maxAttempts, error: ABANDONED });
    for (const row of failed) {
      await deps.db.transaction().execute((trx) => recordTaskNotification(trx, deps.dialect, now, row));
      log.warn({ task: row.id }, 'task failed: its worker stopped on every attempt');
    }
  }

  async function execute(task: store.TaskRow, claimMs: number): Promise<void> {
    const controller = new AbortController();
    running.add(controller);
    let progress = { done: 0, total: task.source_pages };
    const beat = async () => {
      const held = await store.heartbeat(deps.db, { id: task.id, owner, now: deps.clock(), leaseMs, progress }).catch(() => true);
      if (!held && !controller.signal.aborted) controller.abort(new Error('the task was cancelled or taken over'));
    };
    const timer = setInterval(() => void beat(), heartbeatMs);
    log.info({ task: task.id, kind: task.kind, attempt: task.attempts }, 'task started');
    try {
      const { files, notes, stages, sourceLang } = await runTask(task, deps, {
        signal: controller.signal,
        ...(options.parseThreads === undefined ? {} : { threads: options.parseThreads }),
        onProgress: async (done, total) => {
          progress = { done, total };
          await beat();
        },
      });
      const recording = performance.now();
      const now = deps.clock();
      const finished = await deps.db.transaction().execute(async (trx) => {
        const ok = await store.endRun(trx, { id: task.id, owner, now, status: 'finished', files: JSON.stringify(files), notes: notes.length > 0 ? JSON.stringify(notes) : null, progress: { done: progress.total, total: progress.total }, ...(sourceLang !== undefined && task.source_lang === null ? { sourceLang } : {}) });
        if (ok) await recordTaskNotification(trx, deps.dialect, now, { ...task, status: 'finished', files: JSON.stringify(files) });
        return ok;
      });
      if (!finished) await discardResults(deps.objects, task.id);
      // Where the task's time went, per stage (npm run bench:tasks reads these).
      const recordMs = Math.round((performance.now() - recording) * 10) / 10;
      log.info({ task: task.id, outcome: finished ? 'finished' : 'cancelled', stages: { claimMs, ...stages, recordMs } }, 'task ended');
    } catch (error) {
      await settleFailure(task, controller, error);
    } finally {
      clearInterval(timer);
      running.delete(controller);
    }
  }

  async function settleFailure(task: store.TaskRow, controller: AbortController, error: unknown): Promise<void> {
    const now = deps.clock();
    if (controller.signal.aborted) {
      // Cancelled, taken over, or this worker is stopping: nothing of this run is kept.
      await discardResults(deps.objects, task.id).catch(() => {});
      if (stopping) await store.giveBack(deps.db, { id: task.id, owner, now }).catch(() => {});
      log.info({ task: task.id, reason: stopping ? 'worker stopping: given back' : 'cancelled' }, 'task stopped');
      return;
    }
    const message = failureMessage(error);
    if (message === INTERNAL) log.error({ err: error, task: task.id }, 'task failed');
    else log.warn({ task: task.id, error: error instanceof Error ? error.message : String(error) }, 'task run failed');
    await discardResults(deps.objects, task.id).catch(() => {});
    if (message === undefined && task.attempts < maxAttempts) {
      // Back off 10 s, 40 s … before the next attempt, so an outage is not hammered.
      await store.endRun(deps.db, { id: task.id, owner, now, status: 'queued', retryAt: now + 10_000 * 4 ** (task.attempts - 1) });
      return;
    }
    const text = message ?? 'A service the task needs (file storage or translation) stayed unreachable. Try again later.';
    await deps.db.transaction().execute(async (trx) => {
      if (await store.endRun(trx, { id: task.id, owner, now, status: 'failed', error: text })) {
        await recordTaskNotification(trx, deps.dialect, now, { ...task, status: 'failed', error: text });
      }
    });
  }

  /** One slot's loop; the first also fails abandoned tasks (one sweep per worker is enough). */
  function slot(slotKinds: TaskKind[], sweeps: boolean) {
    return startPollLoop({
      pollMs,
      log,
      errorLine: 'worker loop error; retrying',
      step: async () => {
        if (sweeps) await failAbandoned();
        const claiming = performance.now();
        const task = await store.claimTask(deps.db, deps.dialect, { owner, now: deps.clock(), leaseMs, maxAttempts, kinds: slotKinds });
        if (!task) return false;
        await execute(task, Math.round((performance.now() - claiming) * 10) / 10);
        return true;
      },
    });
  }

  const concurrency = Math.max(1, Math.floor(options.concurrency ?? 1));
  const waitingKinds = kinds.filter((kind) => WAITING_KINDS.includes(kind));
  const loops = [slot(kinds, true)];
  if (waitingKinds.length > 0) for (let i = 1; i < concurrency; i += 1) loops.push(slot(waitingKinds, false));
  if (loops.length > 1) log.info({ slots: loops.length, extraSlotKinds: waitingKinds }, 'tasks run side by side');

  return {
    async stop() {
      stopping = true;
      for (const controller of running) controller.abort(new Error('the worker is stopping'));
      await Promise.all(loops.map((loop) => loop.stop()));
    },
  };
}
