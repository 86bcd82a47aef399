// Pages in parallel (issue 31, item 4): a long document is read by up to `threads` reader processes
// at once, each with the file open and each holding one page at a time, so the wall time falls with
// the machine's cores while one page's memory stays bounded by its reader's limits. Pages are
// handed out in turn (page n to reader (n − 1) mod k) and read ahead by at most one page per reader;
// the caller still takes them in order. A short document (fewer than PAGES_PER_EXTRA_READER pages per
// extra reader) is read by one reader: starting a process costs more than it saves there.
import type { OutlineEntry } from '../layout/structure-tree.ts';
import { PdfReader, readersFree, type ReaderLimits } from './reader-client.ts';
import type { ReadPage } from './reader.ts';
import type { RenderedImage, RenderRequest } from './render.ts';

/** Each extra reader must have at least this many pages to read. */
const PAGES_PER_EXTRA_READER = 4;

export type PoolOptions = { limits: ReaderLimits; threads: number; signal?: AbortSignal; password?: string };

/** How many readers a document of `pages` pages gets with `threads` allowed. */
export const readersFor = (pages: number, threads: number) => Math.max(1, Math.min(threads, Math.ceil(pages / PAGES_PER_EXTRA_READER)));

export class ReaderPool {
  readonly pages: number;
  private readonly readers: PdfReader[];
  private readonly ahead = new Map<number, Promise<ReadPage>>();
  private readonly signal: AbortSignal | undefined;

  private constructor(readers: PdfReader[], signal: AbortSignal | undefined) {
    this.readers = readers;
    this.pages = readers[0]?.pages ?? 0;
    this.signal = signal;
  }

  /** Opens the file in a first reader (which reports a bad file), then in the others a long document gets. */
  /** The document's bookmarks, as the first reader read them. */
  get outline(): OutlineEntry[] {
    return this.readers[0]?.outline ?? [];
  }

  static async open(file: string, options: PoolOptions): Promise<ReaderPool> {
    const first = await PdfReader.open(file, options.limits, options.signal, options.password);
    // Extra readers only where they need not wait for one (a capped batch keeps its readers for other files).
    const extra = Math.min(readersFor(first.pages, options.threads) - 1, readersFree());
    const opened = await Promise.allSettled(Array.from({ length: extra }, () => PdfReader.open(file, options.limits, options.signal, options.password)));
    const readers = [first, ...opened.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []))];
    const failed = opened.find((o): o is PromiseRejectedResult => o.status === 'rejected');
    if (failed) {
      for (const reader of readers) reader.close();
      throw failed.reason;
    }
    return new ReaderPool(readers, options.signal);
  }

  private readerOf(pageNo: number): PdfReader {
    return this.readers[(pageNo - 1) % this.readers.length] as PdfReader;
  }

  /** The largest resident size any of the readers was seen at (bytes). */
  get peakRss(): number {
    return Math.max(0, ...this.readers.map((r) => r.peakRss));
  }

  /**
   * Page `pageNo`, asking the readers for the pages after it meanwhile (one each). Pages must be
   * taken in order: a reader answers one request at a time.
   */
  async page(pageNo: number, signal = this.signal): Promise<ReadPage> {
    for (let next = pageNo; next < pageNo + this.readers.length && next <= this.pages; next += 1) {
      if (this.ahead.has(next)) continue;
      const reading = this.readerOf(next).page(next, signal);
      // Read ahead: a failure is seen when the page is taken, not as an unhandled rejection now.
      reading.catch(() => {});
      this.ahead.set(next, reading);
    }
    const reading = this.ahead.get(pageNo) ?? this.readerOf(pageNo).page(pageNo, signal);
    this.ahead.delete(pageNo);
    return reading;
  }

  /** Draws page `request.pageNo` (or a region) in the reader that read it, after that page was taken. */
  render(request: RenderRequest, signal = this.signal): Promise<RenderedImage> {
    return this.readerOf(request.pageNo).render(request, signal);
  }

  close(): void {
    for (const reader of this.readers) reader.close();
  }
}
