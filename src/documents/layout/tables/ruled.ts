// A fully ruled table's cells, from the rules that are drawn (Tabula's spreadsheet idea: a cell is a
// rectangle bounded by drawn rules). The crossing rules give an elementary grid; where the rule
// between two neighbouring grid cells is not drawn they are one cell — a header spanning columns
// ("TEDs" over simple | complex | all), or a cell spanning rows ("# enc-layers" beside a header
// split by a partial rule). Inside one ruled row, lines that each carry their own numbers are
// sub-rows and stay rows (an OTSL line and an HTML line under one key); a key printed once between
// them spans them. Text aligned in columns inside one ruled cell is split as well.
import type { BoundingBox, Table, TableCell } from '../../document.ts';
import { joinText, union, type Ruling, type TextRun } from '../geometry.ts';
import { baselineRows, columnsOf, isNumeric, segmentsOf, type Segment } from './grid.ts';
import { dropPadding, dropThin, drawnLength, shadingEdge } from './edges.ts';
import { drawn, type Grid } from './grids.ts';
import { isMonospaced } from '../monospace.ts';

const runBox = (run: TextRun): BoundingBox => ({ l: run.x, r: run.x + run.width, t: run.y + 0.8 * run.size, b: run.y - 0.2 * run.size });


type Rect = { r0: number; r1: number; c0: number; c1: number; segments: Segment[] };

