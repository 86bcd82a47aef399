// The reading pipeline for one PDF, page by page: reader processes (PDFium) give runs, rules and
// image boxes; a page without a usable text layer is drawn by its reader and read by OCR; layout
// makes blocks; pictures are drawn and cut out as PNGs. Pages are read by a few readers at once
// (`threads`, issue 31 item 4), each holding one page's raw content at a time (issue 17, item 8).
import { PICTURE_DPI } from '../document.ts';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { BoundingBox, OnProgress, Page, ParsedDocument, Picture } from '../document.ts';
import type { PageContent } from '../layout/geometry.ts';
import { labelFields } from '../layout/form-fields.ts';
import { layoutPage } from '../layout/page.ts';
import { headingsFromOutline } from '../layout/outline-headings.ts';
import { labelDocument } from '../layout/roles.ts';
import type { Limits } from '../limited.ts';
import type { OcrEngine } from '../ocr/ocr.ts';
import { TesseractEngine } from '../ocr/tesseract.ts';
import { PageUnreadableError } from './errors.ts';
import { ocrPage, type OcrLanguages, type OcrMode } from './ocr-page.ts';
import { DEFAULT_READER_LIMITS, PdfReader, type ReaderLimits } from './reader-client.ts';
import { displayedBox } from './turn.ts';
import type { ReadPage } from './reader.ts';
import { ReaderPool } from './reader-pool.ts';

export type EngineLimits = {
  reader: ReaderLimits;
  /** External programs: each run (a render, a picture, an OCR pass), and an OCR'd page's render and passes together. */
  program: Limits;
};

export const DEFAULT_LIMITS: EngineLimits = {
  reader: DEFAULT_READER_LIMITS,
  program: { timeoutMs: 90_000, memoryBytes: 1536 * 2 ** 20 },
};

export type ExtractOptions = {
  signal?: AbortSignal;
  onProgress?: OnProgress;
  /** Receives each picture's PNG under its result name (`pictures/page-<n>-<k>.png`); without it no pictures are cut. */
  onPicture?: (name: string, png: Uint8Array) => Promise<void>;
  /** The OCR engine for pages without text; null for none. Default: tesseract. */
  ocr?: OcrEngine | null;
  ocrLanguages?: OcrLanguages;
  /** Which pages are read by OCR (default 'auto': pages without a usable text layer). */
  ocrMode?: OcrMode;
  limits?: Partial<EngineLimits>;
  /** Filled in when given: the reader process's peak resident size (bytes), sampled every 50 ms. */
  stats?: { readerPeakRss: number };
  /** How many reader processes read a long document's pages side by side (SIGNET_PARSE_THREADS; default 1). */
  threads?: number;
  /** The password of an encrypted PDF. */
  password?: string;
  /** Only these pages (1-based, inclusive; clamped to the document). Default: every page. */
  pageRange?: [number, number];
};


/** Characters that carry text: not spaces, not U+FFFD or private-use glyph codes of fonts without a Unicode map. */
const usableChars = (content: PageContent) => content.runs.reduce((n, run) => n + run.text.replace(/[\s\uFFFD\uE000-\uF8FF\u0000-\u001F]/gu, '').length, 0);
const area = (b: BoundingBox) => Math.max(0, b.r - b.l) * Math.max(0, b.t - b.b);

/**
 * A page has no usable text layer when it carries fewer than 10 readable characters while images
 * cover at least a third of it — a scan, or text drawn as an image.
 */
export function needsOcr(content: PageContent): boolean {
  const covered = (content.images ?? []).reduce((sum, image) => sum + area(image.bbox), 0);
  return usableChars(content) < 10 && covered >= (content.width * content.height) / 3;
}

