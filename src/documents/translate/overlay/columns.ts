// A translated block never spans columns (issue 26). Where the parser hands over a block whose lines
// stand in two columns of the page (on the aviation handbook page, a paragraph of the left column
// joined with one of the right), its translation set into the union box would run across the gutter
// and over the other column's text. Before translation, such a block is split by its lines' columns:
// one block per column (and per paragraph, where a column's lines leave a paragraph's gap), in
// reading order — columns left to right, lines top to bottom — so each part is translated and set in
// its own column. The parser's own fix (reading order by columns) makes this rare; it stays as the
// guard for whatever a parser still joins.
//
// The page's lines and gutters are poppler's (`pdftotext -bbox-layout`), as the check sees them.
import type { Block, BoundingBox, Page, ParsedDocument, StyledSpan } from '../../document.ts';
import { gutters, type Box, type Gutter } from './check.ts';
import { popplerPages, type PopplerPage } from './check-pdf.ts';

type Line = Box & { text: string };

/** The spans of the stretch `part` of `text` (a column's share of a split block), when it is found there whole. */
function spansOf(spans: StyledSpan[], text: string, part: string): StyledSpan[] | undefined {
  const start = text.indexOf(part);
  if (start < 0) return undefined;
  const end = start + part.length;
  const result: StyledSpan[] = [];
  let at = 0;
  for (const span of spans) {
    const from = Math.max(start, at);
    const to = Math.min(end, at + span.text.length);
    if (to > from) result.push({ ...span, text: span.text.slice(from - at, to - at) });
    at += span.text.length;
  }
  return result.length > 1 ? result : undefined;
}

/** A value set apart on its line (layout/tables/panels.ts's listing rule): figures, or a short code in capitals (a party, a unit). */
const VALUE = /^(?:[\d.,%$€£+−-]+|[A-Z]{1,4})$/u;
const SPLITTABLE = new Set(['text', 'list_item', 'caption', 'footnote', 'section_header', 'title']);
const squash = (text: string) => text.normalize('NFKC').replace(/[\s\u00ad-]+/g, '').toLowerCase();

/** The source's lines with their text, top-down points. */
export function linesOf(page: PopplerPage): Line[] {
  // Words belong to the line whose box holds their middle; pdftotext lists lines with their words.
  return page.lineWords.map((line) => ({ ...line.box, text: line.words.join(' ') }));
}

/**
 * The source's lines cut at the page's gutters: poppler joins words that stand on one row into one
 * line even across a gutter (a label, its count and the next panel's label of a ruled listing), and
 * such a line belongs to no one block. Each piece is a line of its own column.
 */
export function linesCutAtGutters(page: PopplerPage, strips: Gutter[], within?: Box): Line[] {
  const pieces: Line[] = [];
  let next = 0;
  const inside = (w: Box) => !within || ((w.xMin + w.xMax) / 2 >= within.xMin - 1 && (w.xMin + w.xMax) / 2 <= within.xMax + 1 && (w.yMin + w.yMax) / 2 >= within.yMin - 2 && (w.yMin + w.yMax) / 2 <= within.yMax + 2);
  for (const line of page.lineWords) {
    // Only the words standing in `within` (a block's box): a printed row may run on into the next panel.
    const words = page.words.slice(next, next + line.words.length).filter(inside);
    next += line.words.length;
    let current: typeof words = [];
    const flush = () => {
      if (current.length > 0) pieces.push({ xMin: Math.min(...current.map((w) => w.xMin)), xMax: Math.max(...current.map((w) => w.xMax)), yMin: line.box.yMin, yMax: line.box.yMax, text: current.map((w) => w.text).join(' ') });
      current = [];
    };
    for (const word of words) {
      const last = current.at(-1);
      const cut = last && strips.some((g) => g.xMin >= last.xMax - 1 && g.xMax <= word.xMin + 1 && Math.min(g.yMax, line.box.yMax) - Math.max(g.yMin, line.box.yMin) > 0);
      if (cut) flush();
      current.push(word);
    }
    flush();
  }
  return pieces;
}

