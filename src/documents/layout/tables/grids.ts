// Ruled grids: crossing horizontal and vertical rules, snapped into cell edges.
import { union, type Ruling } from '../geometry.ts';


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
