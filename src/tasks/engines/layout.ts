// From positioned text to a page of labelled blocks in reading order: runs → lines → blocks (plus
// ruled tables) → reading order across columns; then, across the whole document, page headers and
// footers, headings and their levels. Pure geometry: no pdf.js here, so fixtures can be built by hand.
// Lengths are in PDF points with the origin at the bottom left, so a larger y is higher on the page.
import type { Block, BoundingBox, Page, ParsedDocument, TextSource } from './document.ts';
import { findTables } from './layout/tables.ts';

/** A piece of text as pdf.js placed it: x and y are the start of its baseline. */
export type TextRun = {
  text: string;
  x: number;
  y: number;
  width: number;
  size: number;
  bold: boolean;
  hasEOL: boolean;
  italic?: boolean;
  /** Set in a monospaced font (code). */
  mono?: boolean;
  /** The glyphs' height in points when known (OCR boxes); otherwise estimated from the size. */
  height?: number;
};

/** An image or figure region drawn on the page. */
export type ImageRegion = { bbox: BoundingBox };

/** A straight rule drawn on the page (a table border), normalised so x1 ≤ x2 and y1 ≤ y2. */
export type Ruling = { x1: number; y1: number; x2: number; y2: number };

/** One line of text: runs sharing a baseline with no column-wide gap between them. */
export type Line = { text: string; bbox: BoundingBox; baseline: number; size: number; bold: boolean; mono?: boolean; italic?: boolean };

// Glyph boxes are estimated from the font size (pdf.js gives no per-glyph heights): ascenders reach
// about 0.8 em above the baseline and descenders about 0.2 em below.
const ASCENT = 0.8;
const DESCENT = 0.2;
/** Runs whose baselines differ by less than this (in em) are on one line; covers sub- and superscripts. */
const BASELINE_TOLERANCE = 0.35;
/** A horizontal gap wider than this (in em) separates columns or table cells, not words. */
const COLUMN_GAP = 1.5;
/** …and this much less when pdf.js marked the left run as ending its line (hasEOL). */
const EOL_GAP = 0.8;
/** A gap wider than this (in em) between runs is a word space. */
const WORD_GAP = 0.12;
/** Consecutive lines of one paragraph are at most this far apart, baseline to baseline (in em). */
const LINE_PITCH = 1.5;
/** Font sizes within this ratio count as the same size. */
const SAME_SIZE = 1.15;

const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u3000-\u303f\uff00-\uffef]/u;

const SOFT_HYPHEN = '\u00ad';

/**
 * Joins two pieces of running text. CJK needs no space. A soft hyphen at the break is a
 * hyphenation point: it goes, the word closes up. A hard hyphen before a lowercase word stays, with
 * no space ("well-known"); a hyphenated break ("manip-ulation") is kept as printed rather than
 * guessed at, since dropping it would also break real compounds.
 */
export function joinText(left: string, right: string): string {
  if (left === '') return right;
  if (right === '') return left;
  const last = left.at(-1) ?? '';
  const first = right[0] ?? '';
  if (last === SOFT_HYPHEN) return left.slice(0, -1) + right;
  if (CJK.test(last) && CJK.test(first)) return left + right;
  if (/\p{L}-$/u.test(left) && /^\p{Ll}/u.test(first)) return left + right;
  return `${left} ${right}`;
}

/** The value carrying the most weight, e.g. the font size covering the most characters. */
export function dominant<T>(entries: Array<[T, number]>): T | undefined {
  const totals = new Map<T, number>();
  for (const [value, weight] of entries) totals.set(value, (totals.get(value) ?? 0) + weight);
  let best: T | undefined;
  let bestWeight = -1;
  for (const [value, weight] of totals) if (weight > bestWeight) [best, bestWeight] = [value, weight];
  return best;
}

/** The smallest box holding all of `boxes` (at least one). */
export function union(boxes: BoundingBox[]): BoundingBox {
  return boxes.reduce((u, b) => ({ l: Math.min(u.l, b.l), t: Math.max(u.t, b.t), r: Math.max(u.r, b.r), b: Math.min(u.b, b.b) }), {
    l: Infinity,
    t: -Infinity,
    r: -Infinity,
    b: Infinity,
  });
}

// --- Runs → lines ------------------------------------------------------------------------------

