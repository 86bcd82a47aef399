// Opening a PDF with pdf.js and reading each page as positioned text runs plus the straight rules
// drawn on it; layout.ts turns those into blocks. Only this file knows pdf.js.
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { getDocument, GlobalWorkerOptions, OPS, PasswordException } from 'pdfjs-dist/legacy/build/pdf.mjs';
import type { PDFDocumentProxy, PDFPageProxy, TextItem, TextStyle } from 'pdfjs-dist/types/src/display/api.js';
import type { OnProgress, ParsedDocument } from './document.ts';
import { labelDocument, layoutPage, type Ruling, type TextRun } from './layout.ts';
import { NotAPdfError, UnreadablePdfError } from './pdf-errors.ts';

export { NotAPdfError, UnreadablePdfError };


const require = createRequire(import.meta.url);
const PDFJS_ROOT = path.dirname(require.resolve('pdfjs-dist/package.json'));
/** pdf.js loads these by URL-or-path; in Node a plain directory path with a trailing slash works. */
const assetDir = (name: string) => path.join(PDFJS_ROOT, name) + path.sep;

// Node has no web workers, so pdf.js runs its worker code in-process ("fake worker") and imports
// it from workerSrc; pointing that at the package's own file keeps it working wherever npm put it.
GlobalWorkerOptions.workerSrc = pathToFileURL(path.join(PDFJS_ROOT, 'legacy/build/pdf.worker.mjs')).href;

/** PDF 1.7 (ISO 32000) §7.5.2: readers accept the %PDF- header anywhere in the first 1024 bytes. */
function hasPdfHeader(data: Uint8Array): boolean {
  const head = Buffer.from(data.buffer, data.byteOffset, Math.min(data.byteLength, 1024));
  return head.includes('%PDF-', 0, 'latin1');
}

type OpenPdf = { pdf: PDFDocumentProxy; close: () => Promise<void> };

