// What stays as the source drew it (issue 18, "Not translated: blocks labelled code or formula, URLs,
// e-mail addresses, numbers, and text in pictures. They stay as the source drew them"), and the
// source's own text for exactly those places.
//
// Ghostscript removes all text. The kept text comes back from a copy of the source page that holds
// only the text objects starting inside a kept region: no drawings, images or other text, so nothing
// is drawn twice and no removed text hides in the file (not even clipped). Glyph by glyph: a kept
// number and the words beside it in one operation are told apart by their widths (glyphs.ts).
import { PDFArray, PDFDocument, PDFName, PDFRawStream, PDFRef, decodePDFRawStream, type PDFPage } from 'pdf-lib';
import type { Block, BoundingBox, Page, TableCell } from '../../document.ts';
import { isTurnedBlock } from '../../layout/turned.ts';
import { needsTranslation } from '../translate-document.ts';
import { arrayElements, filterShow, fontMetrics, type FontMetrics, type TextState } from './glyphs.ts';

const URL_OR_EMAIL = /^(?:(?:https?|ftp):\/\/\S+|www\.\S+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+)$/iu;

/** A text that is not translated: no letters (numbers, symbols), or only a URL or e-mail address. */
export function isKeptText(text: string): boolean {
  const trimmed = text.trim();
  return !needsTranslation(trimmed) || URL_OR_EMAIL.test(trimmed);
}

/**
 * A table cell whose text runs up or down the page (a turned column header, "QIBM_DB_SQLADM" over a
 * narrow column of crosses): a cell far taller than wide, its text too long to lie across it at its
 * size but short enough to run along its height. Translated across, it would run down into the rows
 * below; it stays as the source drew it.
 */
export function isTurnedCell(cell: TableCell, size: number): boolean {
  const width = cell.bbox.r - cell.bbox.l;
  const height = cell.bbox.t - cell.bbox.b;
  const length = 0.45 * (cell.fontSize || size) * [...cell.text.trim()].length;
  if (/\s\S+\s\S+\s/u.test(cell.text.trim())) return false;
  // The table stage stands a turned run in upright where its first glyphs lie (layout/tables): a box
  // a character or two across, far shorter than the text either way.
  const standIn = length > 2.5 * Math.max(width, height);
  return standIn || (height >= 2.5 * width && length > width && length <= height * 1.2);
}

/** Where a turned cell's glyphs lie: up the page from its box, as far as its text is long (within its table). */
function turnedCellRegion(cell: TableCell, table: Block): BoundingBox {
  const size = cell.fontSize || table.fontSize;
  const length = 0.8 * size * [...cell.text.trim()].length;
  return { l: cell.bbox.l - 0.5 * size, r: cell.bbox.r + 0.5 * size, b: cell.bbox.b, t: Math.max(cell.bbox.t, Math.min(table.bbox.t, cell.bbox.b + length)) };
}

/** A table cell kept as the source drew it: no words to translate, or turned text. */
export function isKeptCell(cell: TableCell, table: Block): boolean {
  return isKeptText(cell.text) || isTurnedCell(cell, table.fontSize);
}

/** A block kept whole: code, formula, picture text, untranslatable text, turned text, or a block inside a picture. */
export function isKeptBlock(block: Block, page: Page): boolean {
  if (block.label === 'code' || block.label === 'formula' || block.label === 'picture') return true;
  if (isTurnedBlock(block)) return true;
  if (block.label !== 'table' && isKeptText(block.text)) return true;
  return (page.pictures ?? []).some((picture) => inside(block.bbox, picture.bbox));
}

function inside(a: BoundingBox, b: BoundingBox): boolean {
  return a.l >= b.l - 1 && a.r <= b.r + 1 && a.b >= b.b - 1 && a.t <= b.t + 1;
}

/** The regions (PDF points, bottom-left origin) whose source text is kept on a page. */
export function keptRegions(page: Page): BoundingBox[] {
  const regions: BoundingBox[] = [...(page.pictures ?? []).map((p) => p.bbox)];
  for (const block of page.blocks) {
    if (isKeptBlock(block, page)) regions.push(block.bbox);
    else if (block.label === 'table') for (const cell of block.table?.cells ?? []) if (isKeptCell(cell, block)) regions.push(isKeptText(cell.text) ? cell.bbox : turnedCellRegion(cell, block));
  }
  return regions;
}

type Matrix = [number, number, number, number, number, number];
const IDENTITY: Matrix = [1, 0, 0, 1, 0, 0];
const multiply = (m: Matrix, n: Matrix): Matrix => [
  m[0] * n[0] + m[1] * n[2], m[0] * n[1] + m[1] * n[3],
  m[2] * n[0] + m[3] * n[2], m[2] * n[1] + m[3] * n[3],
  m[4] * n[0] + m[5] * n[2] + n[4], m[4] * n[1] + m[5] * n[3] + n[5],
];

