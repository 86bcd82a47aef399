// Which edges of a ruled table's grid are its rows and columns: the two strokes of a double rule
// are one edge, the inset box of a shaded cell is padding, and a shading box's edge inside a cell
// is no rule between rows (ruled.ts asks these before it lays the text on the grid).
import type { Ruling } from '../geometry.ts';

/** Bands of the grid thinner than this (points) with no text are the gap of a double rule, not a row or column. */
const THIN = 3.5;

/** Edges with a thin empty band beside them (the two strokes of a double rule) are one edge. */
export function dropThin(edges: number[], hasText: (a: number, b: number) => boolean): number[] {
  const out: number[] = [];
  for (const edge of edges) {
    const last = out.at(-1);
    if (last !== undefined && edge - last < THIN && !hasText(last, edge)) {
      // Keep the outer edge at the table's border, the later one inside.
      if (out.length === 1) continue;
      out[out.length - 1] = edge;
    } else out.push(edge);
  }
  return out;
}

/** How much of the stretch from `from` to `to` a rule at `at` covers (points). */
export function drawnLength(rules: Ruling[], across: 'x' | 'y', at: number, from: number, to: number): number {
  const [pos, lo, hi] = across === 'x' ? (['x1', 'y1', 'y2'] as const) : (['y1', 'x1', 'x2'] as const);
  return rules.filter((r) => Math.abs(r[pos] - at) <= 2).reduce((sum, r) => sum + Math.max(0, Math.min(r[hi], to) - Math.max(r[lo], from)), 0);
}

/** A shading box sits this far (points) inside its cell's borders: from a hairline's inset to a word processor's cell padding. */
const INSET = [0.7, 9] as const;
/** An inset this deep is a cell's padding: the box is shading even where it runs over several columns of the grid. */
const PADDING = 3.5;

/**
 * spec (issue 41, "cells that wrap"): a horizontal edge whose every piece lies inside one column of
 * the grid and ends short of the column rules drawn across it on both sides is the edge of a
 * shading box (a word processor shades a cell's paragraph line by line, each line its own filled
 * box inset from the cell's borders), not a rule between rows: a wrapped key stays one cell. An
 * edge a cell's padding short of them is shading even over several columns (a merged cell's box).
 * A rule under a group header, a hairline short of the rules, spans columns; a table drawn without
 * column rules (booktabs) has none to fall short of; both keep their edges.
 */
export function shadingEdge(rules: { horizontal: Ruling[]; vertical: Ruling[] }, columns: number[], y: number): boolean {
  const pieces = rules.horizontal.filter((h) => Math.abs(h.y1 - y) <= 2);
  const across = rules.vertical.filter((v) => Math.min(v.y1, v.y2) < y - 2 && Math.max(v.y1, v.y2) > y + 2).map((v) => v.x1);
  const inset = (gap: number) => gap >= INSET[0] && gap <= INSET[1];
  const insetPiece = (h: Ruling) => {
    const [l, r] = [Math.min(h.x1, h.x2), Math.max(h.x1, h.x2)];
    const oneColumn = !columns.some((x) => x > l + 1 && x < r - 1);
    const deep = (gap: number) => gap >= PADDING && gap <= INSET[1];
    if (across.some((x) => deep(l - x)) && across.some((x) => deep(x - r))) return true;
    return oneColumn && across.some((x) => inset(l - x)) && across.some((x) => inset(x - r));
  };
  return pieces.length > 0 && pieces.every(insetPiece);
}

/**
 * A band of the grid that holds no text in any row, between an edge drawn across the whole table
 * and one drawn only in part of it, is the padding of a shaded cell (a header cell drawn as a
 * filled box with an inset text box), not a column or row: the part-drawn edge goes.
 */
export function dropPadding(edges: number[], hasText: (a: number, b: number) => boolean, drawnAlong: (edge: number) => number): number[] {
  const out = [...edges];
  for (let i = 0; i + 1 < out.length; ) {
    const a = out[i] ?? 0;
    const b = out[i + 1] ?? 0;
    const [da, db] = [drawnAlong(a), drawnAlong(b)];
    const inner = (k: number) => k > 0 && k < out.length - 1;
    if (!hasText(a, b) && Math.min(da, db) < 0.5 * Math.max(da, db)) {
      const drop = da < db ? i : i + 1;
      if (inner(drop)) {
        out.splice(drop, 1);
        continue;
      }
    }
    i += 1;
  }
  return out;
}
