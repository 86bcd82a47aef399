// Straight rules and image boxes from a page's painted paths and image placements (page-objects.ts
// walks PDFium's page objects into these). The layout stage finds ruled tables from the rules and
// pictures from the image boxes.
import type { BoundingBox } from '../document.ts';
import type { Ruling } from '../layout/geometry.ts';
import { drawingOf, type Drawing } from './figures.ts';

export type Matrix = [number, number, number, number, number, number];
export const IDENTITY: Matrix = [1, 0, 0, 1, 0, 0];

/** `outer ∘ inner`: the matrix that applies `inner` first, then `outer` (PDF's cm concatenation). */
export function compose(outer: Matrix, inner: Matrix): Matrix {
  const [a, b, c, d, e, f] = outer;
  const [p, q, r, s, t, u] = inner;
  return [a * p + c * q, b * p + d * q, a * r + c * s, b * r + d * s, a * t + c * u + e, b * t + d * u + f];
}

export function apply(m: Matrix, x: number, y: number): [number, number] {
  return [m[0] * x + m[2] * y + m[4], m[1] * x + m[3] * y + m[5]];
}

/** Path opcodes of a PaintedPath's data (pdf.js's DrawOPS, kept so figures.ts reads either): moveTo, lineTo, curveTo, closePath. */
export const DRAW = { moveTo: 0, lineTo: 1, curveTo: 2, quadraticCurveTo: 3, closePath: 4 } as const;

/** One painted path in page space: its opcodes and points, and whether it is only filled (not stroked). */
export type PaintedPath = { data: Float32Array; fillOnly: boolean };

/** The drawing of a page that layout needs: straight rules and the boxes images are painted into. */
export type PageGraphics = { rulings: Ruling[]; images: BoundingBox[]; drawings: Drawing[] };

/** Images smaller than this (points, either side) are bullets, rules or dust, not pictures. */
const MIN_IMAGE_SIDE = 8;

/**
 * Axis-aligned straight rules, in page points from the bottom left (relative to `origin`). Stroked
 * segments count as they are; a filled rectangle counts as a rule when it is thin (many generators
 * draw rules that way) and as its four edges otherwise (a shaded cell's border is a cell border).
 * Curves and clip paths are not rules. An image is painted into the unit square under its matrix
 * (PDF 32000 §8.9.5), so its box is that square's image; a box clipped to the page is kept, one
 * wholly off the page is not.
 */
export function graphicsFrom(paths: PaintedPath[], imageMatrices: Matrix[], origin: { x: number; y: number }, page?: { width: number; height: number }): PageGraphics {
  const rulings: Ruling[] = [];
  const drawings: Drawing[] = [];
  const shift = (x: number, y: number): [number, number] => [x - origin.x, y - origin.y];
  const shifted: Matrix = [1, 0, 0, 1, -origin.x, -origin.y];
  for (const path of paths) {
    const drawing = drawingOf(path.data, shift);
    if (drawing) drawings.push(drawing);
    for (const polygon of polylines(path.data, shifted)) rulings.push(...(path.fillOnly ? filledRules(polygon) : strokedRules(polygon)));
  }
  const images = imageMatrices.flatMap((m) => imageBox(m, origin, page) ?? []);
  return { rulings, images: mergeImages(images), drawings };
}

function imageBox(ctm: Matrix, origin: { x: number; y: number }, page: { width: number; height: number } | undefined): BoundingBox | undefined {
  const corners = [apply(ctm, 0, 0), apply(ctm, 1, 0), apply(ctm, 0, 1), apply(ctm, 1, 1)].map(([x, y]) => [x - origin.x, y - origin.y] as const);
  const xs = corners.map(([x]) => x);
  const ys = corners.map(([, y]) => y);
  let box = { l: Math.min(...xs), b: Math.min(...ys), r: Math.max(...xs), t: Math.max(...ys) };
  if (page) box = { l: Math.max(0, box.l), b: Math.max(0, box.b), r: Math.min(page.width, box.r), t: Math.min(page.height, box.t) };
  if (!(box.r - box.l >= MIN_IMAGE_SIDE && box.t - box.b >= MIN_IMAGE_SIDE)) return undefined;
  return box;
}