/** Operators copied to the kept-text stream: graphics and text state, marked content and text showing. */
const STATE_OPS = new Set(['q', 'Q', 'cm', 'gs', 'w', 'J', 'j', 'M', 'd', 'ri', 'i', 'CS', 'cs', 'SC', 'SCN', 'sc', 'scn', 'G', 'g', 'RG', 'rg', 'K', 'k',
  'BT', 'ET', 'Tc', 'Tw', 'Tz', 'TL', 'Tf', 'Tr', 'Ts', 'Td', 'TD', 'Tm', 'T*', 'BMC', 'BDC', 'EMC', 'MP', 'DP']);
const SHOW_OPS = new Set(['Tj', 'TJ', "'", '"']);
/** How far above a kept region's top a glyph's baseline may stand and still be the region's (rounding only). */
const TOP_SLACK = 0.5;
// Tc, Tw and Tz are followed (glyph positions depend on them) and copied like the rest of the text state.

/**
 * Rewrites a content stream to hold only the glyphs that start inside `regions` (with the graphics
 * and text state they need). Positions follow the CTM, the text matrices and each glyph's width
 * from its font (glyphs.ts), so one operation holding kept and removed glyphs is split exactly.
 */
export function keptTextContent(content: string, regions: BoundingBox[], fonts: Map<string, FontMetrics> = new Map()): string {
  const out: string[] = [];
  const stack: Array<{ ctm: Matrix; state: TextState }> = [];
  let ctm: Matrix = IDENTITY;
  let tm: Matrix = IDENTITY;
  let tlm: Matrix = IDENTITY;
  let leading = 0;
  let state: TextState = { size: 10, charSpacing: 0, wordSpacing: 0, scale: 100 };
  let font: FontMetrics = { bytesPerCode: 1, known: false, width: () => 500 };
  let operands: string[] = [];
  const num = (i: number) => Number(operands[operands.length - i] ?? 0);
  const nextLine = () => { tlm = multiply([1, 0, 0, 1, 0, -leading], tlm); tm = tlm; };
  // A glyph starts at its baseline, which lies below the top of its line's box: a baseline above a
  // region's top is the line above's (pr-138's footnote over a kept page number), never the region's.
  const inside = (x: number) => {
    const at = multiply([1, 0, 0, 1, x, 0], multiply(tm, ctm));
    return regions.some((r) => at[4] >= r.l - 1 && at[4] <= r.r + 1 && at[5] >= r.b - 2 && at[5] <= r.t + TOP_SLACK);
  };
  for (const token of tokens(content)) {
    if (token.kind === 'operand') { operands.push(token.text); continue; }
    const op = token.text;
    if (op === 'q') stack.push({ ctm, state });
    else if (op === 'Q') ({ ctm, state } = stack.pop() ?? { ctm: IDENTITY, state });
    else if (op === 'cm') ctm = multiply([num(6), num(5), num(4), num(3), num(2), num(1)], ctm);
    else if (op === 'BT') tm = tlm = IDENTITY;
    else if (op === 'Tm') tm = tlm = [num(6), num(5), num(4), num(3), num(2), num(1)];
    else if (op === 'Td' || op === 'TD') { if (op === 'TD') leading = -num(1); tlm = multiply([1, 0, 0, 1, num(2), num(1)], tlm); tm = tlm; }
    else if (op === 'TL') leading = num(1);
    else if (op === 'T*') nextLine();
    else if (op === 'Tc') state = { ...state, charSpacing: num(1) };
    else if (op === 'Tw') state = { ...state, wordSpacing: num(1) };
    else if (op === 'Tz') state = { ...state, scale: num(1) };
    else if (op === 'Tf') {
      state = { ...state, size: num(1) };
      font = fonts.get((operands[operands.length - 2] ?? '').slice(1)) ?? { bytesPerCode: 1, known: false, width: () => 500 };
    }
    if (SHOW_OPS.has(op)) {
      if (op === '"') {
        state = { ...state, wordSpacing: num(3), charSpacing: num(2) };
        out.push(`${operands[0]} Tw ${operands[1]} Tc`);
      }
      if (op === "'" || op === '"') { nextLine(); out.push('T*'); }
      const shown = operands[operands.length - 1] ?? '';
      const elements = op === 'TJ' ? arrayElements(shown) : [shown];
      const { rewritten, advance } = filterShow(elements, font, state, inside);
      if (rewritten) out.push(rewritten);
      tm = multiply([1, 0, 0, 1, advance, 0], tm);
    } else if (STATE_OPS.has(op)) {
      out.push(`${operands.join(' ')} ${op}`);
    }
    // Everything else (paths, painting, clipping, images, shadings, XObjects) is left out: the
    // text-free page from ghostscript already draws it.
    operands = [];
  }
  return out.join('\n');
}