/** The cell grid of a ruled table; undefined when it is not at least 2 × 2 with text in two rows. */
export function buildRuledGrid(runs: TextRun[], grid: Grid, rules: { horizontal: Ruling[]; vertical: Ruling[] }, nested: BoundingBox[] = []): Table | undefined {
  const inner = grid.xs.slice(1, -1);
  // A printed line is cut at the column rules drawn where it stands (a title over a row with no
  // inner rules stays one piece).
  const cutsAt = (row: TextRun[]) => {
    const y = Math.min(...row.map((r) => r.y + 0.3 * r.size));
    return inner.filter((x) => rules.vertical.some((v) => Math.abs(v.x1 - x) <= 2 && y >= v.y1 - 1 && y <= v.y2 + 1));
  };
  const pieces = baselineRows(runs).map((row) => segmentsOf(row, 0.9, cutsAt(row)));
  const segments = pieces.flat();
  // A nested table's columns are its own, not columns of text to split the outer cell at.
  const outside = (s: Segment) => !nested.some((box) => (s.l + s.r) / 2 > box.l && (s.l + s.r) / 2 < box.r && s.baseline > box.b && s.baseline < box.t);
  const virtual = textSplits(nested.length === 0 ? pieces : pieces.map((row) => row.filter(outside)).filter((row) => row.length > 0), grid.xs);
  const centreX = (s: Segment) => (s.l + s.r) / 2;
  const centreY = (s: Segment) => s.baseline + 0.3 * s.size;
  const hasText = (l: number, r: number, t: number, b: number) => segments.some((s) => centreX(s) > l && centreX(s) < r && centreY(s) < t && centreY(s) > b);
  const top = grid.ys[0] ?? 0;
  const bottom = grid.ys.at(-1) ?? 0;
  const thinXs = dropThin([...grid.xs, ...virtual].sort((a, b) => a - b), (a, b) => hasText(a, b, top, bottom));
  const xs = dropPadding(thinXs, (a, b) => hasText(a, b, top, bottom), (x) => (virtual.includes(x) ? Infinity : drawnLength(rules.vertical, 'x', x, bottom, top)));
  const rowEdges = grid.ys.filter((y, i) => i === 0 || i === grid.ys.length - 1 || !shadingEdge(rules, xs, y));
  const thinYs = dropThin([...rowEdges].sort((a, b) => a - b), (a, b) => hasText(xs[0] ?? 0, xs.at(-1) ?? 0, b, a));
  const ys = dropPadding(thinYs, (a, b) => hasText(xs[0] ?? 0, xs.at(-1) ?? 0, b, a), (y) => drawnLength(rules.horizontal, 'y', y, xs[0] ?? 0, xs.at(-1) ?? 0)).reverse();
  const nr = ys.length - 1;
  const nc = xs.length - 1;
  if (nr < 1 || nc < 2) return undefined;
  // Text in at least two ruled rows and two ruled columns: a frame drawn round a page or a panel
  // (a page's background, a spread's two pages) holds all its text in one of them.
  const bands = (edges: number[], inBand: (a: number, b: number) => boolean) => edges.slice(1).filter((edge, i) => inBand(edges[i] ?? 0, edge)).length;
  if (bands(ys, (t, b) => hasText(xs[0] ?? 0, xs.at(-1) ?? 0, t, b)) < 2 && grid.ys.length > 2) return undefined;
  if (bands(xs, (l, r) => hasText(l, r, ys[0] ?? 0, ys.at(-1) ?? 0)) < 2) return undefined;
  const rowOf = (y: number) => ys.findIndex((top, i) => y <= top && y >= (ys[i + 1] ?? -Infinity));
  const colOf = (x: number) => xs.findIndex((left, i) => x >= left && x <= (xs[i + 1] ?? Infinity));
  const content: Segment[][] = Array.from({ length: nr * nc }, () => []);
  for (const s of segments) {
    const r = Math.max(0, rowOf(centreY(s)));
    const c = Math.max(0, colOf(centreX(s)));
    content[r * nc + c]?.push(s);
  }

  // Neighbouring grid cells with no drawn rule between them are one cell: one above the other
  // always (a cell of several lines); side by side where text runs across the edge, or where the
  // row has other column rules drawn (so this one is left out on purpose) and the text of one cell
  // is centred over it and empty neighbours (a group heading). A row drawn without any inner
  // column rule, or text set to one side of its cell, keeps its text in its columns.
  const ruledInside = (top: number, bottom: number) => xs.slice(1, -1).some((x) => drawn(rules.vertical, 'y', x, bottom, top));
  const straddles = (x: number, top: number, bottom: number) => segments.some((s) => s.l < x - 2 && s.r > x + 2 && centreY(s) < top && centreY(s) > bottom);
  const parent = content.map((_, i) => i);
  const root = (i: number): number => (parent[i] === i ? i : (parent[i] = root(parent[i] ?? i)));
  const join = (a: number, b: number) => {
    parent[root(a)] = root(b);
  };
  for (let r = 0; r < nr; r += 1) {
    const top = ys[r] ?? 0;
    const bottom = ys[r + 1] ?? 0;
    const open = (c: number) => !virtual.includes(xs[c + 1] ?? 0) && !drawn(rules.vertical, 'y', xs[c + 1] ?? 0, bottom, top);
    for (let c = 0; c + 1 < nc; c += 1) if (open(c) && straddles(xs[c + 1] ?? 0, top, bottom)) join(r * nc + c, r * nc + c + 1);
    if (ruledInside(top, bottom)) {
      for (let c = 0; c < nc; c += 1) {
        const segs = content[r * nc + c] ?? [];
        if (segs.length === 0) continue;
        const empty = (k: number) => (content[r * nc + k]?.length ?? 0) === 0;
        let left = c;
        while (left > 0 && open(left - 1) && empty(left - 1)) left -= 1;
        let right = c;
        while (right + 1 < nc && open(right) && empty(right + 1)) right += 1;
        const box = union(segs.map((s) => ({ l: s.l, r: s.r, t: 0, b: 0 })));
        const centre = (box.l + box.r) / 2;
        let best = { from: c, to: c, off: Infinity };
        for (let from = left; from <= c; from += 1) {
          for (let to = c; to <= right; to += 1) {
            const off = Math.abs(centre - ((xs[from] ?? 0) + (xs[to + 1] ?? 0)) / 2);
            if (off < best.off) best = { from, to, off };
          }
        }
        const width = (xs[best.to + 1] ?? 0) - (xs[best.from] ?? 0);
        if (best.to > best.from && best.off <= Math.max(3, 0.1 * width)) for (let k = best.from; k < best.to; k += 1) join(r * nc + k, r * nc + k + 1);
      }
      // spec (issue 41, "spanning cells"): a column rule drawn in most other rows of the table (not
      // only a header's) but left out beside one cell's text, over empty neighbours, is left out
      // because the cell spans on, up to the next rule this row draws ("Merged row" over two columns; a slide's "Class1" over its
      // three columns, drawn as one filled box, though a merged cell below leaves a rule out too).
      const empty = (k: number) => (content[r * nc + k]?.length ?? 0) === 0;
      const drawnElsewhere = (k: number) => 2 * ys.slice(1).filter((b, i) => i !== r && drawn(rules.vertical, 'y', xs[k + 1] ?? 0, b, ys[i] ?? 0)).length > nr - 1;
      for (let c = 0; c + 1 < nc; c += 1) {
        if (empty(c)) continue;
        for (let k = c; k + 1 < nc && open(k) && empty(k + 1) && drawnElsewhere(k); k += 1) join(r * nc + k, r * nc + k + 1);
      }
    }
    for (let c = 0; c < nc; c += 1) if (r + 1 < nr && !drawn(rules.horizontal, 'x', bottom, xs[c] ?? 0, xs[c + 1] ?? 0)) join(r * nc + c, (r + 1) * nc + c);
  }
  const rects = rectangles(nr, nc, root, content);

  // Sub-rows of each ruled row.
  const subRows = Array.from({ length: nr }, (_, r) => subRowsOf(rects.filter((rect) => rect.r0 === r && rect.r1 === r)));
  const offset: number[] = [];
  let total = 0;
  for (let r = 0; r < nr; r += 1) {
    offset.push(total);
    total += subRows[r]?.count ?? 1;
  }
  const cells: TableCell[] = [];
  const cellOf = (rect: Rect, segs: Segment[], row: number, rowSpan: number): TableCell => ({
    text: [...segs].sort((a, b) => b.baseline - a.baseline || a.l - b.l).map((s) => s.text).reduce(joinText, ''),
    bbox: segs.length > 0 ? union(segs.flatMap((s) => s.runs.map(runBox))) : { l: xs[rect.c0] ?? 0, r: xs[rect.c1 + 1] ?? 0, t: ys[rect.r0] ?? 0, b: ys[rect.r1 + 1] ?? 0 },
    row,
    col: rect.c0,
    rowSpan,
    colSpan: rect.c1 - rect.c0 + 1,
    columnHeader: false,
    rowHeader: false,
  });
  for (const rect of rects) {
    const split = rect.r0 === rect.r1 ? subRows[rect.r0] : undefined;
    if (split && split.count > 1 && !split.spanning.has(rect)) {
      for (let k = 0; k < split.count; k += 1) cells.push(cellOf(rect, rect.segments.filter((s) => split.of.get(s) === k), (offset[rect.r0] ?? 0) + k, 1));
    } else {
      const rows = (offset[rect.r1] ?? 0) + (subRows[rect.r1]?.count ?? 1) - (offset[rect.r0] ?? 0);
      cells.push(cellOf(rect, rect.segments, offset[rect.r0] ?? 0, rows));
    }
  }
  cells.sort((a, b) => a.row - b.row || a.col - b.col);
  const filledRows = new Set(cells.filter((c) => c.text !== '').map((c) => c.row));
  const wideRows = [...filledRows].filter((row) => cells.filter((c) => c.row === row && c.text !== '').length >= 2);
  if (filledRows.size < 2 || wideRows.length < 1 || total < 2) return undefined;
  markHeader(cells);
  return { numRows: total, numCols: nc, cells };
}