/** Tiles of one picture (some generators cut an image into strips) become one box; others stay apart. */
function mergeImages(boxes: BoundingBox[]): BoundingBox[] {
  const out: BoundingBox[] = [];
  for (const box of boxes) {
    const touching = out.findIndex((o) => box.l <= o.r + 1 && o.l <= box.r + 1 && box.b <= o.t + 1 && o.b <= box.t + 1);
    if (touching < 0) {
      out.push({ ...box });
      continue;
    }
    const o = out[touching] as BoundingBox;
    out[touching] = { l: Math.min(o.l, box.l), b: Math.min(o.b, box.b), r: Math.max(o.r, box.r), t: Math.max(o.t, box.t) };
  }
  return out;
}

/** The path's straight pieces as point lists in page space; a curve ends the current piece. */
function polylines(data: Float32Array, ctm: Matrix): Array<Array<[number, number]>> {
  const pieces: Array<Array<[number, number]>> = [];
  let current: Array<[number, number]> = [];
  let start: [number, number] | undefined;
  const flush = () => {
    if (current.length > 1) pieces.push(current);
    current = [];
  };
  for (let i = 0; i < data.length; ) {
    const op = data[i++];
    if (op === DRAW.moveTo || op === DRAW.lineTo) {
      const point = apply(ctm, data[i++] ?? 0, data[i++] ?? 0);
      if (op === DRAW.moveTo) {
        flush();
        start = point;
      }
      current.push(point);
    } else if (op === DRAW.closePath) {
      if (start) current.push(start);
      flush();
    } else if (op === DRAW.curveTo || op === DRAW.quadraticCurveTo) {
      i += op === DRAW.curveTo ? 6 : 4;
      const end = apply(ctm, data[i - 2] ?? 0, data[i - 1] ?? 0);
      flush();
      current = [end];
    } else break; // unknown opcode: the rest cannot be decoded
  }
  flush();
  return pieces;
}

const AXIS_TOLERANCE = 1;
/** Shorter than this each way (points), a segment is a dot, not a rule. */
const MIN_RULE = 0.01;

function strokedRules(points: Array<[number, number]>): Ruling[] {
  const rules: Ruling[] = [];
  for (let k = 1; k < points.length; k += 1) {
    const [ax, ay] = points[k - 1] ?? [0, 0];
    const [bx, by] = points[k] ?? [0, 0];
    // A segment of no length (a path closed where it already stands, a dot) is no rule.
    if (Math.abs(ax - bx) < MIN_RULE && Math.abs(ay - by) < MIN_RULE) continue;
    if (Math.abs(ay - by) <= AXIS_TOLERANCE || Math.abs(ax - bx) <= AXIS_TOLERANCE) {
      rules.push({ x1: Math.min(ax, bx), y1: Math.min(ay, by), x2: Math.max(ax, bx), y2: Math.max(ay, by) });
    }
  }
  return rules;
}

const THIN = 3;

function filledRules(points: Array<[number, number]>): Ruling[] {
  if (points.length < 4 || points.length > 6) return [];
  const xs = points.map(([x]) => x);
  const ys = points.map(([, y]) => y);
  const [l, r, b, t] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
  const isRectangle = points.every(([x, y]) => (Math.abs(x - l) < 0.5 || Math.abs(x - r) < 0.5) && (Math.abs(y - b) < 0.5 || Math.abs(y - t) < 0.5));
  if (!isRectangle) return [];
  if (t - b <= THIN) return [{ x1: l, y1: (t + b) / 2, x2: r, y2: (t + b) / 2 }];
  if (r - l <= THIN) return [{ x1: (l + r) / 2, y1: b, x2: (l + r) / 2, y2: t }];
  return strokedRules([[l, b], [r, b], [r, t], [l, t], [l, b]]);
}
