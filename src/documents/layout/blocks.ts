// Stage 2 — lines → blocks: paragraphs, list items and code, each with its style (size, weight,
// alignment, line height) for the translation overlay to set text in the same place.
import type { Block } from '../document.ts';
import { mirrorLine } from './bidi.ts';
import { CJK, dominant, joinLines, LINE_PITCH, overlapsX, similarSize, union, type Line } from './geometry.ts';
import { blockStyles, inlineFormulas } from './styles.ts';

/** "• item", "- item", "* item", "– item", "1. item", "1) item", "a) item": the marker and the rest. */
const LIST_MARKER = /^(?:([•◦▪‣●○■□►▸➢➤✓✔❖◆◇▶➔])\s*|([-*–+])\s+|(\(?\d{1,3}[.)]|\(?[a-zA-Z]\))\s+)(?=\S)/u;

export function listMarker(text: string): { marker: string; rest: string } | undefined {
  const match = LIST_MARKER.exec(text);
  if (!match) return undefined;
  return { marker: match[1] ?? match[2] ?? match[3] ?? '', rest: text.slice(match[0].length) };
}

type Draft = { lines: Line[]; marker?: string };

/**
 * "1.1 Scope of the study", "2.3.1 Rejected readings": a multi-level section number and a
 * capitalised title of at most 60 characters, not ending like a sentence, a list entry or a table
 * of contents line (punctuation, a page number, dot leaders).
 */
const NUMBERED_HEADING = /^\d{1,2}(?:\.\d{1,2}){1,4}\.?\s+\p{Lu}[^.:;,!?…]{0,60}$/u;
export const numberedHeadingLine = (text: string) => NUMBERED_HEADING.test(text) && !/\d$/.test(text);

/**
 * Groups lines into blocks: a line continues the block directly above it (the nearest one it
 * overlaps horizontally) when the font size and weight match and the baseline-to-baseline distance
 * is a line's, not a paragraph break's. A list marker always starts a new block, and a list item's
 * wrapped lines must be indented under its text.
 */
export function groupBlocks(lines: Line[], options: { ocr?: boolean } = {}): Block[] {
  const drafts: Draft[] = [];
  const pitch = linePitch(lines);
  for (const line of [...lines].sort((a, b) => b.baseline - a.baseline || a.bbox.l - b.bbox.l)) {
    const item = listMarker(line.text);
    const above = nearestAbove(drafts, line);
    const last = above?.lines.at(-1);
    // On a scan a heading set apart only by its weight looks like body text: a numbered heading
    // line stands alone (see numberedHeadingLine).
    const heading = options.ocr === true && (numberedHeadingLine(line.text) || (last !== undefined && above?.lines.length === 1 && numberedHeadingLine(last.text)));
    if (above && !item && !heading && continues(above, line, pitch)) above.lines.push(line);
    else drafts.push(item ? { lines: [line], marker: item.marker } : { lines: [line] });
  }
  return drafts.map(toBlock);
}

function nearestAbove(drafts: Draft[], line: Line): Draft | undefined {
  let best: Draft | undefined;
  let bestDistance = Infinity;
  for (const draft of drafts) {
    const last = draft.lines.at(-1);
    // A code line may sit under any of the listing's lines ("}" under "function", left of the indented body).
    const reach = last?.mono && line.mono ? union(draft.lines.map((l) => l.bbox)) : last?.bbox;
    if (!last || !reach || !overlapsX(reach, line.bbox)) continue;
    const distance = last.baseline - line.baseline;
    if (distance > 0 && distance < bestDistance) [best, bestDistance] = [draft, distance];
  }
  return best;
}

/** Leading up to this (in em) is a paragraph's, when the page sets its lines that far apart. */
const MAX_LEADING = 2.2;
/**
 * …and for lines of Chinese, Japanese or Korean, whose glyphs fill the whole em square (a Latin line's
 * letters about 0.7 of it): a report "double-spaced" in Word sets them about 2.2–2.4 em apart, its
 * paragraphs a further third of an em.
 */