/** A row of a one-column table holds at most this many printed lines (a boxed note's paragraph holds more). */
const MAX_ONE_COLUMN_LINES = 3;
/** …and no line filling this share of its width. */
const ONE_COLUMN_PROSE = 0.7;

/**
 * spec (issue 41, "spanning cells", "cells that wrap"): a frame of one column — side rules down its
 * whole height, a rule between each two rows — is a one-column table (a Writer table of list cells)
 * when it has two rows or more and each holds a few printed lines; a boxed note, one row or rows
 * of paragraphs, is not.
 */
export function buildOneColumnGrid(runs: TextRun[], grid: Grid, rules: { horizontal: Ruling[]; vertical: Ruling[] }): Table | undefined {
  const [left, right] = grid.xs;
  const top = grid.ys[0] ?? 0;
  const bottom = grid.ys.at(-1) ?? 0;
  if (left === undefined || right === undefined || grid.xs.length !== 2) return undefined;
  if (!drawn(rules.vertical, 'y', left, bottom, top) || !drawn(rules.vertical, 'y', right, bottom, top)) return undefined;
  const lines = baselineRows(runs);
  const inBand = (t: number, b: number) => lines.filter((row) => (row[0]?.y ?? 0) < t && (row[0]?.y ?? 0) > b);
  const bands = dropThin([...grid.ys].sort((a, b) => a - b), (b, t) => inBand(t, b).length > 0).reverse();
  const rows = bands.slice(1).map((b, i) => inBand(bands[i] ?? 0, b));
  if (rows.length < 2 || rows.some((row) => row.length === 0 || row.length > MAX_ONE_COLUMN_LINES)) return undefined;
  // A line running across most of the frame is a paragraph's (a box ruled line by line); monospaced lines are a listing's.
  const wide = (line: TextRun[]) => Math.max(...line.map((r) => r.x + r.width)) - Math.min(...line.map((r) => r.x)) >= ONE_COLUMN_PROSE * (right - left);
  if (lines.some(wide) || isMonospaced(runs)) return undefined;
  const cells: TableCell[] = rows.map((row, r) => {
    const segments = row.flatMap((line) => segmentsOf(line, Infinity));
    return {
      text: segments.map((s) => s.text).reduce(joinText, ''),
      bbox: union(row.flat().map(runBox)),
      row: r,
      col: 0,
      rowSpan: 1,
      colSpan: 1,
      columnHeader: false,
      rowHeader: false,
    };
  });
  return { numRows: cells.length, numCols: 1, cells };
}

