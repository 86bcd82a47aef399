// From the text inside a table's region to its grid of cells, for rule-only and stream tables (a
// fully ruled table takes its cells from its rules, ruled.ts, with this file's pieces). Rows are
// the text's baselines (merged where a cell wraps onto a second printed line, or where drawn
// rules say the lines share a row); columns come from where the text sits: segments of a row are
// cut at gaps wider than a word space and at drawn column rules, and columns are the x-ranges that
// the segments of the fullest rows cover (the idea of Camelot's "stream" and Tabula's column
// guessing: text edges that line up over several rows). A segment covering several columns is a
// spanning cell (a group heading over two columns).
import type { Block, BoundingBox, Table, TableCell } from '../../document.ts';
import { dominant, joinText, union, type TextRun } from '../geometry.ts';
import { attachScripts, lineTexts } from '../lines.ts';
import { inReadingOrder } from './logical.ts';

/** Glyph boxes are estimated from the font size: ascenders about 0.8 em up, descenders 0.2 em down. */
const runBox = (run: TextRun): BoundingBox => ({ l: run.x, r: run.x + run.width, t: run.y + 0.8 * run.size, b: run.y - 0.2 * run.size });

/** A piece of one printed line of the table: text between two column gaps. */
export type Segment = { runs: TextRun[]; l: number; r: number; baseline: number; size: number; text: string };

/** Runs on one baseline (sub- and superscripts included), top to bottom, each row left to right. */
export function baselineRows(runs: TextRun[]): TextRun[][] {
  const rows: TextRun[][] = [];
  for (const run of [...runs].filter((r) => r.text.trim() !== '').sort((a, b) => b.y - a.y || a.x - b.x)) {
    const row = rows.at(-1);
    const anchor = row?.[0];
    if (row && anchor && Math.abs(anchor.y - run.y) <= 0.35 * Math.max(anchor.size, run.size)) row.push(run);
    else rows.push([run]);
  }
  // A superscript raised further than that (x² in a cell) joins the row it touches, as in lines.ts, so it is never a line of its own.
  return attachScripts(rows).map((row) => row.sort((a, b) => a.x - b.x));
}

const textOf = (runs: TextRun[]) => lineTexts(runs.map((r) => ({ ...r, hasEOL: false }))).reduce(joinText, '');

/** Cuts a row into segments at gaps wider than `gapEm` (of the font size) and at the x of any column rule. */
export function segmentsOf(row: TextRun[], gapEm: number, cuts: readonly number[] = []): Segment[] {
  const groups: TextRun[][] = [];
  let right = -Infinity;
  for (const run of row.flatMap((r) => splitAtCuts(r, cuts))) {
    const group = groups.at(-1);
    const ruleBetween = cuts.some((x) => x > right - 0.5 && x < run.x + 0.5);
    if (group && run.x - right <= gapEm * run.size && !ruleBetween) group.push(run);
    else groups.push([run]);
    right = Math.max(right, run.x + run.width);
  }
  return withMarkersJoined(groups).map((runs) => {
    const box = union(runs.map(runBox));
    // The text is laid out (as lines) only when read: most segments are measured, never read.
    let text: string | undefined;
    return {
      runs,
      l: box.l,
      r: box.r,
      baseline: Math.min(...runs.map((r) => r.y)),
      size: dominant(runs.map((r): [number, number] => [r.size, r.text.length])) ?? runs[0]?.size ?? 0,
      get text() {
        return (text ??= textOf(runs));
      },
    };
  });
}

/** A list item's marker: a bullet glyph alone. */
const MARKER = /^[•◦▪‣●○■□►▸]$/u;
/** A marker this far (em) or nearer from its text is the item's indent, not a column gap. */
const MARKER_INDENT = 2.5;

/**
 * spec (issue 41, "cells that wrap", "spanning cells"): a bullet set apart from its text by the
 * list's indent is that list item's marker, never a column of its own — a cell holding a bulleted
 * list ("• A First" in a Writer table) stays one cell. A mark followed by another mark (a matrix of
 * ● and ○) or by text far off stays apart.
 */
