// The worker's side of the reader process (reader-process.ts): start it with a heap limit, ask for
// one page at a time, and stop it when a page takes too long or the process grows past its memory
// limit. A hostile file then fails its task with a message a person understands, the worker keeps
// running, and the memory goes back to the system with the process (issue 17, item 9).
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { seconds } from '../limited.ts';
import { NotAPdfError, PageUnreadableError, UnreadablePdfError } from './errors.ts';
import type { ReaderError, ReaderRequest } from './reader-process.ts';
import type { OutlineEntry } from '../layout/structure-tree.ts';
import type { ReadPage } from './reader.ts';
import type { RenderedImage, RenderRequest } from './render.ts';

export type ReaderLimits = {
  /** Resident memory the reader process may reach (bytes); past it the process is killed. PDFium's heap is capped at the same size. */
  memoryBytes: number;
  /** Time one page may take. */
  pageTimeoutMs: number;
  /** Time starting the process and opening the file may take (default 30 s). */
  openTimeoutMs?: number;
};

export const DEFAULT_READER_LIMITS: ReaderLimits = { memoryBytes: 1024 * 2 ** 20, pageTimeoutMs: 30_000 };

const SCRIPT = fileURLToPath(new URL('./reader-process.ts', import.meta.url));
const WATCH_MS = 50;
const PAGE_SIZE = 4096;

/** Resident set size of a process in bytes, from /proc (Linux); undefined when it cannot be read. */
async function residentBytes(pid: number): Promise<number | undefined> {
  try {
    const statm = await readFile(`/proc/${pid}/statm`, 'utf8');
    const pages = Number(statm.split(' ')[1]);
    return Number.isFinite(pages) ? pages * PAGE_SIZE : undefined;
  } catch {
    return undefined;
  }
}

function residentBytesNow(pid: number): number | undefined {
  try {
    const pages = Number(readFileSync(`/proc/${pid}/statm`, 'utf8').split(' ')[1]);
    return Number.isFinite(pages) ? pages * PAGE_SIZE : undefined;
  } catch {
    return undefined;
  }
}

const MB = (bytes: number) => Math.round(bytes / 2 ** 20);

/** The heap limit makes V8 give up early on a runaway JavaScript heap; the RSS watch covers buffers outside the heap. */
const heapMbFor = (limits: ReaderLimits) => Math.max(64, Math.floor(MB(limits.memoryBytes) * 0.75));

type Booting = { child: ChildProcess; heapMb: number; ready: Promise<boolean> };

/**
 * The reader's environment: the parent's, with Node's compile cache in the same place bin/signet.js
 * keeps it (unless the operator chose one or turned it off), so a reader after the first neither
 * loads the TypeScript stripper (~17 MB resident) nor compiles its modules again.
 */
function readerEnvironment(): NodeJS.ProcessEnv {
  const env = process.env;
  if (env.NODE_COMPILE_CACHE !== undefined || env.NODE_DISABLE_COMPILE_CACHE !== undefined) return env;
  return { ...env, NODE_COMPILE_CACHE: fileURLToPath(new URL('../../../node_modules/.cache/signet-compile/', import.meta.url)) };
}

/** Every reader process started and not yet exited: stopReaders() waits for all of them. */
const living = new Set<ChildProcess>();

/**
 * Starts a reader process; `ready` resolves true once PDFium is loaded in it, false if it died first.
 * PDFium's WebAssembly heap is capped at the memory limit (issue 31: "a hard cap per document"); V8's
 * own heap (the page model being built) at three quarters of it.
 */
function boot(heapMb: number): Booting {
  const pdfiumCap = Math.round((heapMb / 0.75) * 2 ** 20);
  const child = fork(SCRIPT, [String(pdfiumCap)], { execArgv: [`--max-old-space-size=${heapMb}`], serialization: 'advanced', stdio: ['ignore', 'ignore', 'ignore', 'ipc'], env: readerEnvironment() });
  living.add(child);
  child.once('exit', () => living.delete(child));
  const ready = new Promise<boolean>((resolve) => {
    child.once('message', (message: { ready?: boolean }) => resolve(message.ready === true));
    child.once('exit', () => resolve(false));
    child.once('error', () => resolve(false));
  });
  return { child, heapMb, ready };
}

/**
 * Idle reader processes. Starting Node and loading PDFium costs ≈ 100 ms (pdf.js took ≈ 300 ms), more than reading a
 * short document (issue 17, item 8), so a reader that ended its document normally and stayed
 * small is kept for the next one; a reader that failed, was stopped or grew is killed instead
 * (its memory goes back to the system) and a fresh one is started. Up to SPARES_KEPT are kept: a
 * serve node inspecting several uploads at once (or a worker running translations side by side)
 * then finds readers waiting instead of starting a process for each — measured (issue 21): six
 * uploads at once on a busy two-core machine took 9 s when only one reader was kept. Idle readers
 * never keep the process alive.
 */