const MAX_CJK_LEADING = 2.6;
/** A line is CJK when at least half its letters are. */
const isCjkLine = (line: Line) => {
  const letters = [...line.text.replace(/[\s\p{P}\d]/gu, '')];
  return letters.length > 0 && letters.filter((c) => CJK.test(c)).length * 2 >= letters.length;
};

/**
 * The page's own line pitch in em: the distance from a line to the nearest line above it of the same
 * size that recurs most tightly — the smallest pitch that at least a quarter of the lines (and two)
 * share. Paragraph gaps are wider and rarer; a paragraph's own lines are the tight recurring pitch,
 * however long its first lines run. Latin body text is set about 1.2 em apart, but Korean and Chinese
 * reports commonly 1.6–1.9 em, and a fixed limit would make each of their lines a paragraph.
 */
export function linePitch(lines: Line[]): number {
  const counts = new Map<number, number>();
  /** The pitches measured between CJK lines, whose leading may run wider (MAX_CJK_LEADING). */
  const cjkPitches = new Set<number>();
  let measured = 0;
  for (const line of lines) {
    let nearest = Infinity;
    for (const other of lines) {
      const distance = other.baseline - line.baseline;
      if (distance > 0 && distance < nearest && overlapsX(other.bbox, line.bbox) && similarSize(other.size, line.size)) nearest = distance;
    }
    const em = Math.round((nearest / line.size) * 20) / 20;
    const cjk = isCjkLine(line);
    if (em < 1 || em > (cjk ? MAX_CJK_LEADING : MAX_LEADING)) continue;
    if (cjk) cjkPitches.add(em);
    counts.set(em, (counts.get(em) ?? 0) + 1);
    measured += 1;
  }
  const recurring = [...counts].filter(([, count]) => count >= Math.max(2, 0.25 * measured)).map(([em]) => em);
  if (recurring.length === 0) return LINE_PITCH;
  const tightest = Math.min(...recurring);
  // spec (issue 41): "double-spaced CJK lines joined into their paragraphs" — the line gap judged
  // against the CJK line's own height, so the 12 % slack over a CJK page's pitch is not cut at the Latin limit.
  return Math.max(LINE_PITCH, Math.min(cjkPitches.has(tightest) ? MAX_CJK_LEADING : MAX_LEADING, tightest * 1.12));
}

function continues(draft: Draft, line: Line, pitch: number): boolean {
  // A right-to-left paragraph starts at its right edge: its indents are read on the lines mirrored.
  if (line.rtl) return continues({ ...draft, lines: draft.lines.map(mirrorLine) }, mirrorLine(line), pitch);
  const last = draft.lines.at(-1);
  const first = draft.lines[0];
  if (!last || !first) return false;
  const size = Math.max(last.size, line.size);
  if (!similarSize(last.size, line.size) || last.bold !== line.bold) return false;
  // spec (issue 41): "a blank line inside a listing does not end it": code lines one blank line apart are one listing.
  const blankLines = last.mono && line.mono ? 2 : 1;
  if (last.baseline - line.baseline > blankLines * pitch * size) return false;
  // A line of its own style is a heading of its own: an italic line over an upright paragraph
  // ("Boots Self-Locking Nut"), or a short italic line after one; a single line a notch larger than
  // the text below it ("(1) …" at 12.5 pt over 11.5-pt text).
  const width = Math.max(...draft.lines.map((l) => l.bbox.r)) - Math.min(...draft.lines.map((l) => l.bbox.l));
  const short = line.bbox.r - line.bbox.l < 0.7 * width;
  if (Boolean(last.italic) !== Boolean(line.italic) && (draft.lines.length === 1 || short)) return false;
  if (draft.lines.length === 1 && last.size >= line.size * 1.05) return false;
  if (draft.marker !== undefined) return line.bbox.l > first.bbox.l + 0.5 * size;
  return !indentedStart(draft, line, size);
}

