// One page without a usable text layer: draw it in gray at 300 dpi (PDFium, in its reader), read it with
// the OCR engine, and turn the words into TextRuns — or, when that cannot be done, say why in the
// page's notes so the result and the task record tell the owner (issue 17, item 4).
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { BoundingBox } from '../document.ts';
import type { PageContent, Ruling, TextRun } from '../layout/geometry.ts';
import { LimitedProgramError, seconds, type Limits } from '../limited.ts';
import { PageUnreadableError } from './errors.ts';
import { rulesInPgm } from '../ocr/image-rules.ts';
import { meanConfidence, wordsToRuns, type OcrEngine, type OcrWord } from '../ocr/ocr.ts';
import type { RenderedImage } from './render.ts';
import { displayedBox, displayedSize } from './turn.ts';

/**
 * OCR reads a drawn vertical rule as a word of bars ("|", "||", "ll"): such a word lying on a
 * vertical rule found in the same image is that rule, not text, so it never joins two table cells
 * into one ("armadillo | frozen").
 */
export function readFromRule(run: TextRun, rulings: Ruling[]): boolean {
  if (!/^[|¦Il]{1,3}$/.test(run.text.trim())) return false;
  return rulings.some((r) => r.x2 - r.x1 <= 2 && r.x1 >= run.x - 3 && r.x1 <= run.x + run.width + 3 && run.y >= r.y1 - 3 && run.y <= r.y2 + 3);
}

/** Languages for OCR (tesseract names), or 'auto': English, and Chinese as well when English reads poorly. */
export type OcrLanguages = string[] | 'auto';

/** Which pages OCR reads: those without a usable text layer ('auto'), every page ('force'), none ('off'). */
export type OcrMode = 'auto' | 'force' | 'off';

const OCR_DPI = 300;
/** Below this mean word confidence an English-only reading is taken as "probably not English". */
const AUTO_RETRY_CONFIDENCE = 60;
const AUTO_CHINESE = ['chi_sim', 'eng'];
/** An image covering this much of an OCR'd page is the scan itself, not a picture on it. */
const SCAN_COVERAGE = 0.6;

const area = (b: BoundingBox) => Math.max(0, b.r - b.l) * Math.max(0, b.t - b.b);

export type OcrPageJob = {
  /** Draws the page as shown (turned by its /Rotate) in 8-bit gray PGM at about this resolution. */
  drawPage: (dpi: number) => Promise<RenderedImage>;
  /** A private folder for the page image OCR reads. */
  dir: string;
  content: PageContent;
  /** The page's /Rotate: the page is drawn turned, so OCR's words are in the page as shown. */
  rotate: number;
  engine: OcrEngine | null;
  languages: OcrLanguages;
  /** Limits of each program run; `timeoutMs` is also the page's whole budget (render and every OCR pass together). */
  limits: Limits;
  signal?: AbortSignal;
};

/**
 * The page's content with OCR'd runs (textSource 'ocr'), or unchanged with textSource 'none' and a
 * note. Returns the languages to use for the next page: once Chinese helped, 'auto' keeps it.
 */
export async function ocrPage(job: OcrPageJob): Promise<{ content: PageContent; languages: OcrLanguages }> {
  const { content, engine, limits } = job;
  const pageNo = content.pageNo;
  const pageArea = content.width * content.height;
  // The scan is the page's background, not a picture on it; other images move into the page as shown.
  const shown = displayedSize(content, job.rotate);
  const images = (content.images ?? []).filter((image) => area(image.bbox) < pageArea * SCAN_COVERAGE).map((image) => ({ bbox: displayedBox(image.bbox, job.rotate, content) }));
  const without = (why: string) => ({ content: { ...content, ...shown, images, textSource: 'none' as const, notes: [`Page ${pageNo} has no text layer (it is an image, probably a scan) and ${why}, so its text is missing from the result.`] }, languages: job.languages });
  if (!engine) return without(`no OCR engine is installed (the operator can install Debian's tesseract-ocr with tesseract-ocr-eng and tesseract-ocr-chi-sim)`);
  let image: string | undefined;
  try {
    // One budget for the page: the render and every OCR pass share it, so auto's second pass cannot double it.
    const deadline = Date.now() + limits.timeoutMs;
    const remaining = () => Math.max(1, deadline - Date.now());
    const drawn = await job.drawPage(OCR_DPI);
    image = path.join(job.dir, `page-${pageNo}.pgm`);
    await writeFile(image, drawn.data, { mode: 0o600 });
    const rendered = { file: image, dpi: drawn.dpi };
    const read = (languages: string[]) => engine.recognize(rendered.file, { languages, dpi: rendered.dpi, timeoutMs: remaining(), memoryBytes: limits.memoryBytes, signal: job.signal });
    let languages = job.languages;
    let words: OcrWord[];
    if (languages === 'auto') {
      words = await read(['eng']);
      if (words.length > 0 && meanConfidence(words) < AUTO_RETRY_CONFIDENCE) {
        const chinese = await read(AUTO_CHINESE);
        if (meanConfidence(chinese) > meanConfidence(words)) [words, languages] = [chinese, AUTO_CHINESE];
      }
    } else words = await read(languages);
    const notes = rendered.dpi < OCR_DPI ? [`Page ${pageNo} is very large, so it was read by OCR at ${rendered.dpi} dpi instead of ${OCR_DPI}; its text may be incomplete.`] : [];
    if (words.length === 0) notes.push(`Page ${pageNo} has no text layer and OCR found no text on it.`);
    const runs = wordsToRuns(words, rendered.dpi, shown.height);
    // The scan's drawn rules (a ruled table's grid) come from the image, as the text layer's come from the operators.
    const rulings = await rulesInPgm(rendered.file, rendered.dpi, shown.height);
    const text = runs.filter((run) => !readFromRule(run, rulings));
    return { content: { ...content, ...shown, runs: text, rulings, images, textSource: 'ocr', ...(notes.length ? { notes } : {}) }, languages };
  } catch (error) {
    // The page has one budget (drawing and every pass): a pass stopped for time says the budget, not what was left of it.
    if (error instanceof LimitedProgramError && error.reason === 'timeout') return without(`reading it by OCR failed (${error.message.replace(/took longer than [\d.]+ s/, `took longer than ${seconds(limits.timeoutMs)} s`)})`);
    if (error instanceof LimitedProgramError) return without(`reading it by OCR failed (${error.message})`);
    if (error instanceof PageUnreadableError) return without(`drawing it for OCR failed (${error.reason})`);
    throw error;
  } finally {
    if (image) await rm(image, { force: true });
  }
}