const spares: Booting[] = [];
const SPARES_KEPT = 3;

const alive = (booting: Booting) => booting.child.exitCode === null && booting.child.signalCode === null;

/**
 * At most this many readers in use at once when set (`signet parse` sets it to its --threads): a file
 * waits for a reader another file gave back instead of starting one more process. Unset (a worker,
 * a server), every document gets its reader at once.
 */
let inUseLimit = Infinity;
let inUse = 0;
const waiting: Array<() => void> = [];

/** Caps the readers in use at once (see inUseLimit). */
export function limitReadersInUse(limit: number): void {
  inUseLimit = Math.max(1, limit);
}

/** How many more readers may be taken now without waiting. */
export const readersFree = () => Math.max(0, inUseLimit - inUse);

/** A reader was given back (kept or killed): the next file waiting for one takes it. */
function given(): void {
  inUse -= 1;
  waiting.shift()?.();
}

async function take(heapMb: number): Promise<Booting> {
  while (inUse >= inUseLimit) await new Promise<void>((resolve) => waiting.push(resolve));
  inUse += 1;
  let taken: Booting | undefined;
  while (!taken && spares.length > 0) {
    const candidate = spares.pop()!;
    if (candidate.heapMb === heapMb && alive(candidate)) taken = candidate;
    else candidate.child.kill('SIGKILL');
  }
  taken ??= boot(heapMb);
  taken.child.ref();
  (taken.child.channel as { ref?: () => void } | undefined)?.ref?.();
  return taken;
}

/** A reader that ended its document below this resident size is reused for the next document. */
const REUSE_BELOW_BYTES = 256 * 2 ** 20;

/** Keeps `idle` (or a fresh process) among the spares, not holding the process's event loop open. */
function keepSpare(idle: Booting): void {
  if (spares.length >= SPARES_KEPT) spares.shift()?.child.kill('SIGKILL');
  spares.push(idle);
  idle.child.unref();
  (idle.child.channel as { unref?: () => void } | undefined)?.unref?.();
}

/** Starts an idle reader ahead of the first document (the worker does at start), unless one is there. */
export function warmReader(limits: ReaderLimits = DEFAULT_READER_LIMITS): void {
  if (spares.length === 0) keepSpare(boot(heapMbFor(limits)));
}

/**
 * Stops the idle readers (benchmarks measure a cold start without them; `signet parse` before it
 * exits). Resolves once they have exited and been reaped, so their CPU time is counted in this
 * process's children's time (what `time` and the benchmark report), not lost with an orphan.
 */
export async function killSpareReader(): Promise<void> {
  for (const idle of spares.splice(0)) idle.child.kill('SIGKILL');
  // Readers killed earlier (replaced, or past a limit) are waited for too.
  const stopping = [...living].map(
    (child) =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        // An idle reader is unref'd; waiting for its exit must keep this process alive.
        child.ref();
      }),
  );
  await Promise.all(stopping);
}

/** The idle readers' process ids (tests tell them from a reader that was stopped). */
export const spareReaderPids = (): number[] => spares.filter(alive).flatMap((idle) => (idle.child.pid === undefined ? [] : [idle.child.pid]));

const outOfMemory = (what: string, limits: ReaderLimits) =>
  `Reading the PDF stopped: ${what} needed more than ${MB(limits.memoryBytes)} MB of memory (a compressed stream that inflates to an enormous size, for example); simplify or re-export the file, then upload it again.`;

/** One open PDF in its own process. Always close() it (a finally block). */
export class PdfReader {
  private readonly child: ChildProcess;
  private readonly limits: ReaderLimits;
  private readonly heapMb: number;
  readonly pages: number;
  /** The document's bookmarks (empty when it has none), for heading levels (layout/outline-headings.ts). */
  outline: OutlineEntry[] = [];
  /** The largest resident size the reader process was seen at (bytes), for the memory benchmark and test. */
  peakRss = 0;
  private failed = false;
  private closed = false;
  private constructor(child: ChildProcess, limits: ReaderLimits, pages: number) {
    this.child = child;
    this.limits = limits;
    this.pages = pages;
    this.heapMb = heapMbFor(limits);
  }

