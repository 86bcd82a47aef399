// Ruled grids: crossing horizontal and vertical rules, snapped into cell edges.
import { union, type Ruling } from '../geometry.ts';


/** Rules shorter than this (points) are not table borders: underlined words, dashes drawn as paths. */
const MIN_RULE = 8;
/** Rule ends, crossings and edges within this distance (points) are the same. */
const SNAP = 2;

/**
 * The page's horizontal and vertical rules, collinear pieces that meet joined into one (after
 * Tabula's collapseOrientedRulings): TeX draws a column rule as one piece per printed line, so a
 * rule that runs down a whole row of two lines arrives as two pieces end to end. Pieces shorter
 * than `minLength` (once joined) are left out.
 */
export function tableRules(rulings: Ruling[], minLength = MIN_RULE): { horizontal: Ruling[]; vertical: Ruling[] } {
  const joined = (pieces: Ruling[], along: 'x' | 'y'): Ruling[] => {
    const [lo, hi, at] = along === 'x' ? (['x1', 'x2', 'y1'] as const) : (['y1', 'y2', 'x1'] as const);
    // Pieces at (nearly) one position, then each such line of pieces from one end to the other: a
    // piece a fraction of a point off the line must not be joined out of order (it would swallow the
    // pieces that lie before it along the line).
    const lines: Ruling[][] = [];
    for (const piece of [...pieces].sort((a, b) => a[at] - b[at])) {
      const line = lines.at(-1);
      if (line && piece[at] - (line.at(-1)?.[at] ?? piece[at]) <= 0.5) line.push(piece);
      else lines.push([piece]);
    }
    const out: Ruling[] = [];
    for (const line of lines) {
      const first = out.length;
      for (const piece of line.sort((a, b) => a[lo] - b[lo])) {
        const last = out.length > first ? out.at(-1) : undefined;
        if (last && piece[lo] <= last[hi] + SNAP) last[hi] = Math.max(last[hi], piece[hi]);
        else out.push({ ...piece });
      }
    }
    return out;
  };
  const horizontal = joined(rulings.filter((r) => r.y2 - r.y1 <= 1), 'x').filter((r) => r.x2 - r.x1 >= minLength);
  const vertical = joined(rulings.filter((r) => r.x2 - r.x1 <= 1 && r.y2 - r.y1 > 1), 'y').filter((r) => r.y2 - r.y1 >= minLength);
  return { horizontal, vertical };
}

/** Whether a drawn rule runs along the edge from `from` to `to` (at least its middle and most of it). */
export function drawn(rules: Ruling[], along: 'x' | 'y', at: number, from: number, to: number): boolean {
  const [lo, hi, pos] = along === 'x' ? (['x1', 'x2', 'y1'] as const) : (['y1', 'y2', 'x1'] as const);
  const middle = (from + to) / 2;
  return rules.some((r) => Math.abs(r[pos] - at) <= SNAP && r[lo] <= middle && r[hi] >= middle && Math.min(r[hi], to) - Math.max(r[lo], from) >= 0.6 * (to - from));
}

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
 * Grids formed by crossing horizontal and vertical rules, each with at least two rows. The outer
 * edges count even where no border is drawn, for tables ruled only inside.
 */
export function findGrids(rulings: Ruling[]): Grid[] {
  const { horizontal, vertical } = tableRules(rulings);
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
    // A frame of one column (two side rules, rules between its rows) is a grid too: ruled.ts decides whether it is a table.
    if (xs.length >= 2 && ys.length >= 3) grids.push({ xs, ys });
  }
  return grids;
}