async function openPdf(data: Uint8Array): Promise<OpenPdf> {
  if (!hasPdfHeader(data)) {
    throw new NotAPdfError('The file is not a PDF (no %PDF- header in its first 1024 bytes); upload a PDF document.');
  }
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

/** Checks magic bytes (%PDF- within the first 1024 bytes) and that pdf.js opens it; returns the page count. */
export async function inspectPdf(data: Uint8Array): Promise<{ pages: number }> {
  const { pdf, close } = await openPdf(data);
  try {
    return { pages: pdf.numPages };
  } finally {
    await close();
  }
}

/** Extracts every page's layout. Honours signal (throws signal.reason promptly between pages), calls onProgress(done, total) after each page. */
export async function extractDocument(data: Uint8Array, options: { signal?: AbortSignal; onProgress?: OnProgress } = {}): Promise<ParsedDocument> {
  const { signal, onProgress } = options;
  signal?.throwIfAborted();
  const { pdf, close } = await openPdf(data);
  try {
    const pages = [];
    for (let pageNo = 1; pageNo <= pdf.numPages; pageNo += 1) {
      signal?.throwIfAborted();
      const page = await pdf.getPage(pageNo);
      const { width, height, runs, rulings } = await readPage(page);
      page.cleanup();
      pages.push(layoutPage({ pageNo, width, height, runs, rulings }));
      await onProgress?.(pageNo, pdf.numPages);
    }
    signal?.throwIfAborted();
    return labelDocument({ pages });
  } finally {
    await close();
  }
}

type PageContent = { width: number; height: number; runs: TextRun[]; rulings: Ruling[] };

async function readPage(page: PDFPageProxy): Promise<PageContent> {
  // view is the crop box [x0, y0, x1, y1]; coordinates are reported relative to its corner.
  const [x0 = 0, y0 = 0, x1 = 0, y1 = 0] = page.view;
  const origin = { x: x0, y: y0 };
  const text = await page.getTextContent();
  // The operator list also makes pdf.js publish the page's fonts, whose names carry the weight.
  const operators = await page.getOperatorList();
  const rulings = rulingsFrom(operators.fnArray, operators.argsArray, origin);
  const runs: TextRun[] = [];
  for (const item of text.items) {
    if (!('str' in item) || item.str.trim() === '') continue;
    runs.push(textRun(item, text.styles[item.fontName], isBoldFont(page, item.fontName), origin));
  }
  return { width: x1 - x0, height: y1 - y0, runs, rulings };
}

function textRun(item: TextItem, style: TextStyle | undefined, bold: boolean, origin: { x: number; y: number }): TextRun {
  const [a = 1, b = 0, c = 0, d = 1, e = 0, f = 0] = item.transform as number[];
  const size = Math.hypot(c, d) || Math.hypot(a, b) || item.height;
  return {
    text: item.str,
    x: e - origin.x,
    y: f - origin.y,
    width: item.width,
    size,
    bold: bold || /bold|black|heavy/i.test(style?.fontFamily ?? ''),
    hasEOL: item.hasEOL,
  };
}

/** A font counts as bold when its PostScript name says so: Helvetica-Bold, NotoSansSC-Black, Foo-SemiBold. */
function isBoldFont(page: PDFPageProxy, fontName: string): boolean {
  if (!page.commonObjs.has(fontName)) return false;
  const font: unknown = page.commonObjs.get(fontName);
  const name = typeof font === 'object' && font !== null && 'name' in font ? font.name : undefined;
  return typeof name === 'string' && /bold|black|heavy|semibold|demibold/i.test(name);
}

// --- Rules (straight lines) from the operator list -------------------------------------------

type Matrix = [number, number, number, number, number, number];
const IDENTITY: Matrix = [1, 0, 0, 1, 0, 0];

/** `outer ∘ inner`: the matrix that applies `inner` first, then `outer` (PDF's cm concatenation). */
function compose(outer: Matrix, inner: Matrix): Matrix {
  const [a, b, c, d, e, f] = outer;
  const [p, q, r, s, t, u] = inner;
  return [a * p + c * q, b * p + d * q, a * r + c * s, b * r + d * s, a * t + c * u + e, b * t + d * u + f];
}

function apply(m: Matrix, x: number, y: number): [number, number] {
  return [m[0] * x + m[2] * y + m[4], m[1] * x + m[3] * y + m[5]];
}

function asMatrix(value: unknown): Matrix | undefined {
  if (!Array.isArray(value) && !ArrayBuffer.isView(value)) return undefined;
  const numbers = Array.from(value as ArrayLike<unknown>);
  return numbers.length === 6 && numbers.every((n) => typeof n === 'number') ? (numbers as Matrix) : undefined;
}

/** pdf.js's path opcodes inside constructPath data (its DrawOPS): moveTo, lineTo, curveTo, quadraticCurveTo, closePath. */
const DRAW = { moveTo: 0, lineTo: 1, curveTo: 2, quadraticCurveTo: 3, closePath: 4 } as const;
const PAINTING = new Set<number>([OPS.stroke, OPS.closeStroke, OPS.fill, OPS.eoFill, OPS.fillStroke, OPS.eoFillStroke, OPS.closeFillStroke, OPS.closeEOFillStroke]);
const FILLING = new Set<number>([OPS.fill, OPS.eoFill]);

/**
 * Axis-aligned straight rules, in page points from the bottom left. Stroked segments count as they
 * are; a filled rectangle counts as a rule when it is thin (many generators draw rules that way) and
 * as its four edges otherwise (a shaded cell's border is a cell border). Curves and clip paths are not rules.
 */
export function rulingsFrom(fnArray: number[], argsArray: unknown[], origin: { x: number; y: number }): Ruling[] {
  const rulings: Ruling[] = [];
  const stack: Matrix[] = [];
  let ctm = IDENTITY;
  for (let i = 0; i < fnArray.length; i += 1) {
    const fn = fnArray[i];
    const args = argsArray[i];
    if (fn === OPS.save) stack.push(ctm);
    else if (fn === OPS.restore) ctm = stack.pop() ?? IDENTITY;
    else if (fn === OPS.transform) ctm = compose(ctm, asMatrix(args) ?? IDENTITY);
    else if (fn === OPS.paintFormXObjectBegin && Array.isArray(args)) {
      stack.push(ctm);
      ctm = compose(ctm, asMatrix(args[0]) ?? IDENTITY);
    } else if (fn === OPS.paintFormXObjectEnd) ctm = stack.pop() ?? IDENTITY;
    else if (fn === OPS.constructPath && Array.isArray(args)) {
      const [paint, [data] = []] = args as [unknown, unknown[]?];
      if (typeof paint !== 'number' || !PAINTING.has(paint) || !ArrayBuffer.isView(data)) continue;
      for (const polygon of polylines(data as Float32Array, ctm)) {
        const shifted = polygon.map(([x, y]): [number, number] => [x - origin.x, y - origin.y]);
        rulings.push(...(FILLING.has(paint) ? filledRules(shifted) : strokedRules(shifted)));
      }
    }
  }
  return rulings;
}

/** The path's straight pieces as point lists in page space; a curve ends the current piece. */
function polylines(data: Float32Array, ctm: Matrix): Array<Array<[number, number]>> {
  const pieces: Array<Array<[number, number]>> = [];
  let current: Array<[number, number]> = [];
  let start: [number, number] | undefined;
  const flush = () => {
    if (current.length > 1) pieces.push(current);
    current = [];
  };
  for (let i = 0; i < data.length; ) {
    const op = data[i++];
    if (op === DRAW.moveTo || op === DRAW.lineTo) {
      const point = apply(ctm, data[i++] ?? 0, data[i++] ?? 0);
      if (op === DRAW.moveTo) {
        flush();
        start = point;
      }
      current.push(point);
    } else if (op === DRAW.closePath) {
      if (start) current.push(start);
      flush();
    } else if (op === DRAW.curveTo || op === DRAW.quadraticCurveTo) {
      i += op === DRAW.curveTo ? 6 : 4;
      const end = apply(ctm, data[i - 2] ?? 0, data[i - 1] ?? 0);
      flush();
      current = [end];
    } else break; // unknown opcode: the rest cannot be decoded
  }
  flush();
  return pieces;
}

const AXIS_TOLERANCE = 1;

function strokedRules(points: Array<[number, number]>): Ruling[] {
  const rules: Ruling[] = [];
  for (let k = 1; k < points.length; k += 1) {
    const [ax, ay] = points[k - 1] ?? [0, 0];
    const [bx, by] = points[k] ?? [0, 0];
    if (Math.abs(ay - by) <= AXIS_TOLERANCE || Math.abs(ax - bx) <= AXIS_TOLERANCE) {
      rules.push({ x1: Math.min(ax, bx), y1: Math.min(ay, by), x2: Math.max(ax, bx), y2: Math.max(ay, by) });
    }
  }
  return rules;
}

const THIN = 3;

function filledRules(points: Array<[number, number]>): Ruling[] {
  if (points.length < 4 || points.length > 6) return [];
  const xs = points.map(([x]) => x);
  const ys = points.map(([, y]) => y);
  const [l, r, b, t] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
  const isRectangle = points.every(([x, y]) => (Math.abs(x - l) < 0.5 || Math.abs(x - r) < 0.5) && (Math.abs(y - b) < 0.5 || Math.abs(y - t) < 0.5));
  if (!isRectangle) return [];
  if (t - b <= THIN) return [{ x1: l, y1: (t + b) / 2, x2: r, y2: (t + b) / 2 }];
  if (r - l <= THIN) return [{ x1: (l + r) / 2, y1: b, x2: (l + r) / 2, y2: t }];
  return strokedRules([[l, b], [r, b], [r, t], [l, t], [l, b]]);
}
