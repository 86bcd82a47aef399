// Finding tables on a page, four kinds, in this order (each takes its text out of the flow):
//  1. fully ruled: crossing horizontal and vertical rules form a grid; a cell is a rectangle
//     bounded by drawn rules (spans where one is left out), lines of numbers in one ruled row are
//     sub-rows, and text aligned in columns inside one ruled cell is split as well (ruled.ts);
//  2. horizontal rules only (booktabs: top, mid and bottom rules, partial rules under a group
//     heading): rules of one width bound the table, columns come from the text's alignment, rows
//     above the mid-rule are column headers;
//  3. a table of contents: lines ending in a dot leader and a page number, as entry | page;
//  4. no rules ("stream", after Camelot and Tabula): three or more consecutive printed lines each
//     cut by wide gaps into short pieces that line up in two or more columns. Conservative: pieces
//     of running text (long, or a single column) never start a table, so paragraphs and
//     two-column prose stay prose.
import type { Block, BoundingBox } from '../../document.ts';
import { firstAtLeast, type Ruling, type TextRun } from '../geometry.ts';
import { evenlyAdvancing, isCodeListing } from '../monospace.ts';
import { contentsTables } from './contents.ts';
import { drawn, findGrids, nestedTableBoxes, ruleWithin, tableRules, type Grid } from './grids.ts';
import { listingOverFirstRule, markListing } from './listings.ts';
import { framedPanels, isListing, panelOf } from './panels.ts';
import { buildOneColumnGrid, buildRuledGrid } from './ruled.ts';
import { asRead, uprightStandIns } from './vertical.ts';
import { baselineRows, buildGrid, columnsOf, isNumeric, segmentsOf, tableBlock, type Segment } from './grid.ts';

const centreIn = (run: TextRun, box: BoundingBox, slack = 1) => {
  const cx = run.x + run.width / 2;
  const cy = run.y + 0.3 * run.size;
  return cx >= box.l - slack && cx <= box.r + slack && cy >= box.b - slack && cy <= box.t + slack;
};

/** Tables found, the runs left for the text flow, and the ruled panels whose text is laid out each on its own. */
export type Found = { tables: Block[]; rest: TextRun[]; panels: BoundingBox[]; figures?: BoundingBox[] };

function take(found: Found, box: BoundingBox, build: (runs: TextRun[]) => Block | undefined): boolean {
  const inside = found.rest.filter((run) => centreIn(run, box));
  if (inside.length === 0) return false;
  const block = build(inside);
  if (!block) return false;
  const used = new Set(inside);
  found.rest = found.rest.filter((run) => !used.has(run));
  found.tables.push(block);
  return true;
}

// --- 1. Fully ruled ----------------------------------------------------------------------------

/** A rule this share of the page's width (or height) long, or longer, runs from edge to edge. */
const EDGE_TO_EDGE = 0.95;

/**
 * spec (issue 41): a slide's background rectangle, or a border drawn round the page, is not a table:
 * horizontal rules running from edge to edge of the page bound no table (its top and bottom would
 * read as a booktabs table holding the whole slide). Vertical ones stay: they divide the lanes (the
 * two pages of a spread).
 */
const withoutPageEdges = (rulings: Ruling[], page: { width: number; height: number } | undefined) =>
  page ? rulings.filter((r) => r.x2 - r.x1 < EDGE_TO_EDGE * page.width) : rulings;

/** A ruled grid this share of whose cells are empty, captioned as a figure, is a drawing. */
const DIAGRAM_EMPTY = 0.4;
const FIGURE_CAPTION = /^(?:figure|fig\.)\s*[\dA-Z]/iu;

/**
 * A line starting "Figure N" / "Fig. N" just below or above the box (within two lines), across it.
 * The line is read as its runs joined left to right on their baseline: a PDF rewritten glyph by
 * glyph (ghostscript's excerpt of the Redbook) draws "Figure 3-1" as runs "F", "i", "g" … .
 */
function figureBelowOrAbove(box: BoundingBox, runs: TextRun[]): boolean {
  const lines = new Map<number, TextRun[]>();
  for (const run of runs) {
    const across = run.x < box.r && run.x + run.width > box.l;
    const below = run.y < box.b && box.b - run.y <= 3 * run.size;
    const above = run.y > box.t && run.y - box.t <= 3 * run.size;
    if (!across || !(below || above)) continue;
    const key = Math.round(run.y);
    lines.set(key, [...(lines.get(key) ?? []), run]);
  }
  return [...lines.values()].some((line) => FIGURE_CAPTION.test(line.sort((a, b) => a.x - b.x).map((run) => run.text).join('').trim()));
}