/**
 * Columns of text inside one ruled column (a table ruled only around its border and between rows):
 * split at the middle of the gap between them, as if a rule were drawn there — when two or more
 * printed lines have text on both sides (a header word off its column's axis is not a column).
 */
function textSplits(rows: Segment[][], xs: number[]): number[] {
  const columns = columnsOf(rows);
  const splits: number[] = [];
  for (let c = 0; c + 1 < xs.length; c += 1) {
    const left = xs[c] ?? 0;
    const right = xs[c + 1] ?? 0;
    const inside = columns.filter((col) => col.l >= left - 1 && col.r <= right + 1);
    for (let i = 1; i < inside.length; i += 1) {
      const a = inside[i - 1];
      const b = inside[i];
      if (!a || !b || b.l <= a.r) continue;
      // A column of its own: at least two printed lines have text on both sides of the gap, more
      // than run across it (a cell's wrapped paragraph, not a header over two sub-columns, crosses it).
      const x = (a.r + b.l) / 2;
      const both = rows.filter((row) => row.some((s) => s.l >= left && s.r <= x) && row.some((s) => s.l >= x && s.r <= right)).length;
      const across = rows.filter((row) => row.some((s) => s.l < x - 1 && s.r > x + 1 && s.l >= left - 1 && s.r <= right + 1)).length;
      if (both >= 2 && both > across) splits.push(x);
    }
  }
  return splits;
}