/** The gutters that cut through a box (top-down), over at least `height` of it (two lines' height). */
function guttersAcross(box: Box, strips: Gutter[], height = 12): Gutter[] {
  return strips.filter((g) => g.xMin > box.xMin + 4 && g.xMax < box.xMax - 4 && Math.min(g.yMax, box.yMax) - Math.max(g.yMin, box.yMin) > height);
}

const isCjk = (char: string | undefined) => char !== undefined && /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\u3000-\u303f\uff00-\uffef]/u.test(char);

/** Lines of one paragraph joined as the parser joins them: a space between words, none between CJK characters, hyphenation undone. */
export function joinLines(lines: string[]): string {
  let text = '';
  for (const line of lines.map((l) => l.trim()).filter(Boolean)) {
    if (text === '') text = line;
    else if (/\p{Ll}-$/u.test(text) && /^\p{Ll}/u.test(line)) text = text.slice(0, -1) + line;
    else if (isCjk(text.at(-1)) || isCjk(line[0])) text += line;
    else text += ` ${line}`;
  }
  return text;
}

/** Splits one block by the columns of its lines; undefined when it stands in one column (or cannot be split safely). */
export function splitBlock(block: Block, pageHeight: number, lines: Line[], strips: Gutter[]): Block[] | undefined {
  if (!SPLITTABLE.has(block.label)) return undefined;
  const box: Box = { xMin: block.bbox.l, xMax: block.bbox.r, yMin: pageHeight - block.bbox.t, yMax: pageHeight - block.bbox.b };
  // A block of one row (la-precinct's "PAGE   1") is split only as a listing's row: a label and its values set apart.
  const row = box.yMax - box.yMin < 12;
  const across = guttersAcross(box, strips, row ? 0.5 * (box.yMax - box.yMin) : 12);
  if (across.length === 0) return undefined;
  const text = squash(block.text);
  // The block's own lines: inside its box, and part of its text (another block's lines may lie in the same box).
  const own = lines.filter((l) => {
    const x = (l.xMin + l.xMax) / 2;
    const y = (l.yMin + l.yMax) / 2;
    return x >= box.xMin - 1 && x <= box.xMax + 1 && y >= box.yMin - 2 && y <= box.yMax + 2 && squash(l.text).length > 0 && text.includes(squash(l.text));
  });
  if (own.length < 2) return undefined;
  // Every word of the block must be in one of its parts: where poppler joins some of its words into a
  // line with another block's (a label, its count and the next panel's label on one printed row), the
  // lines found are not the whole block, and splitting by them would drop the rest of its text.
  if (own.reduce((n, l) => n + squash(l.text).length, 0) < text.length) return undefined;
  // A line that itself crosses a gutter: the block is not a join of columns; leave it to the parser.
  if (own.some((l) => across.some((g) => l.xMin < g.xMin && l.xMax > g.xMax))) return undefined;
  const columnOf = (l: Line) => across.filter((g) => g.xMax <= (l.xMin + l.xMax) / 2).length;
  const columns = new Map<number, Line[]>();
  for (const line of own) columns.set(columnOf(line), [...(columns.get(columnOf(line)) ?? []), line]);
  if (columns.size < 2) return undefined;
  // A listing ("NEEL KASHKARI   REP   247"): a column after the first holds only values — figures and
  // short codes. Each printed line is then an entry of its own, not a line of a paragraph to re-wrap.
  const keys = [...columns.keys()].sort((a, b) => a - b);
  const listing = keys.slice(1).some((key) => columns.get(key)!.every((l) => VALUE.test(l.text.trim())));
  if (row && !keys.slice(1).every((key) => columns.get(key)!.every((l) => VALUE.test(l.text.trim())))) return undefined;
  const parts: Block[] = [];
  // A listing's label may take its column's width up to the next gutter: its translation ("NO" → "Núm")
  // is set left where the source's was, and never breaks inside a word for want of the width it had free.
  const byLeft = [...across].sort((a, b) => a.xMin - b.xMin);
  const labelRoom = (key: number, labels: Line[]) =>
    listing && (block.align === undefined || block.align === 'left') && !labels.every((l) => VALUE.test(l.text.trim())) ? (byLeft[key]?.xMin ?? box.xMax) - 1 : -Infinity;
  for (const key of keys) {
    const column = columns.get(key)!.sort((a, b) => a.yMin - b.yMin);
    const right = labelRoom(key, column);
    // A paragraph's gap inside one column (more than 1.6 × the usual line pitch) starts a new part.
    const pitches = column.slice(1).map((l, i) => l.yMin - column[i]!.yMin).sort((a, b) => a - b);
    const pitch = pitches[Math.floor(pitches.length / 2)] ?? 0;
    let current: Line[] = [];
    const flush = () => {
      if (current.length === 0) return;
      const bbox: BoundingBox = { l: Math.min(...current.map((l) => l.xMin)), r: Math.max(right, ...current.map((l) => l.xMax)), t: pageHeight - Math.min(...current.map((l) => l.yMin)), b: pageHeight - Math.max(...current.map((l) => l.yMax)) };
      const { spans, lineBreaks: _breaks, ...rest } = block;
      const text = joinLines(current.map((l) => l.text));
      const cut = spans ? spansOf(spans, block.text, text) : undefined;
      // The part's own line breaks (the whole block's would break a listing's name where the block's third line did).
      const breaks = current.slice(1).map((_, k) => joinLines(current.slice(0, k + 1).map((l) => l.text)).length);
      const lineBreaks = breaks.length > 0 && breaks.every((b, k) => b > (breaks[k - 1] ?? 0) && b < text.length) ? { lineBreaks: breaks } : {};
      parts.push({ ...rest, text, bbox, ...lineBreaks, ...(cut ? { spans: cut } : {}) });
      current = [];
    };
    for (const line of column) {
      const last = current.at(-1);
      if (last && (listing || (pitch > 0 && line.yMin - last.yMin > pitch * 1.6))) flush();
      current.push(line);
    }
    flush();
  }
  return parts;
}