/** Groups runs into lines: same baseline within tolerance, ordered by x, split where the gap is column-wide. */
export function groupLines(runs: TextRun[]): Line[] {
  const sorted = runs.filter((run) => run.text.trim() !== '').sort((a, b) => b.y - a.y || a.x - b.x);
  const rows: TextRun[][] = [];
  for (const run of sorted) {
    const row = rows.at(-1);
    const anchor = row?.[0];
    if (row && anchor && Math.abs(anchor.y - run.y) <= BASELINE_TOLERANCE * Math.min(anchor.size, run.size)) row.push(run);
    else rows.push([run]);
  }
  return attachScripts(rows).flatMap((row) => splitAtGaps(row.sort((a, b) => a.x - b.x))).map(toLine);
}

/** A run this much smaller than its neighbours' text is a superscript, subscript or a logo's raised letter. */
const SCRIPT_SIZE = 0.85;

/**
 * Rows of small text that sit within the height of a larger row and touch one of its runs (a
 * footnote mark, an exponent, the raised "A" of the LaTeX logo) are part of that row, so they
 * never become lines, headings or paragraphs of their own.
 */
function attachScripts(rows: TextRun[][]): TextRun[][] {
  const kept: TextRun[][] = [];
  const small = (row: TextRun[]) => Math.max(...row.map((r) => r.size));
  for (const row of rows) {
    const size = small(row);
    const host = rows.find((other) => {
      if (other === row || small(other) * SCRIPT_SIZE < size) return false;
      const anchor = other[0];
      if (!anchor) return false;
      const top = anchor.y + ASCENT * anchor.size;
      const bottom = anchor.y - 0.45 * anchor.size;
      return row.every((run) => run.y <= top && run.y >= bottom && other.some((o) => run.x <= o.x + o.width + 0.6 * o.size && run.x + run.width >= o.x - 0.6 * o.size));
    });
    if (host) host.push(...row);
    else kept.push(row);
  }
  return kept;
}

function splitAtGaps(row: TextRun[]): TextRun[][] {
  const lines: TextRun[][] = [];
  let current: TextRun[] = [];
  let right = -Infinity;
  for (const run of row) {
    const previous = current.at(-1);
    if (previous) {
      const limit = (previous.hasEOL ? EOL_GAP : COLUMN_GAP) * Math.max(previous.size, run.size);
      if (run.x - right > limit) {
        lines.push(current);
        current = [];
        right = -Infinity;
      }
    }
    const doubled = previous && previous.text === run.text && Math.abs(previous.x - run.x) < 1;
    if (!doubled) current.push(run); // some generators fake bold by drawing the text twice
    right = Math.max(right, run.x + run.width);
  }
  if (current.length > 0) lines.push(current);
  return lines;
}

function toLine(runs: TextRun[]): Line {
  let text = '';
  let right = -Infinity;
  for (const run of runs) {
    const gap = run.x - right;
    const spaced = gap > WORD_GAP * run.size && !/\s$/.test(text) && !/^\s/.test(run.text);
    text = spaced ? joinText(text, run.text) : text + run.text;
    right = Math.max(right, run.x + run.width);
  }
  const size = dominant(runs.map((r): [number, number] => [r.size, r.text.length])) ?? 0;
  const boldChars = runs.reduce((n, r) => n + (r.bold ? r.text.length : 0), 0);
  const chars = runs.reduce((n, r) => n + r.text.length, 0);
  return {
    // A soft hyphen inside a line is invisible; one at the end marks where the word was split.
    text: text.replace(/\s+/g, ' ').trim().replace(/\u00ad(?!$)/g, ''),
    bbox: union(runs.map((r) => ({ l: r.x, r: r.x + r.width, t: r.y + ASCENT * r.size, b: r.y - DESCENT * r.size }))),
    baseline: runs.reduce((lowest, r) => Math.min(lowest, r.y), Infinity),
    size,
    bold: boldChars * 2 > chars,
    // CJK fonts are fixed-pitch by nature: their text is not code.
    mono: runs.reduce((n, r) => n + (r.mono && !CJK.test(r.text) ? r.text.length : 0), 0) * 2 > chars,
    italic: runs.reduce((n, r) => n + (r.italic ? r.text.length : 0), 0) * 2 > chars,
  };
}

// --- Lines → blocks ----------------------------------------------------------------------------

/** "• item", "- item", "* item", "– item", "1. item", "1) item", "a) item": the marker and the rest. */
const LIST_MARKER = /^(?:([•◦▪‣●○■□►▸])\s*|([-*–+])\s+|(\(?\d{1,3}[.)]|\(?[a-zA-Z]\))\s+)(?=\S)/u;

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

const overlapsX = (a: BoundingBox, b: BoundingBox) => a.l < b.r && b.l < a.r;
const similarSize = (a: number, b: number) => Math.max(a, b) <= SAME_SIZE * Math.min(a, b);