function ruledTables(allRulings: Ruling[], found: Found): BoundingBox[] {
  const boxes: BoundingBox[] = [];
  // A table nested in a cell of another is that cell's text: its rules are no edges of the outer grid.
  const nested = nestedTableBoxes(allRulings);
  const rulings = nested.length === 0 ? allRulings : allRulings.filter((rule) => !nested.some((box) => ruleWithin(rule, box)));
  // Every drawn piece counts as a cell edge, however short (a spreadsheet export draws each cell's own borders).
  const rules = tableRules(rulings, 0);
  for (const framed of findGrids(rulings)) {
    const grid = withoutFrameBands(framed, rules.vertical, found.rest);
    if (!grid) continue;
    const box = { l: grid.xs[0] ?? 0, r: grid.xs.at(-1) ?? 0, t: grid.ys[0] ?? 0, b: grid.ys.at(-1) ?? 0 };
    // spec (issue 34): "a ruled frame around a multi-column listing is not a grid of one cell per line".
    const panels = framedPanels(found.rest, grid, rules.vertical);
    if (panels) {
      found.panels.push(...panels);
      boxes.push(box);
      continue;
    }
    if (grid.xs.length === 2) {
      if (take(found, box, (runs) => {
        const table = buildOneColumnGrid(runs, grid, rules);
        return table ? tableBlock(table, box, runs) : undefined;
      })) boxes.push(box);
      continue;
    }
    const ok = take(found, box, (runs) => {
      const table = buildRuledGrid(runs, grid, rules, nested);
      // spec (issue 41): a drawing of boxes and arrows captioned "Figure 3-1" (a syntax diagram) is a
      // picture, not a table: most of its cells are empty.
      if (table && figureBelowOrAbove(box, found.rest) && table.cells.filter((c) => c.text.trim() === '').length >= DIAGRAM_EMPTY * table.cells.length) return undefined;
      return table ? tableBlock(table, box, runs) : undefined;
    });
    if (ok) boxes.push(box);
    else if (figureBelowOrAbove(box, found.rest)) {
      found.figures = [...(found.figures ?? []), box];
      boxes.push(box);
    }
  }
  return boxes;
}

/**
 * A grid without the bands at its top and bottom that no column rule runs through, when column
 * rules are drawn elsewhere in it: a frame drawn round a table with its title above and its key
 * below holds them in such bands, and they are not rows of the table.
 */
/** A line over a table set this many times its text's size is the page's title, not the table's. */
const PAGE_TITLE_SIZE = 1.5;

function withoutFrameBands(grid: Grid, vertical: Ruling[], runs: TextRun[]): Grid | undefined {
  const inner = grid.xs.slice(1, -1);
  // A band whose text stands in two or more of the columns is a row, ruled or not.
  const columnsUsed = (i: number) => {
    const inBand = runs.filter((run) => centreIn(run, { l: grid.xs[0] ?? 0, r: grid.xs.at(-1) ?? 0, t: grid.ys[i] ?? 0, b: grid.ys[i + 1] ?? 0 }));
    return new Set(inBand.map((run) => inner.filter((x) => x < run.x + run.width / 2).length)).size;
  };
  // A band whose text is centred over the table, in the table's size, is a spanning title cell of
  // the table (set in its frame as its first row); a frame's title or key is set to one side, and
  // a page's title over it is set larger.
  const inGrid = runs.filter((run) => centreIn(run, { l: grid.xs[0] ?? 0, r: grid.xs.at(-1) ?? 0, t: grid.ys[0] ?? 0, b: grid.ys.at(-1) ?? 0 }));
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
  const tableSize = median(inGrid.map((run) => run.size));
  const centred = (i: number) => {
    const inBand = runs.filter((run) => centreIn(run, { l: grid.xs[0] ?? 0, r: grid.xs.at(-1) ?? 0, t: grid.ys[i] ?? 0, b: grid.ys[i + 1] ?? 0 }));
    if (inBand.length === 0 || median(inBand.map((run) => run.size)) > PAGE_TITLE_SIZE * tableSize) return false;
    const [l, r] = [Math.min(...inBand.map((run) => run.x)), Math.max(...inBand.map((run) => run.x + run.width))];
    const [left, right] = [grid.xs[0] ?? 0, grid.xs.at(-1) ?? 0];
    return Math.abs((l + r) / 2 - (left + right) / 2) <= 0.05 * (right - left);
  };
  const ruledBand = (i: number) => inner.some((x) => drawn(vertical, 'y', x, grid.ys[i + 1] ?? 0, grid.ys[i] ?? 0)) || columnsUsed(i) >= 2 || centred(i);
  const bands = grid.ys.length - 1;
  const ruledSomewhere = Array.from({ length: bands }, (_, i) => i).some((i) => inner.some((x) => drawn(vertical, 'y', x, grid.ys[i + 1] ?? 0, grid.ys[i] ?? 0)));
  if (inner.length === 0 || !ruledSomewhere) return grid;
  let first = 0;
  let last = bands - 1;
  while (first < last && !ruledBand(first)) first += 1;
  while (last > first && !ruledBand(last)) last -= 1;
  const ys = grid.ys.slice(first, last + 2);
  return ys.length >= 3 ? { xs: grid.xs, ys } : undefined;
}

