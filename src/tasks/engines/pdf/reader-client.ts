// The worker's side of the reader process (reader-process.ts): start it with a heap limit, ask for
// one page at a time, and stop it when a page takes too long or the process grows past its memory
// limit. A hostile file then fails its task with a message a person understands, the worker keeps
// running, and the memory goes back to the system with the process (issue 17, item 9).
import { fork, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { PageContent } from '../layout.ts';
import { seconds } from '../limited.ts';
import { NotAPdfError, UnreadablePdfError } from './errors.ts';
import type { ReaderError, ReaderRequest } from './reader-process.ts';

export type ReaderLimits = {
  /** Resident memory the reader process may reach (bytes); past it the process is killed. */
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

const MB = (bytes: number) => Math.round(bytes / 2 ** 20);

/** One open PDF in its own process. Always close() it (a finally block). */
export class PdfReader {
  private readonly child: ChildProcess;
  private readonly limits: ReaderLimits;
  readonly pages: number;
  /** The largest resident size the reader process was seen at (bytes), for the memory benchmark and test. */
  peakRss = 0;
  private constructor(child: ChildProcess, limits: ReaderLimits, pages: number) {
    this.child = child;
    this.limits = limits;
    this.pages = pages;
  }

  /** Starts a reader process on the PDF at `path`; throws NotAPdfError / UnreadablePdfError for bad files. */
  static async open(path: string, limits: ReaderLimits = DEFAULT_READER_LIMITS, signal?: AbortSignal): Promise<PdfReader> {
    // The heap limit makes V8 give up early on a runaway JavaScript heap; the RSS watch below covers
    // buffers outside the heap (an inflated stream lives in an ArrayBuffer).
    const heapMb = Math.max(64, Math.floor(MB(limits.memoryBytes) * 0.75));
    const child = fork(SCRIPT, [], { execArgv: [`--max-old-space-size=${heapMb}`], serialization: 'advanced', stdio: ['ignore', 'ignore', 'ignore', 'ipc'] });
    const reader = new PdfReader(child, limits, 0);
    try {
      const opened = await reader.ask<{ opened: number }>({ open: path }, 'opening the file', signal, limits.openTimeoutMs ?? 30_000);
      const ready = new PdfReader(child, limits, opened.opened);
      ready.peakRss = reader.peakRss;
      return ready;
    } catch (error) {
      reader.close();
      throw error;
    }
  }

  /** Page `pageNo` (from 1) as runs, rules and image boxes. */
  async page(pageNo: number, signal?: AbortSignal): Promise<PageContent> {
    const { content } = await this.ask<{ content: PageContent }>({ page: pageNo }, `reading page ${pageNo}`, signal);
    return content;
  }

  close(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }

  private ask<T>(request: ReaderRequest, what: string, signal?: AbortSignal, timeoutMs = this.limits.pageTimeoutMs): Promise<T> {
    const { child, limits } = this;
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      const finish = (error: unknown, value?: T) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        clearInterval(watch);
        child.off('message', onMessage);
        child.off('exit', onExit);
        signal?.removeEventListener('abort', onAbort);
        if (error !== undefined) {
          this.close();
          reject(error);
        } else resolve(value as T);
      };
      const onMessage = (message: { error?: ReaderError } & Record<string, unknown>) => {
        if (!message.error) return finish(undefined, message as T);
        const { kind, message: text } = message.error;
        if (kind === 'not_a_pdf') finish(new NotAPdfError(text));
        else if (kind === 'unreadable') finish(new UnreadablePdfError(text));
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
            finish(new UnreadablePdfError(`Reading the PDF stopped: ${what} needed more than ${MB(limits.memoryBytes)} MB of memory (a compressed stream that inflates to an enormous size, for example); simplify or re-export the file, then upload it again.`));
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
