// Figures drawn with vectors (charts, diagrams): regions of curved and slanted strokes, found
// conservatively so that tables, rules, underlines and framed boxes of text never become pictures.
import type { BoundingBox } from '../document.ts';
import type { Ruling, TextRun } from '../layout/geometry.ts';

/** One painted path that is not only axis-aligned lines: its box and how many curves or slanted segments it has. */
export type Drawing = { box: BoundingBox; strokes: number };

type Point = [number, number];

/** A path's box and its count of curves and slanted segments (page space, before the origin shift). */
export function drawingOf(data: Float32Array, apply: (x: number, y: number) => Point): Drawing | undefined {
  let strokes = 0;
  let [l, b, r, t] = [Infinity, Infinity, -Infinity, -Infinity];
  let last: Point | undefined;
  const see = ([x, y]: Point) => {
    l = Math.min(l, x);
    r = Math.max(r, x);
    b = Math.min(b, y);
    t = Math.max(t, y);
  };
  for (let i = 0; i < data.length; ) {
    const op = data[i++];
    if (op === 0 || op === 1) {
      const point = apply(data[i++] ?? 0, data[i++] ?? 0);
      if (op === 1 && last && Math.abs(point[0] - last[0]) > 1 && Math.abs(point[1] - last[1]) > 1) strokes += 1;
      see(point);
      last = point;
    } else if (op === 2 || op === 3) {
      const n = op === 2 ? 3 : 2;
      for (let k = 0; k < n; k += 1) see((last = apply(data[i + 2 * k] ?? 0, data[i + 2 * k + 1] ?? 0)));
      i += 2 * n;
      strokes += 1;
    } else if (op === 4) continue;
    else break;
  }
  return strokes > 0 && Number.isFinite(l) ? { box: { l, b, r, t }, strokes } : undefined;
}

/** A figure needs this many curves or slanted segments … */
const MIN_STROKES = 8;
/** … spans at least an inch each way … */
const MIN_SIDE = 72;
/** … and text covers less than this share of it (a framed box of text is not a figure). */
const MAX_TEXT_COVER = 0.3;
/** Drawings closer than this (points) belong to one figure. */
const GAP = 6;
/** A chart's axes may stand this far (points) from its curves. */
const AXIS_GAP = 24;

const near = (a: BoundingBox, c: BoundingBox, gap = GAP) => a.l <= c.r + gap && c.l <= a.r + gap && a.b <= c.t + gap && c.b <= a.t + gap;
const join = (a: BoundingBox, c: BoundingBox): BoundingBox => ({ l: Math.min(a.l, c.l), b: Math.min(a.b, c.b), r: Math.max(a.r, c.r), t: Math.max(a.t, c.t) });
const area = (a: BoundingBox) => Math.max(0, a.r - a.l) * Math.max(0, a.t - a.b);
const overlap = (a: BoundingBox, c: BoundingBox) => Math.max(0, Math.min(a.r, c.r) - Math.max(a.l, c.l)) * Math.max(0, Math.min(a.t, c.t) - Math.max(a.b, c.b));

/** A figure's box grows to take in the straight lines that touch it (a chart's axes), when they are not longer than it. */
function withAxes(box: BoundingBox, rulings: Ruling[]): BoundingBox {
  let grown = box;
  for (const rule of rulings) {
    const line = { l: rule.x1, b: rule.y1, r: rule.x2, t: rule.y2 };
    const fits = line.r - line.l <= 1.5 * (box.r - box.l) && line.t - line.b <= 1.5 * (box.t - box.b);
    if (fits && near(line, box, AXIS_GAP)) grown = join(grown, line);
  }
  return grown;
}

/** Regions of the page that are vector figures; boxes already covered by an image are left out. */
export function figureRegions(drawings: Drawing[], runs: TextRun[], images: BoundingBox[], rulings: Ruling[] = []): BoundingBox[] {
  // Merge until nothing changes: drawings that touch (within GAP) are one cluster.
  let clusters = drawings.map((d) => ({ ...d }));
  for (let changed = true; changed; ) {
    changed = false;
    const next: Drawing[] = [];
    for (const d of clusters) {
      const into = next.find((c) => near(c.box, d.box));
      if (into) {
        into.box = join(into.box, d.box);
        into.strokes += d.strokes;
        changed = true;
      } else next.push({ ...d });
    }
    clusters = next;
  }
  return clusters
    .filter((c) => c.strokes >= MIN_STROKES && c.box.r - c.box.l >= MIN_SIDE && c.box.t - c.box.b >= MIN_SIDE)
    .filter((c) => !images.some((image) => overlap(image, c.box) > 0.5 * area(c.box)))
    .filter((c) => {
      const text = runs.reduce((sum, run) => sum + overlap(c.box, { l: run.x, r: run.x + run.width, b: run.y - run.size * 0.2, t: run.y + run.size * 0.8 }), 0);
      return text < MAX_TEXT_COVER * area(c.box);
    })
    .map((c) => withAxes(c.box, rulings));
}