type Token = { kind: 'operand' | 'operator'; text: string };

/** PDF content-stream tokens: operands (numbers, names, strings, arrays, dictionaries) and operators. */
export function* tokens(s: string): Generator<Token> {
  let i = 0;
  const n = s.length;
  const isSpace = (c: string) => c === ' ' || c === '\n' || c === '\r' || c === '\t' || c === '\f' || c === '\0';
  const isDelim = (c: string) => '()<>[]{}/%'.includes(c);
  while (i < n) {
    const c = s[i]!;
    if (isSpace(c)) { i++; continue; }
    if (c === '%') { while (i < n && s[i] !== '\n' && s[i] !== '\r') i++; continue; }
    const start = i;
    if (c === '(' ) { i = skipString(s, i); yield { kind: 'operand', text: s.slice(start, i) }; continue; }
    if (c === '[' || (c === '<' && s[i + 1] === '<')) {
      const close = c === '[' ? ']' : '>>';
      let depth = 0;
      while (i < n) {
        if (s[i] === '(') { i = skipString(s, i); continue; }
        // A hex string inside (<FEFF0084> in a marked-content dictionary): its '>' closes no dictionary.
        if (c === '<' && s[i] === '<' && s[i + 1] !== '<') { i = s.indexOf('>', i) + 1 || n; continue; }
        if (s.startsWith(c === '[' ? '[' : '<<', i)) { depth++; i += c === '[' ? 1 : 2; continue; }
        if (s.startsWith(close, i)) { depth--; i += close.length; if (depth === 0) break; continue; }
        i++;
      }
      yield { kind: 'operand', text: s.slice(start, i) };
      continue;
    }
    if (c === '<') { i = s.indexOf('>', i) + 1 || n; yield { kind: 'operand', text: s.slice(start, i) }; continue; }
    if (c === '/') { i++; while (i < n && !isSpace(s[i]!) && !isDelim(s[i]!)) i++; yield { kind: 'operand', text: s.slice(start, i) }; continue; }
    while (i < n && !isSpace(s[i]!) && !isDelim(s[i]!)) i++;
    if (i === start) { i++; continue; }
    const word = s.slice(start, i);
    if (/^[+-]?(\d+\.?\d*|\.\d+)$/.test(word) || word === 'true' || word === 'false' || word === 'null') { yield { kind: 'operand', text: word }; continue; }
    if (word === 'BI') {
      // Inline image: skip its parameters and binary data up to "EI" between white space.
      const from = s.slice(i).search(/\sEI(?=\s|$)/);
      i = from < 0 ? n : i + from + 3;
      yield { kind: 'operator', text: 'BI' };
      continue;
    }
    yield { kind: 'operator', text: word };
  }
}

function skipString(s: string, i: number): number {
  let depth = 0;
  for (; i < s.length; i++) {
    const c = s[i];
    if (c === '\\') { i++; continue; }
    if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return i + 1;
  }
  return s.length;
}

/** The page's content streams, decoded and joined (latin1 keeps every byte as one character). */
export function pageContent(page: PDFPage): string {
  const contents = page.node.Contents();
  const streams = contents instanceof PDFArray ? contents.asArray().map((ref) => page.doc.context.lookup(ref)) : [contents];
  return streams
    .map((stream) => (stream instanceof PDFRawStream ? Buffer.from(decodePDFRawStream(stream).decode()).toString('latin1') : ''))
    .join('\n');
}

/**
 * A copy of the source with, on each page, only the text kept there (no other content); pages with
 * nothing kept are empty. Loaded once per document.
 */
export async function keptTextPdf(source: Uint8Array, pages: Page[]): Promise<PDFDocument> {
  const doc = await PDFDocument.load(source, { ignoreEncryption: true, updateMetadata: false });
  doc.getPages().forEach((page, index) => {
    const layout = pages[index];
    const regions = layout ? keptRegions(layout) : [];
    const text = regions.length > 0 ? keptTextContent(pageContent(page), regions, fontMetrics(doc.context, page.node.Resources())) : '';
    const stream = doc.context.flateStream(Buffer.from(text, 'latin1'));
    page.node.set(PDFName.of('Contents'), doc.context.register(stream) as PDFRef);
  });
  return doc;
}
