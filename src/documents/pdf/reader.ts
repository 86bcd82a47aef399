// Opening a PDF with pdf.js and reading each page as positioned text runs, the straight rules and
// the image boxes drawn on it; the layout stage turns those into blocks. Only this folder knows
// pdf.js, and it runs inside the reader process (reader-process.ts), never in the worker itself.
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { getDocument, GlobalWorkerOptions, PasswordException } from 'pdfjs-dist/legacy/build/pdf.mjs';
import type { PDFDocumentProxy, PDFPageProxy, TextItem, TextMarkedContent, TextStyle } from 'pdfjs-dist/types/src/display/api.js';
import { keepGlyphsWhole } from '../layout/bidi.ts';
import type { PageContent, TextRun } from '../layout/geometry.ts';
import { drawnGlyphs } from './drawn-glyphs.ts';
import { NotAPdfError, UnreadablePdfError } from './errors.ts';
import { figureRegions } from './figures.ts';
import { graphicsFrom } from './rulings.ts';

const require = createRequire(import.meta.url);
const PDFJS_ROOT = path.dirname(require.resolve('pdfjs-dist/package.json'));
/** pdf.js loads these by URL-or-path; in Node a plain directory path with a trailing slash works. */
const assetDir = (name: string) => path.join(PDFJS_ROOT, name) + path.sep;

// Node has no web workers, so pdf.js runs its worker code in-process ("fake worker") and imports
// it from workerSrc; pointing that at the package's own file keeps it working wherever npm put it.
GlobalWorkerOptions.workerSrc = pathToFileURL(path.join(PDFJS_ROOT, 'legacy/build/pdf.worker.mjs')).href;
// Loaded now rather than on the first getDocument: it sets globalThis.pdfjsWorker, which pdf.js uses
// directly, so an idle reader process has everything loaded before a document arrives.
await import(GlobalWorkerOptions.workerSrc);

/** PDF 1.7 (ISO 32000) §7.5.2: readers accept the %PDF- header anywhere in the first 1024 bytes. */
export function hasPdfHeader(data: Uint8Array): boolean {
  const head = Buffer.from(data.buffer, data.byteOffset, Math.min(data.byteLength, 1024));
  return head.includes('%PDF-', 0, 'latin1');
}

export const NOT_A_PDF = 'The file is not a PDF (no %PDF- header in its first 1024 bytes); upload a PDF document.';

/** 40 megapixels: an A4 page at 600 dpi is 35. */
const MAX_IMAGE_PIXELS = 40_000_000;

export type OpenPdf = { pdf: PDFDocumentProxy; close: () => Promise<void> };

export async function openPdf(data: Uint8Array): Promise<OpenPdf> {
  if (!hasPdfHeader(data)) throw new NotAPdfError(NOT_A_PDF);
  const task = getDocument({
    // A copy: pdf.js may take over the buffer it is given, and callers keep using theirs.
    data: new Uint8Array(data),
    cMapUrl: assetDir('cmaps'),
    cMapPacked: true,
    standardFontDataUrl: assetDir('standard_fonts'),
    wasmUrl: assetDir('wasm'),
    iccUrl: assetDir('iccs'),
    useSystemFonts: false,
    disableFontFace: true,
    // An image above this many pixels (a hostile 20,000 × 20,000 one would need 1.6 GB decoded) is
    // dropped by pdf.js instead of decoded; its box is then not reported (item 9 of issue 17).
    maxImageSize: MAX_IMAGE_PIXELS,
    isOffscreenCanvasSupported: false,
    // No isEvalSupported: pdf.js 6 removed the option along with its last use of eval.
    // Exposes each font's PostScript name (e.g. "ABCDEF+NotoSansSC-Bold"), which is how weight is read.
    fontExtraProperties: true,
    verbosity: 0,
  });
  try {
    const pdf = await task.promise;
    return { pdf, close: () => task.destroy() };
  } catch (error) {
    await task.destroy();
    if (error instanceof PasswordException) {
      throw new UnreadablePdfError('The PDF is protected by a password; remove the password (for example, print it to a new PDF) and upload it again.');
    }
    const reason = error instanceof Error ? error.message : String(error);
    throw new UnreadablePdfError(`The PDF is damaged and cannot be read (${reason}); re-export or repair it, then upload it again.`);
  }
}

/** A page as read, with its /Rotate (0, 90, 180 or 270: how far viewers turn it clockwise). */
export type ReadPage = PageContent & { rotate: number };

/** One page as layout reads it: runs, rules, image boxes (page points, bottom-left origin, unrotated). */
export async function readPage(pdf: PDFDocumentProxy, pageNo: number): Promise<ReadPage> {
  const page = await pdf.getPage(pageNo);
  try {
    return await readOpenPage(page, pageNo);
  } finally {
    // Frees the page's parsed resources (fonts, operator lists) so memory stays flat over long documents.
    page.cleanup();
  }
}