/**
 * A paragraph whose lines follow at the same pitch as the one before begins with its first-line
 * indent: the line starts an indent to the right of the left edge the lines above kept, and runs
 * most of the block's width (a centred title's short last line is no paragraph).
 */
function indentedStart(draft: Draft, line: Line, size: number): boolean {
  if (draft.lines.length < 2) return false;
  const last = draft.lines.at(-1);
  // Code is indented by its own structure, not by paragraphs.
  if (!last || last.mono || line.mono) return false;
  const left = Math.min(...draft.lines.map((l) => l.bbox.l));
  const right = Math.max(...draft.lines.map((l) => l.bbox.r));
  const indent = line.bbox.l - left;
  return Math.abs(last.bbox.l - left) <= 0.3 * size && indent >= 0.8 * size && indent <= 4 * size && line.bbox.r - line.bbox.l >= 0.6 * (right - left);
}

/** A display formula is at most this many lines… */
const MAX_FORMULA_LINES = 4;
/** …has a relation or an operator… */
const MATH_SIGN = /[=<>≤≥≈≠≡∼∝∑∏∫∮√±∓×÷→←↔⇒⇔∈∉⊂⊆∪∩∀∃∂∇]/u;
/** …and hardly any words of running text (four letters or more outside the mathematics fonts). */
const MAX_FORMULA_WORDS = 2;

/**
 * spec (issue 25): "display formulas kept as one block (label formula), never scattered into
 * words" — a short block set partly in a mathematics font, with a relation or an operator, and
 * (nearly) no words of prose: "a² + 8 = 12" on a line of its own.
 */
function isDisplayFormula(lines: Line[], text: string): boolean {
  if (lines.length > MAX_FORMULA_LINES || !lines.some((l) => l.math) || !MATH_SIGN.test(text)) return false;
  return (text.match(/\p{L}{4,}/gu) ?? []).length <= MAX_FORMULA_WORDS;
}

/** A block of at most this many lines keeps where its lines break (a sidebar, an address, a margin note). */
const MAX_BROKEN_LINES = 8;

function toBlock(draft: Draft): Block {
  const text = draft.lines.map((l) => l.text).reduce(joinLines, '').replace(/\u00ad$/, '');
  const chars = (l: Line) => l.text.length;
  const block: Block = {
    label: draft.marker === undefined ? 'text' : 'list_item',
    text: draft.marker === undefined ? text : (listMarker(text)?.rest ?? text),
    bbox: union(draft.lines.map((l) => l.bbox)),
    fontSize: dominant(draft.lines.map((l): [number, number] => [l.size, chars(l)])) ?? 0,
    bold: dominant(draft.lines.map((l): [boolean, number] => [l.bold, chars(l)])) ?? false,
  };
  if (draft.marker !== undefined) Object.assign(block, markerStyle(draft));
  const mono = dominant(draft.lines.map((l): [boolean, number] => [Boolean(l.mono), chars(l)])) ?? false;
  if (mono) {
    // spec (issue 17): "code (monospaced blocks, kept verbatim)" — one line per printed line.
    block.label = 'code';
    // Indentation is the code's structure: each line keeps its indent in character widths (a
    // monospaced character advances about 0.6 em).
    const left = Math.min(...draft.lines.map((l) => l.bbox.l));
    // …and a blank line where its lines are set a line further apart than their pitch.
    const gaps = draft.lines.slice(1).map((l, i) => (draft.lines[i]?.baseline ?? 0) - l.baseline);
    const pitch = Math.min(...gaps.filter((g) => g > 0));
    block.text = draft.lines.map((l, i) => (i > 0 && (gaps[i - 1] ?? 0) > 1.5 * pitch ? '\n' : '') + ' '.repeat(Math.max(0, Math.round((l.bbox.l - left) / (0.6 * l.size)))) + l.text).join('\n');
    delete block.marker;
    delete block.markerColor;
    delete block.markerBox;
  }
  if (dominant(draft.lines.map((l): [boolean, number] => [Boolean(l.italic), chars(l)]))) block.italic = true;
  if (block.label !== 'code' && draft.lines.length >= 2 && draft.lines.length <= MAX_BROKEN_LINES) {
    // Where each printed line starts in the joined text (a list item's marker is not in its text).
    const offset = block.text === text ? 0 : text.length - block.text.length;
    const breaks = draft.lines.slice(1).map((_, k) => draft.lines.slice(0, k + 1).map((l) => l.text).reduce(joinLines, '').length - offset);
    if (breaks.every((b, k) => b > (breaks[k - 1] ?? 0) && b < block.text.length)) block.lineBreaks = breaks;
  }
  if (block.label === 'text' && isDisplayFormula(draft.lines, block.text)) block.label = 'formula';
  Object.assign(block, lineStyle(draft.lines));
  if (block.label !== 'code') Object.assign(block, blockStyles(draft.lines, block));
  if (block.label !== 'code' && block.label !== 'formula') {
    const formulas = inlineFormulas(draft.lines, block.text);
    if (formulas.length > 0) block.formulas = formulas;
  }
  return block;
}

