// Making room instead of shrinking below the floor (reflow): when a translation would need a size
// under fit.ts's 70 % floor, the translated blocks below it in its column move down by the height its
// text at the floor takes beyond its box (the source's spacing stays), so it is set at the floor, or
// as close to it as the page allows.
//
// Only translated paragraphs move: their source text is gone from the page, so nothing is left
// behind. Pictures, kept text (code, formulas, numbers), tables, page headers and footers stay where
// the source drew them, and so does every block below one of them. Nothing moves past the page's
// bottom margin or onto anything the text-free page draws (a rule, a fill, an image): where the room
// runs out the text shrinks as little as needed, below the floor only as a last resort.
//
// BabelDOC's typesetter (midend/typesetting.py) does not move paragraphs: it only scales and lets a
// box grow into empty space. This is the step after that. Pure: the caller fits (fitAt) and looks at
// the page (empty).
import type { BoundingBox } from '../../document.ts';
import type { FitResult } from './fit.ts';

/** A box to typeset, in PDF points from the bottom left. `movable`: a translated paragraph that may move down. */
export type Flow = { box: BoundingBox; movable: boolean };

export type Placed<F> = { shift: number; fit: F };

export type ReflowInput<F extends FitResult> = {
  /** The page's boxes to typeset, in any order. */
  flows: Flow[];
  /** What stays where the source drew it: pictures, kept text, tables. */
  fixed: BoundingBox[];
  /** The lowest y text may reach: the page's bottom margin. */
  bottom: number;
  /**
   * Fits flow i with its box `shift` points lower. `limitFor(box)` is how far down (y) its text may
   * reach in `box` (the moved box, or a wider one): to just above the next box below, or the margin.
   */
  fitAt: (index: number, shift: number, limitFor: (box: BoundingBox) => number) => F;
  /** Whether a region holds nothing on the text-free page (no rule, fill or image to cover). */
  empty: (region: BoundingBox) => boolean;
};

/** Space kept between a translation and the next box below it. */
export const GAP = 2;
/** A move smaller than this is rounding. */
const MIN_SHIFT = 0.01;

const sharesWidth = (a: BoundingBox, b: BoundingBox) => a.l < b.r - 0.5 && a.r > b.l + 0.5;
const isBelow = (other: BoundingBox, box: BoundingBox) => other.t <= box.b + 0.5;
const same = (a: BoundingBox, b: BoundingBox) => a === b || (a.l === b.l && a.r === b.r && a.t === b.t && a.b === b.b);
const lowered = (box: BoundingBox, by: number): BoundingBox => ({ ...box, t: box.t - by, b: box.b - by });

/**
 * Places every flow, top to bottom: `shift` is how far it moved down, `fit` how it was set there.
 * `wanted` tells whether some block would have moved had `empty` allowed it (so a caller can look
 * at the page only when it matters).
 */
export function reflow<F extends FitResult>(input: ReflowInput<F>): { placed: Placed<F>[]; wanted: boolean } {
  const { flows, bottom } = input;
  const shift = flows.map(() => 0);
  const stays = [...input.fixed, ...flows.filter((f) => !f.movable).map((f) => f.box)];
  let wanted = false;

  /** The lowest y flow k's text may reach before what stays below it (or the margin). */
  const stayLimit = (k: number) => {
    const box = flows[k]!.box;
    let limit = bottom;
    for (const other of stays) if (!same(other, box) && sharesWidth(other, box) && isBelow(other, box)) limit = Math.max(limit, other.t + GAP);
    return limit;
  };
  /** The movable flows directly or indirectly below flow k in its column, down to what stays. */
  const column = (k: number, found = new Set<number>()) => {
    const box = flows[k]!.box;
    const limit = stayLimit(k);
    flows.forEach((other, j) => {
      if (j === k || found.has(j) || !other.movable || !sharesWidth(other.box, box) || !isBelow(other.box, box)) return;
      if (other.box.t - shift[j]! <= limit - GAP) return; // under a picture, table or kept block: it stays
      found.add(j);
      column(j, found);
    });
    return found;
  };
  /** How far down flow k's text may reach in `box` (where it is now, or wider): the next box below, moved or not, or the margin. */
  const limitFor = (k: number, box: BoundingBox) => {
    const own = flows[k]!.box;
    let limit = bottom;
    for (const other of stays) if (!same(other, own) && sharesWidth(other, box) && isBelow(other, box)) limit = Math.max(limit, other.t + GAP);
    flows.forEach((other, j) => {
      if (j === k || !other.movable || same(other.box, own)) return;
      const now = lowered(other.box, shift[j]!);
      if (sharesWidth(now, box) && isBelow(now, box)) limit = Math.max(limit, now.t + GAP);
    });
    return Math.min(limit, box.b);
  };
  const limitOf = (k: number) => limitFor(k, lowered(flows[k]!.box, shift[k]!));
  const fitAt = (k: number) => input.fitAt(k, shift[k]!, (box) => limitFor(k, box));

  const placed: Placed<F>[] = new Array(flows.length);
  const order = flows.map((_, i) => i).sort((a, b) => flows[b]!.box.t - flows[a]!.box.t);
  for (const i of order) {
    const flow = flows[i]!;
    const limit = limitOf(i);
    let fit = fitAt(i);
    if (flow.movable && fit.floorHeight !== undefined) {
      // Where the text at the floor would end, but never past what stays below.
      const needed = Math.max(flow.box.t - shift[i]! - fit.floorHeight, stayLimit(i));
      const below = [...column(i)];
      const room = Math.min(...below.map((j) => flows[j]!.box.b - shift[j]! - stayLimit(j)));
      // The blocks below move by the whole height the text passes its box, so the source's spacing stays.
      const by = Math.min(flow.box.b - shift[i]! - needed, room);
      if (below.length > 0 && limit - needed >= MIN_SHIFT && by >= MIN_SHIFT) {
        wanted = true;
        const grown: BoundingBox = { ...flow.box, t: flow.box.b - shift[i]!, b: limit - by };
        const clear = input.empty(grown) && below.every((j) => input.empty(lowered(flows[j]!.box, shift[j]! + by)));
        if (clear) {
          for (const j of below) shift[j] = shift[j]! + by;
          fit = fitAt(i);
        }
      }
    }
    placed[i] = { shift: shift[i]!, fit };
  }
  return { placed, wanted };
}