// --- 2. Horizontal rules only ------------------------------------------------------------------

/** A horizontal rule at least this long (points) can bound a table; shorter ones are underlines. */
const MIN_TABLE_RULE = 40;
/** Rules whose ends are this close (points) are of one table. */
const SAME_END = 3;

function ruleOnlyTables(rulings: Ruling[], found: Found, ruled: BoundingBox[]): void {
  // A rule drawn in pieces (one per column, as spreadsheets export a row's border) is one rule.
  const joined = tableRules(rulings, MIN_TABLE_RULE);
  const sides = { horizontal: joined.horizontal, vertical: tableRules(rulings, 0).vertical };
  const horizontal = joined.horizontal
    .filter((r) => r.y2 - r.y1 <= 1.5)
    .filter((r) => !barEdge(r, sides, found.rest))
    .filter((r) => !ruled.some((box) => r.y1 >= box.b - 2 && r.y1 <= box.t + 2 && r.x1 >= box.l - 2 && r.x2 <= box.r + 2))
    .sort((a, b) => b.y1 - a.y1);
  const used = new Set<Ruling>();
  for (const top of horizontal) {
    if (used.has(top)) continue;
    // The full-width rules of this table, top to bottom, as long as the text between two of them
    // stays within the rules' width (text running past them is the paragraph after the table).
    const full = [top];
    for (const next of horizontal) {
      if (next.y1 >= (full.at(-1)?.y1 ?? 0) - 0.5 || used.has(next)) continue;
      if (Math.abs(next.x1 - top.x1) > SAME_END || Math.abs(next.x2 - top.x2) > SAME_END) continue;
      const previous = full.at(-1) ?? top;
      const between = found.rest.filter((run) => run.y < previous.y1 && run.y > next.y1);
      if (between.some((run) => run.x < top.x1 - SAME_END * 2 || run.x + run.width > top.x2 + SAME_END * 2)) break;
      // A caption between two rules starts the next table ("Table 4. …" under the first one's bottom rule).
      if (baselineRows(between).some((row) => CAPTION_START.test(row.map((run) => run.text).join('').trim()))) break;
      // spec (issue 41): "a code listing between two rules is bounded by them alone": its rules are no
      // rows of a table reaching over the list and the caption above it, and none goes on past it.
      const listing = between.length > 0 && isCodeListing(between);
      if (listing && full.length > 1) break;
      full.push(next);
      if (listing) break;
    }
    if (full.length < 2) continue;
    const bottom = full.at(-1) ?? top;
    const header = headerAboveRule(found.rest, top, bottom.y1, horizontal);
    const box = { l: top.x1, r: top.x2, t: header.t, b: bottom.y1 };
    const inner = horizontal.filter((r) => r.y1 < top.y1 - 0.5 && r.y1 > bottom.y1 + 0.5 && r.x1 >= top.x1 - SAME_END && r.x2 <= top.x2 + SAME_END);
    // The first full-width rule inside is the mid-rule: the rows above it are column headers.
    // …or, with the header set over the top rule, the top rule is.
    const mid = box.t > top.y1 ? top : full.length > 2 ? full[1] : undefined;
    // spec (issue 41): a code listing set between two rules (an "Example 2-1" query) is code, not a
    // table of keywords beside clauses — told by its glyph widths where its font is not marked monospaced;
    // and issue 42's "code … kept in the source's glyphs … and place" in a translation follows from it.
    const inside = found.rest.filter((run) => centreIn(run, box));
    if (isCodeListing(inside)) {
      markListing(found, inside);
      continue;
    }
    const ok = take(found, box, (runs) => {
      const spanRules = [...inner.filter((r) => r.x2 - r.x1 < top.x2 - top.x1 - 2 * SAME_END), ...header.spans].map((r) => ({ x1: r.x1, x2: r.x2, y: r.y1 }));
      const table = buildGrid(runs, box, { spanRules, ...(mid ? { headerBottom: mid.y1 } : {}) });
      return table ? tableBlock(table, box, runs) : undefined;
    });
    if (ok) for (const rule of [...full, ...inner, ...header.spans]) used.add(rule);
  }
  // The page's first rule, when it bounds no table, may end a listing continued from the page before.
  const [first] = horizontal;
  listingOverFirstRule(first && !used.has(first) ? first : undefined, found);
}