/** A symbol bullet is one glyph; its box ends before the next glyph could start (a third of an em). */
export const SYMBOL_MARKER = /^[•◦▪‣●○■□►▸➢➤✓✔❖◆◇▶➔*∗–-]$/u;

/**
 * The marker's own colour (the first run of the first line, when the marker is drawn apart: a red
 * square beside black text) and, for a symbol bullet, where its glyph starts, so the translation
 * keeps it as the source drew it (issue 42: "list bullets and other symbol glyphs … kept in the
 * source's glyphs, colour and place").
 */
function markerStyle(draft: Draft): Pick<Block, 'marker' | 'markerColor' | 'markerBox'> {
  const marker = draft.marker!;
  const first = draft.lines[0]!;
  const piece = first.pieces?.[0];
  const style: Pick<Block, 'marker' | 'markerColor' | 'markerBox'> = { marker };
  if (piece && piece.text.startsWith(marker) && piece.color) style.markerColor = piece.color;
  // Only a bullet drawn as a run of its own is copied: glyphs are copied by the text operation they start in.
  if (SYMBOL_MARKER.test(marker) && !first.rtl && piece?.text.trim() === marker) style.markerBox = { l: first.bbox.l - 0.5, r: first.bbox.l + first.size / 3, t: first.bbox.t, b: first.bbox.b };
  return style;
}

/** Line height and alignment of a block's lines, for setting a translation in the same place. */
function lineStyle(lines: Line[]): Pick<Block, 'align' | 'lineHeight'> {
  if (lines.length < 2) return { align: 'left' };
  const pitches = lines.slice(1).map((l, i) => (lines[i]?.baseline ?? l.baseline) - l.baseline);
  const lineHeight = Math.round((pitches.reduce((a, b) => a + b, 0) / pitches.length) * 100) / 100;
  const lefts = lines.map((l) => l.bbox.l);
  const rights = lines.slice(0, -1).map((l) => l.bbox.r);
  const spread = (xs: number[]) => Math.max(...xs) - Math.min(...xs);
  const size = lines[0]?.size ?? 10;
  const centres = lines.map((l) => (l.bbox.l + l.bbox.r) / 2);
  let align: Block['align'] = 'left';
  if (spread(lefts) <= 0.3 * size && rights.length > 0 && spread(rights) <= 0.3 * size) align = 'justify';
  else if (spread(lefts) > size && spread(centres) <= 0.5 * size) align = 'center';
  else if (spread(lefts) > size && spread(lines.map((l) => l.bbox.r)) <= 0.3 * size) align = 'right';
  return { align, lineHeight };
}