/**
 * Groups lines into blocks: a line continues the block directly above it (the nearest one it
 * overlaps horizontally) when the font size and weight match and the baseline-to-baseline distance
 * is a line's, not a paragraph break's. A list marker always starts a new block, and a list item's
 * wrapped lines must be indented under its text.
 */
export function groupBlocks(lines: Line[], options: { ocr?: boolean } = {}): Block[] {
  const drafts: Draft[] = [];
  for (const line of [...lines].sort((a, b) => b.baseline - a.baseline || a.bbox.l - b.bbox.l)) {
    const item = listMarker(line.text);
    const above = nearestAbove(drafts, line);
    const last = above?.lines.at(-1);
    // On a scan a heading set apart only by its weight looks like body text: a numbered heading
    // line stands alone (see numberedHeadingLine).
    const heading = options.ocr === true && (numberedHeadingLine(line.text) || (last !== undefined && above?.lines.length === 1 && numberedHeadingLine(last.text)));
    if (above && !item && !heading && continues(above, line)) above.lines.push(line);
    else drafts.push(item ? { lines: [line], marker: item.marker } : { lines: [line] });
  }
  return drafts.map(toBlock);
}

function nearestAbove(drafts: Draft[], line: Line): Draft | undefined {
  let best: Draft | undefined;
  let bestDistance = Infinity;
  for (const draft of drafts) {
    const last = draft.lines.at(-1);
    if (!last || !overlapsX(last.bbox, line.bbox)) continue;
    const distance = last.baseline - line.baseline;
    if (distance > 0 && distance < bestDistance) [best, bestDistance] = [draft, distance];
  }
  return best;
}

function continues(draft: Draft, line: Line): boolean {
  const last = draft.lines.at(-1);
  const first = draft.lines[0];
  if (!last || !first) return false;
  const size = Math.max(last.size, line.size);
  if (!similarSize(last.size, line.size) || last.bold !== line.bold) return false;
  if (last.baseline - line.baseline > LINE_PITCH * size) return false;
  return draft.marker === undefined || line.bbox.l > first.bbox.l + 0.5 * size;
}