/**
 * The top of a rule-only table: its top rule, or the top of the line just above it when that line
 * is the table's column headers set over the first rule (a rule under each row, none over the
 * header): two or more pieces, each starting, ending or centred where a column of the rows below
 * does. spec (issue 41): "a group heading over a partial rule above the column headers is the
 * table's, spanning the columns its rule covers" (us-023's "Year" over 1997 … 2007): such lines
 * are taken in too, and their rules are returned as span rules.
 */
function headerAboveRule(runs: TextRun[], top: Ruling, bottom: number, horizontal: Ruling[]): { t: number; spans: Ruling[] } {
  const within = (run: TextRun) => run.x >= top.x1 - SAME_END && run.x + run.width <= top.x2 + SAME_END;
  const below = baselineRows(runs.filter((run) => within(run) && run.y < top.y1 && run.y > bottom)).map((row) => segmentsOf(row, STREAM_GAP)).flat();
  const [line] = baselineRows(runs.filter((run) => within(run) && run.y > top.y1 && run.y - top.y1 <= 1.2 * run.size)).map((row) => segmentsOf(row, STREAM_GAP));
  if (!line || line.length < 2 || below.length === 0) return { t: top.y1, spans: [] };
  const centre = (seg: { l: number; r: number }) => (seg.l + seg.r) / 2;
  const aligned = (seg: Seg) => below.some((b) => Math.abs(b.l - seg.l) <= 2 || Math.abs(b.r - seg.r) <= 2 || Math.abs(centre(b) - centre(seg)) <= 2);
  if (!line.every(aligned)) return { t: top.y1, spans: [] };
  const lineTop = (segs: Seg[]) => Math.max(...segs.map((seg) => seg.baseline + 0.8 * seg.size));
  let t = lineTop(line);
  let baseline = Math.max(...line.map((seg) => seg.baseline));
  const spans: Ruling[] = [];
  for (let level = 1; level < MAX_HEADER_LINES; level += 1) {
    const [group] = baselineRows(runs.filter((run) => within(run) && run.y > t && run.y - baseline <= 2.5 * run.size)).map((row) => segmentsOf(row, STREAM_GAP));
    const ruleUnder = (seg: Seg) => horizontal.find((r) => r !== top && r.y1 > baseline && r.y1 < seg.baseline && seg.l >= r.x1 - 2 && seg.r <= r.x2 + 2 && r.x1 >= top.x1 - SAME_END && r.x2 <= top.x2 + SAME_END);
    const rules = (group ?? []).map(ruleUnder);
    if (!group || rules.some((r) => r === undefined)) break;
    spans.push(...(rules as Ruling[]));
    t = lineTop(group);
    baseline = Math.max(...group.map((seg) => seg.baseline));
  }
  return { t, spans };
}

const sortedVerticals = new WeakMap<Ruling[], Ruling[]>();
/** `vertical` sorted by x (made once per list). */
function verticalsByX(vertical: Ruling[]): Ruling[] {
  let sorted = sortedVerticals.get(vertical);
  if (!sorted) sortedVerticals.set(vertical, (sorted = vertical.filter((v) => !Number.isNaN(v.x1)).sort((a, b) => a.x1 - b.x1)));
  return sorted;
}