/** The document with every block that spans columns split into one block per column, in reading order. */
export function splitPages(document: ParsedDocument, poppler: PopplerPage[]): { document: ParsedDocument; split: number } {
  let split = 0;
  const pages: Page[] = document.pages.map((page, i) => {
    const found = poppler[i];
    if (!found || page.textSource === 'ocr') return page;
    const strips = gutters(linesOf(found));
    if (strips.length === 0) return page;
    const parts = page.blocks.map((block) => {
      const lines = linesCutAtGutters(found, strips, { xMin: block.bbox.l, xMax: block.bbox.r, yMin: page.height - block.bbox.t, yMax: page.height - block.bbox.b });
      return splitBlock(block, page.height, lines, strips) ?? [block];
    });
    if (parts.every((p) => p.length === 1)) return page;
    split += parts.filter((p) => p.length > 1).length;
    // A caption names its table by index: the index moves with the parts inserted before it.
    const newIndex = (index: number) => parts.slice(0, index).reduce((n, p) => n + p.length, 0);
    const blocks = parts.flat().map((b) => (b.captionOf?.kind === 'table' ? { ...b, captionOf: { ...b.captionOf, index: newIndex(b.captionOf.index) } } : b));
    return { ...page, blocks };
  });
  return { document: { ...document, pages }, split };
}

/** Reads the source's lines with poppler and splits the blocks that span columns (before translation). */
export async function splitColumnSpanningBlocks(source: Uint8Array, document: ParsedDocument, signal?: AbortSignal): Promise<ParsedDocument> {
  const poppler = await popplerPages(source, signal);
  return splitPages(document, poppler).document;
}