function toBlock(draft: Draft): Block {
  const text = draft.lines.map((l) => l.text).reduce(joinText, '').replace(/\u00ad$/, '');
  const chars = (l: Line) => l.text.length;
  const block: Block = {
    label: draft.marker === undefined ? 'text' : 'list_item',
    text: draft.marker === undefined ? text : (listMarker(text)?.rest ?? text),
    bbox: union(draft.lines.map((l) => l.bbox)),
    fontSize: dominant(draft.lines.map((l): [number, number] => [l.size, chars(l)])) ?? 0,
    bold: dominant(draft.lines.map((l): [boolean, number] => [l.bold, chars(l)])) ?? false,
  };
  if (draft.marker !== undefined) block.marker = draft.marker;
  const mono = dominant(draft.lines.map((l): [boolean, number] => [Boolean(l.mono), chars(l)])) ?? false;
  if (mono) {
    // spec (issue 17): "code (monospaced blocks, kept verbatim)" — one line per printed line.
    block.label = 'code';
    block.text = draft.lines.map((l) => l.text).join('\n');
    delete block.marker;
  }
  if (dominant(draft.lines.map((l): [boolean, number] => [Boolean(l.italic), chars(l)]))) block.italic = true;
  Object.assign(block, lineStyle(draft.lines));
  return block;
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

// --- Reading order -----------------------------------------------------------------------------

/** A column gutter is at least this wide (points). */
const MIN_GUTTER = 5;

const topThenLeft = (a: Block, b: Block) => b.bbox.t - a.bbox.t || a.bbox.l - b.bbox.l;

/**
 * Orders blocks the way a person reads them, by recursive cuts (after docling's and marker's
 * column handling). Where vertical gutters that no block crosses split the blocks into side-by-side
 * groups, each column is read top to bottom, left column first. Otherwise the region is cut into
 * horizontal bands at whitespace, and consecutive bands are read as one region for as long as they
 * still form columns together: two columns whose paragraph breaks line up are then read column by
 * column (A1 A2 B1 B2, not A1 B1 A2 B2), and a column running longer than its neighbour stays in
 * its column. A block crossing the gutter (a title above the columns, a closing paragraph below)
 * starts a new region, so it keeps its place.
 */
export function readingOrder(blocks: Block[]): Block[] {
  if (blocks.length <= 1) return [...blocks];
  const columns = columnsOf(blocks);
  if (columns) return columns.flatMap(readingOrder);
  const bands = bandsOf(blocks);
  const regions: Block[][] = [];
  for (const band of bands) {
    const previous = regions.at(-1);
    if (previous && !crossesGutters(previous, band) && columnsOf([...previous, ...band])) previous.push(...band);
    else regions.push([...band]);
  }
  // One region would mean the blocks form columns after all, which was ruled out above; if the
  // region is the whole input anyway, stop cutting rather than recurse on the same blocks.
  if (regions.length <= 1) return [...blocks].sort(topThenLeft);
  return regions.flatMap(readingOrder);
}

/**
 * spec (issue 17): "full-width titles and figures in between columns placed where they belong" —
 * a region that crosses the gutter between the columns of the band below it (a centred title over
 * two column headings) is above those columns, not one of them, even when it happens to leave a
 * narrow gap of its own beside a short heading.
 */
function crossesGutters(region: Block[], band: Block[]): boolean {
  const columns = columnsOf(band);
  if (!columns) return false;
  const spans = columns.map((c) => union(c.map((b) => b.bbox)));
  const gutters = spans.slice(1).map((span, i) => ({ l: spans[i]?.r ?? span.l, r: span.l }));
  // Justified lines of one column end a fraction of a point apart: reaching into the gutter by less
  // than a third of its least width is still beside it.
  const slack = MIN_GUTTER / 3;
  return region.some((b) => gutters.some((g) => b.bbox.l < g.r - slack && b.bbox.r > g.l + slack));
}

/** Side-by-side groups separated by vertical gutters, left to right; undefined when there are none. */
function columnsOf(blocks: Block[]): Block[][] | undefined {
  const groups: Block[][] = [];
  let right = -Infinity;
  for (const block of [...blocks].sort((a, b) => a.bbox.l - b.bbox.l)) {
    const group = groups.at(-1);
    if (group && block.bbox.l <= right + MIN_GUTTER) group.push(block);
    else groups.push([block]);
    right = Math.max(right, block.bbox.r);
  }
  if (groups.length < 2) return undefined;
  // Groups that do not sit beside each other (one wholly above the other) are not columns.
  const spans = groups.map((g) => union(g.map((b) => b.bbox)));
  for (let i = 1; i < spans.length; i += 1) {
    const [before, after] = [spans[i - 1], spans[i]];
    if (!before || !after || after.b >= before.t || before.b >= after.t) return undefined;
  }
  return groups;
}

/** Blocks split at horizontal whitespace that crosses the whole region, top to bottom. */
function bandsOf(blocks: Block[]): Block[][] {
  const bands: Block[][] = [];
  let bottom = Infinity;
  for (const block of [...blocks].sort(topThenLeft)) {
    const band = bands.at(-1);
    const overlapsBand = block.bbox.t > bottom + 1;
    if (band && overlapsBand) {
      band.push(block);
      bottom = Math.min(bottom, block.bbox.b);
    } else {
      bands.push([block]);
      bottom = block.bbox.b;
    }
  }
  return bands;
}

// --- Ruled tables ------------------------------------------------------------------------------

/** Rules shorter than this (points) are not table borders: underlined words, dashes drawn as paths. */
const MIN_RULE = 8;
/** Rule ends, crossings and edges within this distance (points) are the same. */
const SNAP = 2;

/** A table's cell edges: column edges left to right, row edges top to bottom. */
export type Grid = { xs: number[]; ys: number[] };

/** Sorted values with neighbours within SNAP merged into their mean. */
function snapped(values: number[]): number[] {
  const clusters: number[][] = [];
  for (const value of [...values].sort((a, b) => a - b)) {
    const cluster = clusters.at(-1);
    if (cluster && value - (cluster.at(-1) ?? value) <= SNAP) cluster.push(value);
    else clusters.push([value]);
  }
  return clusters.map((c) => c.reduce((sum, v) => sum + v, 0) / c.length);
}

/**
 * Grids formed by crossing horizontal and vertical rules, each with at least two rows and two
 * columns. The outer edges count even where no border is drawn, for tables ruled only inside.
 */
export function findGrids(rulings: Ruling[]): Grid[] {
  const horizontal = rulings.filter((r) => r.y2 - r.y1 <= 1 && r.x2 - r.x1 >= MIN_RULE);
  const vertical = rulings.filter((r) => r.x2 - r.x1 <= 1 && r.y2 - r.y1 >= MIN_RULE);
  const rules = [...horizontal, ...vertical];
  const parent = rules.map((_, i) => i);
  const root = (i: number): number => {
    let at = i;
    while (parent[at] !== at) at = parent[at] ?? at;
    return at;
  };
  horizontal.forEach((h, i) => {
    vertical.forEach((v, j) => {
      const crosses = v.x1 >= h.x1 - SNAP && v.x1 <= h.x2 + SNAP && h.y1 >= v.y1 - SNAP && h.y1 <= v.y2 + SNAP;
      if (crosses) parent[root(i)] = root(horizontal.length + j);
    });
  });
  const connected = new Map<number, number[]>();
  rules.forEach((_, i) => connected.set(root(i), [...(connected.get(root(i)) ?? []), i]));
  const grids: Grid[] = [];
  for (const members of connected.values()) {
    const hs = members.filter((i) => i < horizontal.length).map((i) => rules[i]).filter((r) => r !== undefined);
    const vs = members.filter((i) => i >= horizontal.length).map((i) => rules[i]).filter((r) => r !== undefined);
    if (hs.length === 0 || vs.length === 0) continue;
    const box = union([...hs, ...vs].map((r) => ({ l: r.x1, r: r.x2, b: r.y1, t: r.y2 })));
    const xs = snapped([box.l, box.r, ...vs.map((v) => v.x1)]);
    const ys = snapped([box.b, box.t, ...hs.map((h) => h.y1)]).reverse();
    if (xs.length >= 3 && ys.length >= 3) grids.push({ xs, ys });
  }
  return grids;
}

/** Puts each run in the grid cell holding its centre; returns the cell texts and the runs used. */
function fillGrid(grid: Grid, runs: TextRun[]): { cells: string[][]; used: Set<TextRun> } {
  const buckets = grid.ys.slice(1).map(() => grid.xs.slice(1).map((): TextRun[] => []));
  const used = new Set<TextRun>();
  const [top = 0, left = 0] = [grid.ys[0], grid.xs[0]];
  for (const run of runs) {
    const cx = run.x + run.width / 2;
    const cy = run.y + 0.3 * run.size;
    if (cy > top || cx < left) continue;
    const row = grid.ys.findIndex((y) => cy >= y) - 1;
    const col = grid.xs.findIndex((x) => cx <= x) - 1;
    const bucket = buckets[row]?.[col];
    if (!bucket) continue;
    bucket.push(run);
    used.add(run);
  }
  const cells = buckets.map((row) => row.map((cell) => groupLines(cell).map((l) => l.text).reduce(joinText, '')));
  return { cells, used };
}

/** Drops rows and columns that are empty in every cell (spacer rows, split borders). */
function withoutEmpty(cells: string[][]): string[][] {
  const rows = cells.filter((row) => row.some((c) => c !== ''));
  const keep = (rows[0] ?? []).map((_, col) => rows.some((row) => (row[col] ?? '') !== ''));
  return rows.map((row) => row.filter((_, col) => keep[col]));
}

/**
 * Tables found from their ruling: each grid with text in at least two rows and two columns becomes
 * a `table` block, and its runs leave the flow of text. Tables without vertical rules (rules only
 * between rows) and merged cells spanning several grid cells are not reconstructed.
 */
export function ruledTables(rulings: Ruling[], runs: TextRun[]): { tables: Block[]; rest: TextRun[] } {
  const tables: Block[] = [];
  let rest = runs;
  for (const grid of findGrids(rulings)) {
    const { cells, used } = fillGrid(grid, rest);
    const rows = withoutEmpty(cells);
    if (rows.length < 2 || (rows[0]?.length ?? 0) < 2) continue;
    rest = rest.filter((run) => !used.has(run));
    tables.push({
      label: 'table',
      text: rows.map((row) => row.join(' | ')).join('\n'),
      bbox: { l: grid.xs[0] ?? 0, r: grid.xs.at(-1) ?? 0, t: grid.ys[0] ?? 0, b: grid.ys.at(-1) ?? 0 },
      fontSize: dominant([...used].map((r): [number, number] => [r.size, r.text.length])) ?? 0,
      bold: false,
      cells: rows,
    });
  }
  return { tables, rest };
}

// --- One page ----------------------------------------------------------------------------------

export type PageContent = {
  pageNo: number;
  width: number;
  height: number;
  runs: TextRun[];
  rulings: Ruling[];
  images?: ImageRegion[];
  textSource?: TextSource;
  notes?: string[];
};

/** A page's blocks in reading order, labelled as far as one page can tell: text, list_item, table. */
export function layoutPage(content: PageContent): Page {
  const { tables, rest } = findTables(content.rulings, content.runs);
  const blocks = [...groupBlocks(groupLines(rest), { ocr: content.textSource === 'ocr' }), ...tables];
  return { pageNo: content.pageNo, width: content.width, height: content.height, blocks: readingOrder(blocks) };
}

// --- Across the document: page headers and footers, headings -----------------------------------

/** Page headers and footers sit in the top or bottom 8% of the page… */
const FURNITURE_ZONE = 0.08;
/** Headings are short: a larger-font block of more than this many characters is a lead paragraph. */
const MAX_HEADING_CHARS = 150;
const MAX_BOLD_HEADING_CHARS = 100;

type FurnitureLabel = 'page_header' | 'page_footer';

function furnitureZone(block: Block, page: Page): FurnitureLabel | undefined {
  if (block.label === 'table') return undefined;
  if (block.bbox.b >= page.height * (1 - FURNITURE_ZONE)) return 'page_header';
  if (block.bbox.t <= page.height * FURNITURE_ZONE) return 'page_footer';
  return undefined;
}

/** "Page 3" and "Page 4" are the same footer: digits are compared as placeholders. */
const furnitureKey = (zone: FurnitureLabel, text: string) => `${zone}:${text.toLowerCase().replace(/\d+/g, '#').replace(/\s+/g, ' ').trim()}`;

/** …and repeat (the same text, or with a changing page number) on at least half the pages, and at least two. */
export function markFurniture(pages: Page[]): Page[] {
  const pagesWith = new Map<string, Set<number>>();
  for (const page of pages) {
    for (const block of page.blocks) {
      const zone = furnitureZone(block, page);
      if (!zone) continue;
      const key = furnitureKey(zone, block.text);
      pagesWith.set(key, (pagesWith.get(key) ?? new Set()).add(page.pageNo));
    }
  }
  const needed = Math.max(2, Math.ceil(pages.length / 2));
  return pages.map((page) => ({
    ...page,
    blocks: page.blocks.map((block) => {
      const zone = furnitureZone(block, page);
      const repeats = zone !== undefined && (pagesWith.get(furnitureKey(zone, block.text))?.size ?? 0) >= needed;
      return repeats ? { ...block, label: zone } : block;
    }),
  }));
}

type BodyStyle = { size: number; bold: boolean };

/** The body text's size: the most common font size weighted by characters; and whether body text is bold. */
export function bodyStyle(pages: Page[]): BodyStyle | undefined {
  const flow = pages.flatMap((p) => p.blocks).filter((b) => b.label === 'text' || b.label === 'list_item');
  const size = dominant(flow.map((b): [number, number] => [Math.round(b.fontSize * 2) / 2, b.text.length]));
  if (size === undefined) return undefined;
  const atSize = flow.filter((b) => similarSize(b.fontSize, size) && b.fontSize < size * SAME_SIZE);
  return { size, bold: dominant(atSize.map((b): [boolean, number] => [b.bold, b.text.length])) ?? false };
}

const isBullet = (marker: string | undefined) => marker !== undefined && !/[\dA-Za-z]/.test(marker);

/**
 * A heading is a short block in a font larger than the body's, or a single bold line when body
 * text is not bold (not ending like a sentence, and not a bulleted item that happens to be bold).
 */
export function isHeading(block: Block, body: BodyStyle, page?: Page): boolean {
  if (block.label !== 'text' && block.label !== 'list_item') return false;
  // spec (issue 17): "numbered headings such as '2.1 …'": on a scanned page, where OCR sees no
  // weight, a numbered heading line standing alone is a heading by its number.
  if (page?.textSource === 'ocr' && block.label === 'text' && numberedHeadingLine(block.text)) return true;
  // spec (issue 17): "no heading is ever one or two characters" — marks, logo letters, page numbers.
  if (block.text.replace(/[\s\p{P}\p{S}]/gu, '').length <= 2) return false;
  const lines = (block.bbox.t - block.bbox.b) / (LINE_PITCH * block.fontSize);
  const larger = block.fontSize >= body.size * SAME_SIZE && block.text.length <= MAX_HEADING_CHARS && lines <= 3;
  const boldLine = block.bold && !body.bold && lines < 1 && block.text.length <= MAX_BOLD_HEADING_CHARS && !/[.,;]$/.test(block.text) && !isBullet(block.marker);
  return larger || boldLine;
}

/** Heading levels by distinct size, largest first: sizes within 0.75 pt are one level. */
function levelsBySize(sizes: number[]): (size: number) => number {
  const levels: number[] = [];
  for (const size of [...sizes].sort((a, b) => b - a)) if ((levels.at(-1) ?? Infinity) - size > 0.75) levels.push(size);
  return (size) => Math.min(6, 1 + levels.filter((level) => level > size + 0.75).length);
}

function asHeading(block: Block, level: number): Block {
  const { marker, ...rest } = block;
  // A numbered heading ("1. Introduction") was read as a list item; it keeps its number.
  return { ...rest, label: 'section_header', text: marker === undefined ? block.text : `${marker} ${block.text}`, level };
}

/**
 * The labels only the whole document can decide: repeated page headers and footers; headings with
 * levels; and `title` for the document's one largest heading when it is on page 1 and set larger
 * than the body text.
 */
export function labelDocument(doc: ParsedDocument): ParsedDocument {
  const pages = markFootnotes(markPageNumbers(markFurniture(doc.pages)));
  const body = bodyStyle(pages);
  if (!body) return { ...doc, pages: pages.map(attachCaptions) };
  const headingSizes = pages.flatMap((p) => p.blocks.filter((b) => isHeading(b, body, p) && sectionNumber(b) === undefined).map((b) => b.fontSize));
  const numberedSizes = new Map<number, number>();
  for (const page of pages) {
    for (const block of page.blocks) {
      const depth = isHeading(block, body, page) ? sectionNumber(block) : undefined;
      if (depth !== undefined) numberedSizes.set(Math.round(block.fontSize * 2) / 2, depth);
    }
  }
  const bySize = levelsBySize(headingSizes);
  // spec (issue 17): "numbered headings such as '2.1 …' get their depth from the number"; an
  // unnumbered heading set in the size of a numbered level takes that level.
  // Levels are Markdown depths: the title is 1, so a numbered section "2.1" is 3.
  const numbered = (depth: number | undefined) => (depth === undefined ? undefined : Math.min(6, depth + 1));
  const level = (block: Block) => numbered(sectionNumber(block) ?? numberedSizes.get(Math.round(block.fontSize * 2) / 2)) ?? bySize(block.fontSize);
  const labelled = pages.map((page) => ({
    ...page,
    blocks: page.blocks.map((b) => (isHeading(b, body, page) ? asHeading(b, level(b)) : b)),
  }));
  const topLevel = labelled.flatMap((page) => page.blocks.filter((b) => b.level === 1).map((block) => ({ page, block })));
  const [only] = topLevel;
  // A bold line at the body size is a heading, but too weak a signal for the document's title.
  if (topLevel.length === 1 && only?.page.pageNo === 1 && only.block.fontSize >= body.size * SAME_SIZE) only.block.label = 'title';
  const title = labelled[0]?.blocks.find((b) => b.label === 'title') ?? largestOnFirstPage(labelled[0], body);
  if (title) {
    title.label = 'title';
    title.level = 1;
    if (labelled[0]) demoteTitleMatter(labelled[0], title);
  }
  return { ...doc, pages: labelled.map(attachCaptions) };
}

// --- Roles: page numbers, footnotes, the title page, captions ----------------------------------

/** "3", "iv", "Page 3", "3 of 18", "- 3 -": a page number alone in its block. */
const PAGE_NUMBER = /^(?:page\s+)?[-–—]?\s*(?:\d{1,4}|[ivxlcdm]{1,7})\s*[-–—]?(?:\s*(?:of|\/)\s*\d{1,4})?$/iu;

/**
 * spec (issue 17): "page numbers ('1') … go to furniture, never the body". A page number is the
 * block nearest the bottom (or top) edge of its page with nothing else beside it, wherever the
 * document's margins put it.
 */
export function markPageNumbers(pages: Page[]): Page[] {
  return pages.map((page) => {
    const flow = page.blocks.filter((b) => b.label !== 'page_header' && b.label !== 'page_footer');
    const lowest = flow.reduce<Block | undefined>((low, b) => (!low || b.bbox.b < low.bbox.b ? b : low), undefined);
    const highest = flow.reduce<Block | undefined>((high, b) => (!high || b.bbox.t > high.bbox.t ? b : high), undefined);
    const blocks = page.blocks.map((block) => {
      if (!PAGE_NUMBER.test(block.text.trim())) return block;
      if (block === lowest && block.bbox.t < page.height / 4) return { ...block, label: 'page_footer' as const };
      if (block === highest && block.bbox.b > (page.height * 3) / 4) return { ...block, label: 'page_header' as const };
      return block;
    });
    return { ...page, blocks };
  });
}

/**
 * Footnotes: text set smaller than the body, below the last body-size text of the page, in its
 * lower half (a footnote mark or number usually starts it).
 */
export function markFootnotes(pages: Page[]): Page[] {
  const body = bodyStyle(pages);
  if (!body) return pages;
  return pages.map((page) => {
    const bodyBlocks = page.blocks.filter((b) => (b.label === 'text' || b.label === 'list_item' || b.label === 'table') && b.fontSize >= body.size * 0.95);
    const lowestBody = Math.min(...bodyBlocks.map((b) => b.bbox.b));
    const blocks = page.blocks.map((block) => {
      const small = (block.label === 'text' || block.label === 'list_item') && block.fontSize <= body.size * 0.9;
      return small && block.bbox.t <= lowestBody + 1 && block.bbox.t < page.height / 2 ? { ...block, label: 'footnote' as const } : block;
    });
    return { ...page, blocks };
  });
}

/** "2.1 Results" → 2; "3 Method" → 1; "Appendix A" and unnumbered headings → undefined. */
export function sectionNumber(block: Block): number | undefined {
  const text = block.marker === undefined ? block.text : `${block.marker} ${block.text}`;
  const match = /^(\d{1,2}(?:\.\d{1,2}){0,5})\.?\s+\p{L}/u.exec(text);
  return match?.[1] ? Math.min(6, match[1].split('.').length) : undefined;
}

function largestOnFirstPage(page: Page | undefined, body: BodyStyle): Block | undefined {
  const candidates = (page?.blocks ?? []).filter((b) => b.label === 'section_header' && b.fontSize >= body.size * 1.4);
  return candidates.reduce<Block | undefined>((big, b) => (!big || b.fontSize > big.fontSize ? b : big), undefined);
}

/**
 * Below the title and before the first real section, the centred author, address and date lines
 * of a title page are set larger than the body but are not headings: a bold, numbered or
 * left-aligned heading ends the title matter.
 */
function demoteTitleMatter(page: Page, title: Block): void {
  // Centred on the text area (margins need not be equal), not necessarily on the paper.
  const area = union(page.blocks.map((b) => b.bbox));
  const middle = (area.l + area.r) / 2;
  // …or on the title itself, where the title page is set off-centre (a binding offset).
  const centre = (b: Block) => (b.bbox.l + b.bbox.r) / 2;
  const indented = (b: Block) => b.bbox.l > area.l + page.width * 0.02;
  const onAxis = (b: Block) => Math.abs(centre(b) - middle) < page.width * 0.04 || (indented(b) && Math.abs(centre(b) - centre(title)) < page.width * 0.02);
  const centred = (b: Block) => onAxis(b) && b.bbox.r - b.bbox.l < (area.r - area.l) * 0.9;
  for (const block of page.blocks) {
    if (block === title || block.bbox.t > title.bbox.b + 1) continue;
    if (block.label !== 'section_header') continue;
    // A title set in bold makes bold title matter (author, affiliation) possible; under a regular
    // title a bold centred line ("Abstract") is the first heading.
    if ((block.bold && !title.bold) || sectionNumber(block) !== undefined || !centred(block)) break;
    block.label = 'text';
    delete block.level;
  }
}

/** "Table 2:", "Figure 3.", "Fig. 1", "表 1", "图 2": how captions start. */
const CAPTION = /^(?:(?:table|tab\.|figure|fig\.|listing|chart|exhibit)\s*[\dIVX]+[a-z]?\s*[.:—–-]?|[表图圖]\s*\d+)/iu;

/** spec (issue 17): "caption (attached to its table or picture)" — the nearest one above or below. */
export function attachCaptions(page: Page): Page {
  const blocks = page.blocks.map((block) => ({ ...block }));
  const pictures = (page.pictures ?? []).map((picture) => ({ ...picture }));
  for (const block of blocks) {
    if ((block.label !== 'text' && block.label !== 'section_header') || !CAPTION.test(block.text.trim())) continue;
    const distance = (box: BoundingBox) => (box.t < block.bbox.b ? block.bbox.b - box.t : box.b > block.bbox.t ? box.b - block.bbox.t : 0);
    const targets = [
      ...blocks.map((b, index) => ({ kind: 'table' as const, index, box: b.bbox, ok: b.label === 'table' })),
      ...pictures.map((p, index) => ({ kind: 'picture' as const, index, box: p.bbox, ok: true })),
    ].filter((t) => t.ok && t.box.l < block.bbox.r && block.bbox.l < t.box.r && distance(t.box) <= 3 * block.fontSize);
    const nearest = targets.sort((a, b) => distance(a.box) - distance(b.box))[0];
    if (!nearest) continue;
    block.label = 'caption';
    delete block.level;
    block.captionOf = { kind: nearest.kind, index: nearest.index };
    const picture = nearest.kind === 'picture' ? pictures[nearest.index] : undefined;
    if (picture) picture.caption = block.text;
  }
  return page.pictures ? { ...page, blocks, pictures } : { ...page, blocks };
}