/**
 * Whether a horizontal rule is the top or bottom of a closed box holding one printed line and no
 * rule between (a running header's bar, a banner): a box round a line is not a table's rule.
 */
function barEdge(rule: Ruling, rules: { horizontal: Ruling[]; vertical: Ruling[] }, runs: TextRun[]): boolean {
  const near = (a: number, b: number) => Math.abs(a - b) <= SAME_END;
  // The vertical rules by x, so a side looks only at those near its x (a page of many rules has hundreds).
  const byX = verticalsByX(rules.vertical);
  return rules.horizontal.some((other) => {
    if (other === rule || !near(other.x1, rule.x1) || !near(other.x2, rule.x2)) return false;
    const [b, t] = [Math.min(other.y1, rule.y1), Math.max(other.y1, rule.y1)];
    const side = (x: number) => {
      for (let i = firstAtLeast(byX, (v) => v.x1, x - SAME_END - 0.001); i < byX.length && (byX[i] as Ruling).x1 <= x + SAME_END + 0.001; i++) {
        const v = byX[i] as Ruling;
        if (near(v.x1, x) && v.y1 <= b + SAME_END && v.y2 >= t - SAME_END) return true;
      }
      return false;
    };
    if (!side(rule.x1) || !side(rule.x2)) return false;
    if (rules.horizontal.some((h) => h.y1 > b + 0.5 && h.y1 < t - 0.5 && h.x1 < rule.x2 && h.x2 > rule.x1)) return false;
    // One printed line: every run inside overlaps the others vertically (a title and a smaller subtitle on one bar).
    const inside = runs.filter((run) => centreIn(run, { l: rule.x1, r: rule.x2, t, b }));
    const top = Math.min(...inside.map((run) => run.y + 0.8 * run.size));
    const bottom = Math.max(...inside.map((run) => run.y - 0.2 * run.size));
    return inside.length === 0 || bottom < top;
  });
}

// --- 3. No rules (stream) ----------------------------------------------------------------------

/** Gap (em) between two cells of a table without rules: wider than any word space of justified text. */
const STREAM_GAP = 1.2;
/** A piece longer than this many characters is running text, not a cell. */
const MAX_CELL_CHARS = 40;
const MIN_STREAM_ROWS = 3;

/** A vertical rule at least this long (points) divides the page into lanes (a spread's gutter, a column rule). */
const MIN_DIVIDER = 100;

/**
 * Stream tables, looked for in each lane between long vertical rules on its own: text on either
 * side of a drawn divider (the two pages of a spread) is never one table row.
 */
const IN_FIGURE = Number.NEGATIVE_INFINITY;

function streamTables(found: Found, rulings: Ruling[]): void {
  const dividers = rulings.filter((r) => r.x2 - r.x1 <= 1.5 && r.y2 - r.y1 >= MIN_DIVIDER);
  // A ruled panel is a lane of its own; elsewhere the lanes lie between the dividers.
  const laneOf = (run: TextRun) => {
    if ((found.figures ?? []).some((f) => centreIn(run, f))) return IN_FIGURE;
    const panel = panelOf(found.panels, run);
    return panel >= 0 ? -1 - panel : dividers.filter((d) => d.x1 < run.x + run.width / 2 && run.y >= d.y1 && run.y <= d.y2).length;
  };
  const lanes = new Map<number, TextRun[]>();
  for (const run of found.rest) lanes.set(laneOf(run), [...(lanes.get(laneOf(run)) ?? []), run]);
  const tables: Block[] = [];
  const taken = new Set<TextRun>();
  for (const [at, runs] of lanes) {
    // The labels of a figure drawn with boxes are its words, never a table (spec, issue 41).
    if (at === IN_FIGURE) continue;
    // A listing in a ruled panel is read entry by entry, never cut into a table.
    if (at < 0 && isListing(runs)) continue;
    const lane: Found = { tables: [], rest: runs, panels: [] };
    streamTablesIn(lane);
    tables.push(...lane.tables);
    const left = new Set(lane.rest);
    for (const run of runs) if (!left.has(run)) taken.add(run);
  }
  found.tables.push(...tables);
  found.rest = found.rest.filter((run) => !taken.has(run));
}

