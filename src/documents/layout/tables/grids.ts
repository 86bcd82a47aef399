// Ruled grids: crossing horizontal and vertical rules, snapped into cell edges.
import type { BoundingBox } from '../../document.ts';
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
  // The table stages ask for one page's rules several times (grids, rule-only tables, frames): joined once a ruling list.
  let all = joinedRules.get(rulings);
  if (all === undefined) {
    all = { horizontal: joined(rulings.filter((r) => r.y2 - r.y1 <= 1), 'x'), vertical: joined(rulings.filter((r) => r.x2 - r.x1 <= 1 && r.y2 - r.y1 > 1), 'y') };
    joinedRules.set(rulings, all);
  }
  return { horizontal: all.horizontal.filter((r) => r.x2 - r.x1 >= minLength), vertical: all.vertical.filter((r) => r.y2 - r.y1 >= minLength) };
}

/** The joined rules of a ruling list (tableRules), kept while the list lives; nothing mutates a rule once joined. */
const joinedRules = new WeakMap<readonly Ruling[], { horizontal: readonly Ruling[]; vertical: readonly Ruling[] }>();

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

/** A nested table sits inside its cell by the cell's padding: wider than a double rule's gap, at most this (points). */
const CELL_PADDING = 12;
/** …and the gap of a double rule, at most this: a frame this close round another is the same border drawn twice. */
const DOUBLE_GAP = 3.5;
/** The cell holding it runs on at least this far (points) above or below it: a line of text or more. */
const CELL_BEYOND = 10;

/**
 * spec (issue 41, "spanning cells"): a table drawn inside one cell of another (a Writer table nested
 * in a cell) is that cell's content, not rows and columns of the outer table: a closed frame with
 * rows and columns of its own whose left and right rules each stand a cell's padding inside a
 * longer rule of the outer table, in a cell that runs on above or below it. Their
 * boxes; the rules inside are left out of the outer grid and the nested table's text is its cell's.
 */
export function nestedTableBoxes(rulings: Ruling[]): BoundingBox[] {
  const { horizontal, vertical } = tableRules(rulings, 0);
  if (vertical.length < 4) return [];
  const near = (a: number, b: number) => Math.abs(a - b) <= SNAP;
  const height = (v: Ruling) => v.y2 - v.y1;
  // An outer rule `side` of the inner rule, a padding away, running past it by a line or more.
  const outer = (v: Ruling, side: -1 | 1) =>
    vertical.find((o) => {
      const gap = side * (o.x1 - v.x1);
      return gap > DOUBLE_GAP && gap <= CELL_PADDING && o.y1 <= v.y1 + SNAP && o.y2 >= v.y2 - SNAP && height(o) - height(v) >= CELL_BEYOND;
    });
  const lefts = vertical.flatMap((v) => {
    const o = outer(v, -1);
    return o ? [{ v, o }] : [];
  });
  const rights = vertical.flatMap((v) => {
    const o = outer(v, 1);
    return o ? [{ v, o }] : [];
  });
  const boxes: BoundingBox[] = [];
  for (const { v: a, o: left } of lefts) {
    for (const { v: b, o: right } of rights) {
      if (b.x1 <= a.x1 || !near(a.y1, b.y1) || !near(a.y2, b.y2)) continue;
      const across = (y: number) => horizontal.some((h) => near(h.y1, y) && h.x1 <= a.x1 + SNAP && h.x2 >= b.x1 - SNAP);
      if (!across(a.y1) || !across(a.y2)) continue;
      // A table of its own: a column rule inside the frame (a frame round one cell's text is a border drawn twice).
      if (!vertical.some((v) => v.x1 > a.x1 + SNAP && v.x1 < b.x1 - SNAP && v.y1 >= a.y1 - SNAP && v.y2 <= a.y2 + SNAP)) continue;
      if (!horizontal.some((h) => h.y1 > a.y1 + SNAP && h.y1 < a.y2 - SNAP && h.x1 >= a.x1 - SNAP && h.x2 <= b.x1 + SNAP)) continue;
      // The outer cell runs on above or below it (text over it, room under it); a cell's border drawn
      // inset on every side (a bevelled frame) does not.
      const cellRules = horizontal.filter((h) => h.x1 <= left.x1 + SNAP && h.x2 >= right.x1 - SNAP).map((h) => h.y1);
      const above = Math.min(...cellRules.filter((y) => y >= a.y2 - SNAP), Infinity);
      const below = Math.max(...cellRules.filter((y) => y <= a.y1 + SNAP), -Infinity);
      if (!Number.isFinite(above) || !Number.isFinite(below) || above - a.y2 + (a.y1 - below) < CELL_BEYOND) continue;
      boxes.push({ l: a.x1, r: b.x1, b: a.y1, t: a.y2 });
    }
  }
  return boxes;
}

/** Whether a rule lies within a box (its edges included). */
export const ruleWithin = (rule: Ruling, box: BoundingBox) => rule.x1 >= box.l - SNAP && rule.x2 <= box.r + SNAP && rule.y1 >= box.b - SNAP && rule.y2 <= box.t + SNAP;