function withMarkersJoined(groups: TextRun[][]): TextRun[][] {
  const out: TextRun[][] = [];
  for (let i = 0; i < groups.length; i += 1) {
    const group = groups[i] ?? [];
    const next = groups[i + 1];
    const [marker] = group;
    const right = group.length === 1 && marker ? marker.x + marker.width : 0;
    const joins = group.length === 1 && marker && MARKER.test(marker.text.trim()) && next?.[0] && !MARKER.test(next[0].text.trim()) && next[0].x - right <= MARKER_INDENT * marker.size;
    if (joins) {
      out.push([...group, ...next]);
      i += 1;
    } else out.push(group);
  }
  return out;
}

/**
 * pdf.js joins text drawn close together on one line into one item, even across a column rule
 * ("gram $13.65" with a rule between): such a run is cut at the rule, at the space nearest to
 * where the rule falls (glyph positions are estimated evenly over the run's width).
 */
function splitAtCuts(run: TextRun, cuts: readonly number[]): TextRun[] {
  const cut = cuts.find((x) => x > run.x + 1 && x < run.x + run.width - 1);
  if (cut === undefined || run.text.length < 2) return [run];
  const perChar = run.width / run.text.length;
  const at = (cut - run.x) / perChar;
  const spaces = [...run.text.matchAll(/\s+/g)].map((m) => m.index ?? 0);
  const space = spaces.sort((a, b) => Math.abs(a - at) - Math.abs(b - at))[0];
  const index = space !== undefined && Math.abs(space - at) <= 3 ? space : Math.round(at);
  const left = run.text.slice(0, index).trimEnd();
  const right = run.text.slice(index).trimStart();
  if (left === '' || right === '') return [run];
  const rightX = run.x + (run.text.length - right.length) * perChar;
  return [
    { ...run, text: left, width: left.length * perChar, hasEOL: false },
    ...splitAtCuts({ ...run, text: right, x: rightX, width: run.x + run.width - rightX }, cuts),
  ];
}

export type Column = { l: number; r: number };

/**
 * Column x-ranges: the overlapping x-ranges of the segments of the rows with the most segments,
 * merged; segments of other rows that touch no column add one. A segment touching two or more
 * columns spans them and adds nothing.
 */
export function columnsOf(rows: Segment[][]): Column[] {
  const most = Math.max(0, ...rows.map((r) => r.length));
  // The fullest rows set the columns; rows one piece short widen them, but a piece of theirs that
  // reaches over two columns (two header words set closer than the numbers below them) spans
  // them and never joins them into one (Tabula's column guessing takes the columns from the
  // rows with the most cells the same way).
  const fullest = rows.filter((r) => r.length === most && most >= 2);
  const columns = byPosition(fullest) ?? mergeRanges(fullest.flat().map((s) => ({ l: s.l, r: s.r })));
  for (const segment of rows.filter((r) => r.length >= Math.max(2, most - 1) && r.length < most).flat()) {
    const touched = columns.filter((c) => segment.l < c.r && c.l < segment.r);
    if (touched.length >= 2) continue;
    const [column] = touched;
    const widened = column ? { l: Math.min(column.l, segment.l), r: Math.max(column.r, segment.r) } : { l: segment.l, r: segment.r };
    if (columns.some((c) => c !== column && widened.l < c.r && c.l < widened.r)) continue;
    if (column) Object.assign(column, widened);
    else columns.push(widened);
  }
  columns.sort((a, b) => a.l - b.l);
  for (const segment of rows.flat()) {
    const touched = columns.filter((c) => segment.l < c.r && c.l < segment.r);
    if (touched.length === 0) columns.push({ l: segment.l, r: segment.r });
  }
  return mergeRanges(columns);
}

/**
 * spec (issue 41): "tables without rules whose columns are aligned by whitespace only". A spreadsheet
 * sets text left and numbers right in the same column ("Year" over "2019", "Freshwater Ducks" over
 * "120"), so the pieces of the fullest rows need not overlap to be one column: when the i-th pieces of
 * those rows, taken together, stay left of the (i+1)-th ones, they are column i. Undefined when they
 * do not (the columns are then the overlaps of the pieces).
 */