function streamTablesIn(found: Found): void {
  const rows = baselineRows(found.rest).map((row) => segmentsOf(row, STREAM_GAP));
  let start = 0;
  let free = 0;
  while (start < rows.length) {
    let end = start;
    while (end < rows.length && isTableLine(rows[end] ?? [], rows[end - 1])) end += 1;
    if (end - start >= MIN_STREAM_ROWS && consistent(rows.slice(start, end))) {
      const first = headerLinesAbove(rows, start, free);
      const segments = rows.slice(first, end).flat();
      free = end;
      const box = {
        l: Math.min(...segments.map((s) => s.l)),
        r: Math.max(...segments.map((s) => s.r)),
        t: Math.max(...segments.map((s) => s.baseline + 0.8 * s.size)),
        b: Math.min(...segments.map((s) => s.baseline - 0.2 * s.size)),
      };
      const runs = new Set(segments.flatMap((s) => s.runs));
      const table = buildGrid([...runs], box, { gapEm: STREAM_GAP });
      if (table) {
        found.tables.push(tableBlock(table, box, [...runs]));
        found.rest = found.rest.filter((run) => !runs.has(run));
      }
    }
    start = Math.max(end, start + 1);
  }
}

type Seg = Segment;

/** Column headers take up to this many printed lines above a table's first row. */
const MAX_HEADER_LINES = 3;
const CAPTION_START = /^(?:table|tab\.|figure|fig\.)\s/iu;

/**
 * The index of the table's first line, taking in the lines just above its first row that are its
 * column headers: short pieces, each over one of the table's columns, a line's distance apart (a
 * header cell set on two lines has one piece on its second line, which no table row has).
 */
function headerLinesAbove(rows: Seg[][], start: number, free: number): number {
  const columns = columnsOf(rows.slice(start, start + 6));
  let first = start;
  while (first > free && start - first < MAX_HEADER_LINES) {
    const line = rows[first - 1] ?? [];
    const below = rows[first] ?? [];
    const [a] = line;
    const [b] = below;
    if (!a || !b || a.baseline - b.baseline > 2.6 * Math.max(a.size, b.size)) break;
    const fits = line.every((s) => s.text.length <= MAX_CELL_CHARS && !RUNNING_PIECE.test(s.text) && columns.filter((c) => s.l < c.r && c.l < s.r).length === 1);
    if (!fits || CAPTION_START.test(a.text)) break;
    first -= 1;
  }
  return first;
}

/** Dot leaders (". . ." or "…") and pieces ending in a comma are an index or a table of contents in columns, not a table. */
const RUNNING_PIECE = /(?:\.\s?){3}|…|,$/u;

function isTableLine(row: Seg[], above: Seg[] | undefined): boolean {
  if (row.length < 2 || row.some((s) => RUNNING_PIECE.test(s.text))) return false;
  // One longer piece (a row's label) among three or more short ones is still a table row; two long pieces side by side are prose.
  const long = row.filter((s) => s.text.length > MAX_CELL_CHARS);
  if (long.length > 0 && (long.length > 1 || row.length < 3 || (long[0]?.text.length ?? 0) > 2 * MAX_CELL_CHARS)) return false;
  if (!above) return true;
  const [first] = row;
  const [over] = above;
  // Rows of one table are close: no more than about two lines apart.
  return first !== undefined && over !== undefined && over.baseline - first.baseline <= 2.6 * Math.max(first.size, over.size);
}

/**
 * The pieces line up: every row's pieces fall into distinct columns, at least two columns, and
 * either three or more columns or a column of numbers (two columns of short words alone is too
 * weak a sign: it is also how two narrow columns of prose end their paragraphs).
 */