/** Components of grid cells as rectangles (a component that is not a rectangle takes in its whole bounding rectangle). */
function rectangles(nr: number, nc: number, root: (i: number) => number, content: Segment[][]): Rect[] {
  const owner = Array.from({ length: nr * nc }, (_, i) => root(i));
  for (let changed = true; changed; ) {
    changed = false;
    const bounds = new Map<number, { r0: number; r1: number; c0: number; c1: number }>();
    owner.forEach((id, i) => {
      const r = Math.floor(i / nc);
      const c = i % nc;
      const b = bounds.get(id);
      if (!b) bounds.set(id, { r0: r, r1: r, c0: c, c1: c });
      else Object.assign(b, { r0: Math.min(b.r0, r), r1: Math.max(b.r1, r), c0: Math.min(b.c0, c), c1: Math.max(b.c1, c) });
    });
    for (const [id, b] of bounds) {
      for (let r = b.r0; r <= b.r1; r += 1) {
        for (let c = b.c0; c <= b.c1; c += 1) {
          const other = owner[r * nc + c];
          if (other !== undefined && other !== id) {
            for (let i = 0; i < owner.length; i += 1) if (owner[i] === other) owner[i] = id;
            changed = true;
          }
        }
      }
      if (changed) break;
    }
  }
  const rects = new Map<number, Rect>();
  owner.forEach((id, i) => {
    const r = Math.floor(i / nc);
    const c = i % nc;
    const rect = rects.get(id);
    const segs = content[i] ?? [];
    if (!rect) rects.set(id, { r0: r, r1: r, c0: c, c1: c, segments: [...segs] });
    else {
      Object.assign(rect, { r0: Math.min(rect.r0, r), r1: Math.max(rect.r1, r), c0: Math.min(rect.c0, c), c1: Math.max(rect.c1, c) });
      rect.segments.push(...segs);
    }
  });
  return [...rects.values()];
}

type SubRows = { count: number; of: Map<Segment, number>; spanning: Set<Rect> };

/**
 * The printed lines of one ruled row, split into sub-rows: a line starts a sub-row when it puts a
 * number into a cell that already has one in the current sub-row (two records, not a wrapped
 * cell). A line whose cells are all empty in the lines above and below it, between them, is a key
 * printed once, centred over the sub-rows: its cell spans them.
 */
export function subRowsOf(rects: Rect[]): SubRows {
  const rectOf = new Map<Segment, Rect>();
  for (const rect of rects) for (const s of rect.segments) rectOf.set(s, rect);
  const all = [...rectOf.keys()].sort((a, b) => b.baseline - a.baseline || a.l - b.l);
  const lines: Segment[][] = [];
  for (const s of all) {
    const line = lines.at(-1);
    const anchor = line?.[0];
    if (line && anchor && Math.abs(anchor.baseline - s.baseline) <= 0.35 * Math.max(anchor.size, s.size)) line.push(s);
    else lines.push([s]);
  }
  const rectsOf = (line: Segment[]) => new Set(line.map((s) => rectOf.get(s)));
  const floating = new Set<number>();
  lines.forEach((line, i) => {
    const above = lines[i - 1];
    const below = lines[i + 1];
    if (!above || !below) return;
    const mine = rectsOf(line);
    const shares = (other: Segment[]) => other.some((s) => mine.has(rectOf.get(s)));
    if (!shares(above) && !shares(below)) floating.add(i);
  });
  const of = new Map<Segment, number>();
  let count = 0;
  let numbers = new Set<Rect | undefined>();
  lines.forEach((line, i) => {
    if (floating.has(i)) return;
    const numeric = new Set(line.filter((s) => isNumeric(s.text)).map((s) => rectOf.get(s)));
    const restarts = count === 0 || (rectsOf(line).size >= 2 && [...numeric].some((rect) => numbers.has(rect)));
    if (restarts) {
      count += 1;
      numbers = new Set();
    }
    for (const rect of numeric) numbers.add(rect);
    for (const s of line) of.set(s, count - 1);
  });
  const spanning = new Set<Rect>();
  for (const i of floating) for (const s of lines[i] ?? []) {
    const rect = rectOf.get(s);
    if (rect) spanning.add(rect);
  }
  return { count: Math.max(1, count), of, spanning };
}

/**
 * The first row — with the rows its cells span down into (a header of two printed rows) — holds
 * the column headers when it has no number and a row below it does.
 */
function markHeader(cells: TableCell[]): void {
  const numericRows = cells.filter((c) => isNumeric(c.text)).map((c) => c.row);
  if (numericRows.length === 0) return;
  const extent = Math.max(1, ...cells.filter((c) => c.row === 0).map((c) => c.rowSpan));
  if (Math.min(...numericRows) < extent) return;
  for (const cell of cells) if (cell.row < extent) cell.columnHeader = true;
}