function byPosition(fullest: Segment[][]): Column[] | undefined {
  const [first] = fullest;
  if (!first || fullest.length < 2) return undefined;
  const columns = first.map((_, i) => ({ l: Math.min(...fullest.map((r) => r[i]?.l ?? Infinity)), r: Math.max(...fullest.map((r) => r[i]?.r ?? -Infinity)) }));
  if (columns.some((c, i) => i > 0 && c.l <= (columns[i - 1]?.r ?? 0))) return undefined;
  // Only where the overlaps alone would split a column in two: otherwise they are the same columns.
  return mergeRanges(fullest.flat().map((s) => ({ l: s.l, r: s.r }))).length > columns.length ? columns : undefined;
}

function mergeRanges(ranges: Column[]): Column[] {
  const merged: Column[] = [];
  for (const range of [...ranges].sort((a, b) => a.l - b.l)) {
    const last = merged.at(-1);
    if (last && range.l < last.r) last.r = Math.max(last.r, range.r);
    else merged.push({ ...range });
  }
  return merged;
}

const NUMBER = /^[-+−–(]?[$€£¥]?\s?\d[\d,.' ]*%?\)?$/u;
export const isNumeric = (text: string) => NUMBER.test(text.trim());

type Row = {
  cells: Map<number, { segments: Segment[]; span: number; rowSpan?: number }>;
  top: number;
  bottom: number;
  baseline: number;
  size: number;
  /** Columns whose cell is the one of the row above, spanning down. */
  coveredFromAbove?: Set<number>;
};

function placeRow(segments: Segment[], columns: Column[]): Row {
  const cells = new Map<number, { segments: Segment[]; span: number }>();
  for (const segment of segments) {
    const touched = columns.map((c, i) => (segment.l < c.r && c.l < segment.r ? i : -1)).filter((i) => i >= 0);
    // Text in the gap between columns (a heading centred over two of them) goes to the nearest.
    const centre = (segment.l + segment.r) / 2;
    const nearest = columns.map((c, i) => [Math.abs((c.l + c.r) / 2 - centre), i] as const).sort((a, b) => a[0] - b[0])[0]?.[1] ?? 0;
    const start = touched[0] ?? nearest;
    const cell = cells.get(start);
    if (cell) {
      cell.segments.push(segment);
      cell.span = Math.max(cell.span, touched.length);
    } else cells.set(start, { segments: [segment], span: Math.max(1, touched.length) });
  }
  const boxes = segments.flatMap((s) => s.runs.map(runBox));
  const box = union(boxes);
  return { cells, top: box.t, bottom: box.b, baseline: Math.min(...segments.map((s) => s.baseline)), size: Math.max(...segments.map((s) => s.size)) };
}

/**
 * A printed line continues the row above (a cell wrapping onto a second line) when it fills only
 * columns that the row above filled, fewer of them, none with a number, and sits a line's distance
 * below. Numbers always stay in their own row.
 */
function continuesRow(above: Row, line: Row): boolean {
  if (line.cells.size >= above.cells.size) return false;
  for (const [col, cell] of line.cells) {
    if (!above.cells.has(col)) return false;
    if (cell.segments.some((s) => isNumeric(s.text))) return false;
  }
  return above.baseline - line.baseline <= 1.5 * Math.max(above.size, line.size);
}

/** Lines this share of their size apart, or closer, are not two printed rows but one row set at two heights. */
const HALF_LINE = 0.8;

/**
 * spec (issue 41): "values set centred beside a row label wrapped on two lines are that label's row":
 * a line holding only columns the line above leaves empty, less than a line's height below it (us-023's
 * "Between-state income inequality (Gini" over its figures over "index)"), is the same row.
 */
function besideWrappedLabel(above: Row, line: Row): boolean {
  // Values: two or more, all right of every cell of the label's line.
  if (line.cells.size < 2 || Math.min(...line.cells.keys()) <= Math.max(...above.cells.keys())) return false;
  for (const col of line.cells.keys()) if (coveredBySpan(above, col)) return false;
  return above.baseline - line.baseline < HALF_LINE * Math.max(above.size, line.size);
}

function mergeInto(above: Row, line: Row): void {
  for (const [col, cell] of line.cells) {
    const target = above.cells.get(col);
    if (target) target.segments.push(...cell.segments);
    else above.cells.set(col, cell);
  }
  above.bottom = Math.min(above.bottom, line.bottom);
  above.baseline = line.baseline;
}

export type GridOptions = {
  /** x of drawn column rules inside the table: a boundary no cell text crosses. */
  columnRules?: readonly number[];
  /** y of drawn row rules inside the table (top to bottom): lines between two rules share a row. */
  rowRules?: readonly number[];
  /** y below which rows are body rows (a booktabs mid-rule); rows above it are column headers. */
  headerBottom?: number;
  /** Partial rules under a group heading (booktabs' cmidrule): the heading above one spans the columns it covers. */
  spanRules?: ReadonlyArray<{ x1: number; x2: number; y: number }>;
  /** Gap (in em) that separates two cells of a row. */
  gapEm?: number;
};

/** The table grid of the runs inside one table region; undefined when it is not at least 2 × 2. */
export function buildGrid(runs: TextRun[], region: BoundingBox, options: GridOptions = {}): Table | undefined {
  const cuts = options.columnRules ?? [];
  const segmentRows = baselineRows(runs).map((row) => segmentsOf(row, options.gapEm ?? 0.9, cuts));
  if (segmentRows.length < 2) return undefined;
  // A group heading over a partial rule spans the columns below it; it is not a column of its own.
  const overRule = (seg: Segment) => (options.spanRules ?? []).some((rule) => seg.l >= rule.x1 - 2 && seg.r <= rule.x2 + 2 && seg.baseline > rule.y && seg.baseline - rule.y < 2.5 * seg.size);
  const columns = splitAtRules(columnsOf(segmentRows.map((row) => row.filter((seg) => !overRule(seg)))), cuts);
  if (columns.length < 2) return undefined;
  const lines = segmentRows.map((segments) => placeRow(segments.flatMap((seg) => splitAtGutters(seg, columns)), columns));
  const rows: Row[] = [];
  const band = (y: number) => (options.rowRules ?? []).filter((rule) => rule > y).length;
  for (const [i, line] of lines.entries()) {
    const above = rows.at(-1);
    // A label whose values are set centred beside its two lines opens their row.
    const next = lines[i + 1];
    if (next && !(options.rowRules?.length) && besideWrappedLabel(line, next) && above && continuesRow(above, line)) {
      rows.push(line);
      continue;
    }
    const ruledRows = (options.rowRules?.length ?? 0) > 0;
    const joins = above !== undefined && (ruledRows ? band(above.baseline) === band(line.baseline) : continuesRow(above, line) || (options.headerBottom === undefined || line.baseline < options.headerBottom) && besideWrappedLabel(above, line) || continuesHeader(above, line, options));
    if (above && joins) mergeInto(above, line);
    else rows.push(line);
  }
  if (rows.length < 2) return undefined;
  for (const rule of options.spanRules ?? []) spanOver(rows, columns, rule);
  spanHeaderRows(rows, columns, options);
  const cells: TableCell[] = [];
  rows.forEach((row, r) => {
    const header = options.headerBottom !== undefined ? row.baseline > options.headerBottom : r === 0 && looksLikeHeader(rows);
    for (let c = 0; c < columns.length; c += 1) {
      const cell = row.cells.get(c);
      const column = columns[c];
      if (!column) continue;
      if (!cell) {
        if (coveredBySpan(row, c) || row.coveredFromAbove?.has(c)) continue;
        cells.push({ text: '', bbox: { l: column.l, r: column.r, t: row.top, b: row.bottom }, row: r, col: c, rowSpan: 1, colSpan: 1, columnHeader: header, rowHeader: false });
        continue;
      }
      const segments = cell.segments.sort((a, b) => b.baseline - a.baseline || a.l - b.l);
      const text = segments.map((s) => s.text).reduce(joinText, '');
      const bbox = union(segments.flatMap((s) => s.runs.map(runBox)));
      cells.push({ text, bbox, row: r, col: c, rowSpan: cell.rowSpan ?? 1, colSpan: Math.min(cell.span, columns.length - c), columnHeader: header, rowHeader: false });
    }
  });
  const filledRows = rows.filter((row) => row.cells.size >= 2).length;
  if (filledRows < 2) return undefined;
  void region;
  return { numRows: rows.length, numCols: columns.length, cells };
}

/**
 * A piece reaching over two columns whose runs part exactly in the gutter between them is two
 * cells set close (a header's right-aligned words beside the next column's left-aligned ones), not
 * one cell spanning both.
 */
function splitAtGutters(segment: Segment, columns: Column[]): Segment[] {
  const touched = columns.filter((c) => segment.l < c.r && c.l < segment.r);
  if (touched.length < 2 || segment.runs.length < 2) return [segment];
  const runs = [...segment.runs].sort((a, b) => a.x - b.x);
  const parts: TextRun[][] = [[]];
  runs.forEach((run, i) => {
    const before = runs[i - 1];
    const gutter = before && touched.slice(1).some((c, k) => {
      const left = touched[k];
      return left !== undefined && before.x + before.width <= c.l + 0.5 && run.x >= (left.r - 0.5) && before.x + before.width < run.x;
    });
    if (gutter) parts.push([]);
    parts.at(-1)?.push(run);
  });
  if (parts.length < 2) return [segment];
  return parts.flatMap((part) => segmentsOf(part, Infinity));
}

/** A partial rule lies between two printed lines of a table. */
const ruleBetween = (options: GridOptions, upper: number, lower: number) => (options.spanRules ?? []).some((rule) => rule.y < upper && rule.y > lower);

/**
 * Above a booktabs mid-rule every printed line is column-header text: a header cell set on two
 * lines ("#" over "enc-layers") is one cell, so header lines join one row unless a partial rule
 * under a group heading lies between them.
 */
function continuesHeader(above: Row, line: Row, options: GridOptions): boolean {
  const bottom = options.headerBottom;
  if (bottom === undefined || line.baseline <= bottom || above.baseline <= bottom) return false;
  if (ruleBetween(options, above.bottom + 0.5 * above.size, line.top - 0.5 * line.size)) return false;
  return above.baseline - line.baseline <= 1.6 * Math.max(above.size, line.size);
}

/**
 * Header rows split by a partial rule (a group heading over its columns): in the columns the rule
 * does not cover, text on both rows, or set between them, is one cell spanning both rows
 * ("# enc-layers" beside "TEDs" over "simple complex all").
 */
function spanHeaderRows(rows: Row[], columns: Column[], options: GridOptions): void {
  const bottom = options.headerBottom;
  if (bottom === undefined) return;
  for (let r = 0; r + 1 < rows.length; r += 1) {
    const upper = rows[r];
    const lower = rows[r + 1];
    if (!upper || !lower || lower.baseline <= bottom) continue;
    const rules = (options.spanRules ?? []).filter((rule) => rule.y < upper.baseline && rule.y > lower.top - 0.5 * lower.size);
    if (rules.length === 0) continue;
    const firstLine = (row: Row) => Math.max(...[...row.cells.values()].flatMap((cell) => cell.segments.map((seg) => seg.baseline)));
    const [high, low] = [firstLine(upper), firstLine(lower)];
    const underRule = (c: number) => rules.some((rule) => (columns[c]?.l ?? 0) < rule.x2 && rule.x1 < (columns[c]?.r ?? 0));
    for (let c = 0; c < columns.length; c += 1) {
      if (underRule(c) || coveredBySpan(upper, c) || coveredBySpan(lower, c) || upper.coveredFromAbove?.has(c)) continue;
      const top = upper.cells.get(c);
      const below = lower.cells.get(c);
      if ((top?.span ?? 1) > 1 || (below?.span ?? 1) > 1) continue;
      const merged = { segments: [...(top?.segments ?? []), ...(below?.segments ?? [])], span: 1, rowSpan: 2 };
      if (merged.segments.length === 0) continue;
      // Text in one of the two rows only spans both when it is set between their lines (centred
      // over the two rows); on the line of one row it is that row's (a header cell of the lower row only).
      const between = merged.segments.every((seg) => seg.baseline < high - 0.25 * (high - low) && seg.baseline > low + 0.25 * (high - low));
      if ((!top || !below) && !between) continue;
      upper.cells.set(c, merged);
      lower.cells.delete(c);
      lower.coveredFromAbove = new Set([...(lower.coveredFromAbove ?? []), c]);
    }
  }
}

/** The one cell just above a partial rule, alone over the columns the rule covers, spans them. */
function spanOver(rows: Row[], columns: Column[], rule: { x1: number; x2: number; y: number }): void {
  const row = [...rows].reverse().find((r) => r.bottom >= rule.y - 1);
  if (!row) return;
  const covered = columns.map((c, i) => (c.l < rule.x2 && rule.x1 < c.r ? i : -1)).filter((i) => i >= 0);
  const [first] = covered;
  if (first === undefined || covered.length < 2) return;
  const inside = [...row.cells.entries()].filter(([col]) => covered.includes(col));
  if (inside.length !== 1) return;
  const [[col, cell] = []] = inside;
  if (col === undefined || cell === undefined) return;
  row.cells.delete(col);
  row.cells.set(first, { ...cell, span: covered.length });
}

function coveredBySpan(row: Row, col: number): boolean {
  for (const [start, cell] of row.cells) if (start < col && start + cell.span > col) return true;
  return false;
}

/** The first row is a header row when it has no numbers and some row below it does. */
function looksLikeHeader(rows: Row[]): boolean {
  const numbers = (row: Row) => [...row.cells.values()].some((cell) => cell.segments.some((s) => isNumeric(s.text)));
  const [first, ...rest] = rows;
  return first !== undefined && !numbers(first) && rest.some(numbers);
}

/** A column rule inside a text column splits it in two (a ruled boundary always separates cells). */
function splitAtRules(columns: Column[], cuts: readonly number[]): Column[] {
  const out: Column[] = [];
  for (const column of columns) {
    let left = column.l;
    for (const x of [...cuts].sort((a, b) => a - b)) {
      if (x > left + 1 && x < column.r - 1) {
        out.push({ l: left, r: x });
        left = x;
      }
    }
    out.push({ l: left, r: column.r });
  }
  return out;
}

/** Rows of cell texts (a spanning cell's text in its first position, '' in the rest), for Markdown. */
export function cellTexts(table: Table): string[][] {
  const rows = Array.from({ length: table.numRows }, () => Array.from({ length: table.numCols }, () => ''));
  for (const cell of table.cells) {
    const row = rows[cell.row];
    if (row) row[cell.col] = cell.text;
  }
  return rows;
}

/** The `table` block for a grid. */
/** A bullet glyph opening a cell marks it as a list item (a slide's table of bulleted cells); it is not the cell's text. */
const CELL_BULLET = /^[•◦▪‣●○■□►▸]\s*/u;
/** …and so does a bullet opening a later item of a list inside the cell ("A First • A Second"). */
const ITEM_BULLET = /\s[•◦▪‣●○■□►▸]\s+(?=\S)/gu;
const withoutBullets = (table: Table): Table =>
  table.cells.some((c) => CELL_BULLET.test(c.text) || c.text.search(ITEM_BULLET) >= 0) ? { ...table, cells: table.cells.map((c) => ({ ...c, text: c.text.replace(CELL_BULLET, '').replaceAll(ITEM_BULLET, ' ') })) } : table;

export function tableBlock(grid: Table, bbox: BoundingBox, runs: TextRun[]): Block {
  const fontSize = dominant(runs.map((r): [number, number] => [r.size, r.text.length])) ?? 0;
  const table = withoutBullets(inReadingOrder(grid, fontSize));
  const cells = cellTexts(table);
  return {
    label: 'table',
    text: cells.map((row) => row.join(' | ')).join('\n'),
    bbox,
    fontSize,
    bold: false,
    cells,
    table,
  };
}