  /** Starts a reader process on the PDF at `path`; throws NotAPdfError / UnreadablePdfError for bad files. */
  static async open(path: string, limits: ReaderLimits = DEFAULT_READER_LIMITS, signal?: AbortSignal, password?: string): Promise<PdfReader> {
    const heapMb = heapMbFor(limits);
    const { child, ready: booted } = await take(heapMb);
    const reader = new PdfReader(child, limits, 0);
    try {
      if (!(await booted)) throw new UnreadablePdfError('The PDF reader could not be started; try again, or ask the operator to check the worker.');
      const opened = await reader.ask<{ opened: number; outline?: OutlineEntry[] }>(password === undefined ? { open: path } : { open: path, password }, 'opening the file', signal, limits.openTimeoutMs ?? 30_000);
      const ready = new PdfReader(child, limits, opened.opened);
      ready.outline = opened.outline ?? [];
      ready.peakRss = reader.peakRss;
      return ready;
    } catch (error) {
      reader.close();
      throw error;
    }
  }

  /** Page `pageNo` (from 1) as runs, rules and image boxes. */
  async page(pageNo: number, signal?: AbortSignal): Promise<ReadPage> {
    const { content } = await this.ask<{ content: ReadPage }>({ page: pageNo }, `reading page ${pageNo}`, signal);
    return content;
  }

  /** Draws page `request.pageNo` (or a region of it) as a PGM or PNG, under the same time and memory limits as reading. */
  async render(request: RenderRequest, signal?: AbortSignal): Promise<RenderedImage> {
    const { image } = await this.ask<{ image: RenderedImage }>({ render: request }, `drawing page ${request.pageNo}`, signal);
    return image;
  }

  /**
   * Ends the document. A healthy, small reader is kept for the next document; any other is killed
   * (its memory goes back to the system) and a fresh idle one is started when none is left.
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    given();
    const running = this.child.exitCode === null && this.child.signalCode === null && this.child.connected;
    if (running && !this.failed && (residentBytesNow(this.child.pid ?? 0) ?? Infinity) < REUSE_BELOW_BYTES) {
      this.child.send({ close: true });
      keepSpare({ child: this.child, heapMb: this.heapMb, ready: Promise.resolve(true) });
      return;
    }
    if (running) this.child.kill('SIGKILL');
    if (spares.length === 0) keepSpare(boot(this.heapMb));
  }

  private ask<T>(request: ReaderRequest, what: string, signal?: AbortSignal, timeoutMs = this.limits.pageTimeoutMs): Promise<T> {
    const { child, limits } = this;
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      // `answered`: the reader itself reported the error, so it is sound and may serve the next document.
      const finish = (error: unknown, value?: T, answered = false) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        clearInterval(watch);
        child.off('message', onMessage);
        child.off('exit', onExit);
        signal?.removeEventListener('abort', onAbort);
        if (error instanceof PageUnreadableError) {
          // PDFium could not load this page and the reader answered: the process is sound and reads the next page.
          reject(error);
          return;
        }
        if (error !== undefined) {
          if (!answered) this.failed = true;
          this.close();
          reject(error);
          return;
        }
        // A page read faster than the watch interval is measured here, so peakRss sees every page.
        this.peakRss = Math.max(this.peakRss, residentBytesNow(child.pid ?? 0) ?? 0);
        resolve(value as T);
      };
      const onMessage = (message: { error?: ReaderError } & Record<string, unknown>) => {
        if (!message.error) return finish(undefined, message as T);
        const { kind, message: text } = message.error;
        if (kind === 'memory') finish(new UnreadablePdfError(outOfMemory(what, limits)));
        else if (kind === 'not_a_pdf') finish(new NotAPdfError(text), undefined, true);
        else if (kind === 'unreadable') finish(new UnreadablePdfError(text), undefined, true);
        else if ('page' in request) finish(new PageUnreadableError(`The PDF could not be read (${what}: ${text}); re-export or repair it, then upload it again.`, text));
        else finish(new UnreadablePdfError(`The PDF could not be read (${what}: ${text}); re-export or repair it, then upload it again.`));
      };
      const onExit = (code: number | null, sig: string | null) =>
        finish(new UnreadablePdfError(`The PDF reader stopped while ${what} (${sig ?? `exit code ${String(code)}`}), most likely because the file needs more than ${MB(limits.memoryBytes)} MB of memory; simplify or re-export the PDF, then upload it again.`));
      const onAbort = () => finish(signal?.reason ?? new Error('aborted'));
      const timer = setTimeout(
        () => finish(new UnreadablePdfError(`Reading the PDF stopped: ${what} took longer than ${seconds(timeoutMs)} s (the file may be damaged or built to be slow); simplify or re-export it, then upload it again.`)),
        timeoutMs,
      );
      const watch = setInterval(() => {
        void residentBytes(child.pid ?? 0).then((rss) => {
          if (rss !== undefined) this.peakRss = Math.max(this.peakRss, rss);
          if (rss !== undefined && rss > limits.memoryBytes) {
            finish(new UnreadablePdfError(outOfMemory(what, limits)));
          }
        });
      }, WATCH_MS);
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      child.on('message', onMessage);
      child.on('exit', onExit);
      child.send(request);
    });
  }
}