/** Writes the bytes to a private temporary file for the reader process and poppler; removed afterwards. */
async function withPdfFile<T>(data: Uint8Array, use: (file: string, dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(path.join(tmpdir(), 'signet-pdf-'));
  try {
    const file = path.join(dir, 'source.pdf');
    await writeFile(file, data, { mode: 0o600 });
    return await use(file, dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Checks that the upload is a PDF the reader can open; returns its page count. Runs in a reader process. */
export async function inspectPdf(data: Uint8Array, limits: ReaderLimits = DEFAULT_READER_LIMITS): Promise<{ pages: number }> {
  return withPdfFile(data, async (file) => {
    const reader = await PdfReader.open(file, limits);
    reader.close();
    return { pages: reader.pages };
  });
}

/** Extracts every page's layout. Honours signal, calls onProgress(done, total) after each page. */
export async function extractDocument(data: Uint8Array, options: ExtractOptions = {}): Promise<ParsedDocument> {
  const { signal, onProgress } = options;
  const limits = { ...DEFAULT_LIMITS, ...options.limits };
  signal?.throwIfAborted();
  return withPdfFile(data, async (file, dir) => {
    const reader = await ReaderPool.open(file, { limits: limits.reader, threads: options.threads ?? 1, ...(signal ? { signal } : {}), ...(options.password === undefined ? {} : { password: options.password }) });
    const ocrMode = options.ocrMode ?? 'auto';
    try {
      const ocr = ocrMode === 'off' ? null : options.ocr === undefined ? new TesseractEngine() : options.ocr;
      const engine = ocr && (await ocr.available()) ? ocr : null;
      let languages: OcrLanguages = options.ocrLanguages ?? 'auto';
      const pages: Page[] = [];
      const first = Math.max(1, options.pageRange?.[0] ?? 1);
      const last = Math.min(reader.pages, options.pageRange?.[1] ?? reader.pages);
      for (let pageNo = first; pageNo <= last; pageNo += 1) {
        signal?.throwIfAborted();
        const { rotate, ...read } = await readOrNote(reader, pageNo, pages.at(-1), signal);
        let content: PageContent = read;
        // Coordinates are in the unrotated page, except on an OCR'd page: there they are as the page is shown.
        let frameRotate = rotate;
        // A damaged page comes back already marked (textSource 'none', with its note).
        const damaged = content.textSource === 'none';
        const scan = !damaged && needsOcr(content);
        if (!damaged && (ocrMode === 'force' || (ocrMode === 'auto' && scan))) {
          const drawPage = (dpi: number) => reader.render({ pageNo, dpi, format: 'pgm' }, signal);
          const ocred = await ocrPage({ drawPage, dir, content, rotate, engine, languages, limits: limits.program, signal });
          if (ocred.content.textSource === 'ocr' || scan) {
            content = ocred.content;
            languages = ocred.languages;
            frameRotate = 0;
          } else {
            // Forced OCR that could not run keeps the page's own text layer.
            content = { ...content, textSource: usableChars(content) > 0 ? 'text-layer' : 'none', notes: [...(content.notes ?? []), `Page ${pageNo} could not be read by OCR, so its text comes from its text layer.`] };
          }
        } else if (!damaged) {
          content = { ...content, textSource: usableChars(content) > 0 ? 'text-layer' : 'none' };
          // With OCR turned off a scan stays what it is, an image: its picture is cut like any other.
          if (scan) content.notes = [...(content.notes ?? []), `Page ${pageNo} has no text layer (it is an image, probably a scan) and OCR was turned off, so its text is missing from the result.`];
        }
        // The last page is read (and drawn, if OCR read it): with no pictures to cut, the readers are given
        // back before its layout, so another file of a batch is read meanwhile.
        if (pageNo === last && !options.onPicture) reader.close();
        const page = layoutPage(content);
        page.textSource = content.textSource;
        if (content.fields) page.fields = labelFields(content.fields, content.runs);
        if (content.notes?.length) page.notes = [...(page.notes ?? []), ...content.notes];
        if (options.onPicture) await cutPictures(page, content, { reader, turned: frameRotate === 0 ? rotate : 0, signal, onPicture: options.onPicture });
        pages.push(page);
        await onProgress?.(pageNo - first + 1, last - first + 1);
      }
      signal?.throwIfAborted();
      const notes = pages.flatMap((page) => page.notes ?? []);
      // Heading levels from the bookmarks where the tags give none (issue 31, item 3).
      const labelled = headingsFromOutline(labelDocument({ pages }), reader.outline);
      return notes.length > 0 ? { ...labelled, notes } : labelled;
    } finally {
      if (options.stats) options.stats.readerPeakRss = reader.peakRss;
      reader.close();
    }
  });
}

/**
 * The page's content; a page pdf.js throws on (a damaged page dictionary, say) becomes an empty
 * page with a note, the size of the page before it, so one bad page does not lose the others.
 */
async function readOrNote(reader: ReaderPool, pageNo: number, previous: Page | undefined, signal: AbortSignal | undefined): Promise<ReadPage> {
  try {
    return await reader.page(pageNo, signal);
  } catch (error) {
    if (!(error instanceof PageUnreadableError)) throw error;
    const note = `Page ${pageNo} is damaged and could not be read (${error.reason}); it is left empty.`;
    return { pageNo, width: previous?.width ?? 595.28, height: previous?.height ?? 841.89, runs: [], rulings: [], images: [], textSource: 'none', notes: [note], rotate: 0 };
  }
}

/** `turned`: how far the page's boxes are already turned (an OCR'd page's are as shown). */
type PictureJob = { reader: ReaderPool; turned: number; signal?: AbortSignal; onPicture: NonNullable<ExtractOptions['onPicture']> };

/**
 * A box as OCR saw it (the page turned by its /Rotate) back in the unrotated page, where the reader
 * draws regions from: the inverse of displayedBox.
 */
function unrotatedBox(box: BoundingBox, rotate: number, shown: { width: number; height: number }): BoundingBox {
  // Turning the shown page back by (360 − rotate)° undoes the turn.
  const back = (360 - rotate) % 360;
  return back === 0 ? box : displayedBox(box, back, shown);
}

/**
 * Pictures of the page — the ones layout found (with captions), or else the image boxes the reader
 * saw — each cut from a render as a PNG result file.
 * A picture that cannot be rendered within the limits is left out with a note; the page stays.
 */
async function cutPictures(page: Page, content: PageContent, job: PictureJob): Promise<void> {
  const candidates: Picture[] = page.pictures ?? (content.images ?? []).map((image) => ({ bbox: image.bbox, file: '' }));
  const pictures: Picture[] = [];
  for (const picture of candidates) {
    const name = `pictures/page-${page.pageNo}-${pictures.length + 1}.png`;
    try {
      const region = unrotatedBox(picture.bbox, job.turned, content);
      const { data } = await job.reader.render({ pageNo: page.pageNo, dpi: PICTURE_DPI, format: 'png', region }, job.signal);
      await job.onPicture(name, data);
      pictures.push({ ...picture, file: name });
    } catch (error) {
      if (!(error instanceof PageUnreadableError)) throw error;
      page.notes = [...(page.notes ?? []), `A picture on page ${page.pageNo} was left out: ${error.reason}.`];
    }
  }
  page.pictures = pictures;
}