function consistent(rows: Seg[][]): boolean {
  const columns = columnsOf(rows);
  if (columns.length < 2) return false;
  for (const row of rows) {
    const hit = row.map((s) => columns.findIndex((c) => s.l < c.r && c.l < s.r));
    if (new Set(hit).size !== hit.length) return false;
  }
  // Monospaced text lined up in columns is a code listing, and a column counting 1, 2, 3 … its line numbers.
  const runs = rows.flat().flatMap((s) => s.runs);
  if (runs.filter((r) => r.mono).length * 2 > runs.length || (evenlyAdvancing(runs) && isCodeListing(runs))) return false;
  const inColumn = (row: Seg[], i: number) => row.find((s) => columns.findIndex((c) => s.l < c.r && c.l < s.r) === i)?.text;
  // …unless every other column holds numbers too below the first row (its headers): then it is a series
  // (2019, 2020, … against their values), not line numbers before text (spec, issue 41).
  const allNumbers = (i: number) => rows.slice(1).every((row) => row.every((s) => columns.findIndex((c) => s.l < c.r && c.l < s.r) === i || isNumeric(s.text)));
  if (columns.some((_, i) => countsUp(rows.map((row) => inColumn(row, i))) && !allNumbers(i))) return false;
  if (proseColumns(rows, columns) >= 2) return false;
  if (listsSideBySide(rows)) return false;
  if (columns.length >= 3) return true;
  const numbersIn = (i: number) => rows.filter((row) => row.some((s) => columns.findIndex((c) => s.l < c.r && c.l < s.r) === i && isNumeric(s.text))).length;
  return columns.some((_, i) => numbersIn(i) >= rows.length - 1);
}

/** A piece of running text: several words filling most of its column's width. */
const PROSE_WORDS = 4;
const PROSE_FILL = 0.7;
/** A column is prose when this share of its pieces are. */
const PROSE_SHARE = 0.6;

/**
 * How many columns hold running text. Two or more mean the lined-up rows are the page's own text
 * columns (a three-column Federal Register page, whose lines share baselines across its narrow
 * gutters), not a table: a table's cells are ragged, a justified column's lines fill it.
 */
function proseColumns(rows: Seg[][], columns: ReturnType<typeof columnsOf>): number {
  return columns.filter((column) => {
    const pieces = rows.flat().filter((s) => s.l < column.r && column.l < s.r);
    const prose = pieces.filter((s) => s.text.split(/\s+/).length >= PROSE_WORDS && s.r - s.l >= PROSE_FILL * (column.r - column.l));
    return pieces.length > 0 && prose.length >= PROSE_SHARE * pieces.length;
  }).length;
}

/** A bullet alone, or a piece opening with a bullet or an item number: a list item's start. */
const LIST_PIECE = /^(?:[•◦▪‣●○■□►▸](?:\s|$)|[•◦▪‣●○■□►▸]$|\(?\d{1,3}[.)]\s+\S)/u;

/**
 * spec (issue 41): lists set side by side (a slide's columns of bulleted and numbered items) are lists,
 * not a table: half or more of the pieces open a list item. A table whose cells carry bullets is drawn
 * with rules or fills and found as such before this.
 */
function listsSideBySide(rows: Seg[][]): boolean {
  let items = 0;
  let pieces = 0;
  for (const row of rows) {
    pieces += row.length;
    // A bullet set apart from its text is one item with the piece after it.
    row.forEach((s, i) => {
      if (LIST_PIECE.test(s.text.trim()) || (i > 0 && BULLET_ALONE.test(row[i - 1]?.text.trim() ?? ''))) items += 1;
    });
  }
  return items * 2 >= pieces;
}
const BULLET_ALONE = /^[•◦▪‣●○■□►▸]$/u;

/** Whole numbers each one more than the last (the line numbers of a listing). */
function countsUp(texts: Array<string | undefined>): boolean {
  const numbers = texts.filter((t): t is string => t !== undefined && /^\d+$/.test(t.trim())).map(Number);
  return numbers.length >= 3 && numbers.every((n, i) => i === 0 || n === (numbers[i - 1] ?? 0) + 1);
}

/** Every table on the page, and the runs left for the text flow. */
export function findTables(allRulings: Ruling[], read: TextRun[], page?: { width: number; height: number }): Found {
  const rulings = withoutPageEdges(allRulings, page);
  // Turned lines stand in upright where their glyphs lie; those no table takes go back as read.
  const { runs, originals } = uprightStandIns(read);
  const found: Found = { tables: [], rest: runs, panels: [] };
  const ruled = ruledTables(rulings, found);
  ruleOnlyTables(rulings, found, ruled);
  const contents = contentsTables(found.rest);
  found.tables.push(...contents.tables);
  found.rest = contents.rest;
  streamTables(found, rulings);
  return { ...found, rest: asRead(found.rest, originals) };
}