async function readOpenPage(page: PDFPageProxy, pageNo: number): Promise<ReadPage> {
  // view is the crop box [x0, y0, x1, y1]; coordinates are reported relative to its corner.
  const [x0 = 0, y0 = 0, x1 = 0, y1 = 0] = page.view;
  const origin = { x: x0, y: y0 };
  const size = { width: x1 - x0, height: y1 - y0 };
  // The operator list first: it also makes pdf.js publish the page's fonts, whose names carry the style.
  const operators = await page.getOperatorList();
  const { rulings, images, drawings } = graphicsFrom(operators.fnArray, operators.argsArray, origin, size);
  const text = await page.getTextContent({ includeMarkedContent: true });
  const runs: TextRun[] = [];
  const styles = new Map<string, FontStyle>();
  const items = text.items.filter((item): item is TextItem => 'str' in item);
  const mcids = markedContentIds(text.items);
  // Ligature glyphs of Arabic script, which pdf.js's reordering splits back to front (layout/bidi.ts).
  const strings = keepGlyphsWhole(items, drawnGlyphs(operators.fnArray, operators.argsArray));
  for (const [index, read] of items.entries()) {
    const item = { ...read, str: strings[index] ?? read.str };
    if (item.str.trim() === '') continue;
    let style = styles.get(item.fontName);
    if (!style) styles.set(item.fontName, (style = fontStyle(page, item.fontName, text.styles[item.fontName])));
    const run = textRun(item, style, origin);
    const mcid = mcids.get(read);
    runs.push(mcid === undefined ? run : { ...run, mcid });
  }
  const figures = figureRegions(drawings, runs, images, rulings);
  const rotate = (((page.rotate % 360) + 360) % 360) as number;
  return { pageNo, ...size, runs, rulings, images: [...images, ...figures].map((bbox) => ({ bbox })), rotate };
}

/**
 * The marked-content id (the /MCID of the innermost BDC around it) of each text item: the link from
 * the text to the structure tree of a tagged PDF (pdf/structure.ts).
 */
function markedContentIds(items: ReadonlyArray<TextItem | TextMarkedContent>): Map<TextItem, number> {
  const ids = new Map<TextItem, number>();
  const stack: Array<number | undefined> = [];
  for (const item of items) {
    if ('str' in item) {
      const mcid = stack.findLast((id) => id !== undefined);
      if (mcid !== undefined) ids.set(item, mcid);
    } else if (item.type === 'endMarkedContent') stack.pop();
    else {
      const match = item.type === 'beginMarkedContentProps' ? /_mc(\d+)$/.exec(item.id ?? '') : null;
      stack.push(match ? Number(match[1]) : undefined);
    }
  }
  return ids;
}

type FontStyle = { bold: boolean; italic: boolean; mono: boolean; math: boolean };

/**
 * A font's style from its PostScript name (Helvetica-BoldOblique, ABCDEF+CMTT10, NotoSansSC-Black)
 * and pdf.js's reading of its descriptor flags (FixedPitch → monospaced).
 */
function fontStyle(page: PDFPageProxy, fontName: string, style: TextStyle | undefined): FontStyle {
  const font: unknown = page.commonObjs.has(fontName) ? page.commonObjs.get(fontName) : undefined;
  const record = typeof font === 'object' && font !== null ? (font as Record<string, unknown>) : {};
  const name = `${typeof record.name === 'string' ? record.name : ''} ${style?.fontFamily ?? ''}`;
  return {
    // TeX's Computer Modern and EC/cm-super fonts (CMBX10, SFBX1000, SFTI1000, SFSL…) and URW's
    // (NimbusRomNo9L-Medi, -MediItal, -ReguItal) name their weight and slant in short forms.
    bold: /bold|black|heavy|semibold|demibold|CMBX|CMB\d|SFBX|SFB\d|-Medi\b|-MediItal|\bBd\b|-Bd/i.test(name),
    italic: /italic|oblique|CMTI|CMSL|SFTI|SFSL|SFIT|Ital\b|-It\b|-BdIt|-MediItal/i.test(name),
    math: /CMMI|CMSY|CMEX|CMBSY|MSAM|MSBM|LMMath|STIX|XITS|CambriaMath|Cambria-Math|TeXGyre\w*Math|Asana|rsfs|EUFM|EUSM|Symbol\b/i.test(name),
    mono: record.isMonospace === true || /courier|mono|typewriter|consol|menlo|CMTT|SFTT|LMMono|inconsolata/i.test(name) || style?.fontFamily === 'monospace',
  };
}

function textRun(item: TextItem, style: FontStyle, origin: { x: number; y: number }): TextRun {
  const [a = 1, b = 0, c = 0, d = 1, e = 0, f = 0] = item.transform as number[];
  const size = Math.hypot(c, d) || Math.hypot(a, b) || item.height;
  return { text: item.str, x: e - origin.x, y: f - origin.y, width: item.width, size, bold: style.bold, hasEOL: item.hasEOL, italic: style.italic, mono: style.mono, ...(style.math ? { math: true } : {}), height: item.height };
}
