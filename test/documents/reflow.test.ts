// The reflow rule: "when a translation would go below the 70 % floor, it is set at the floor and the
// translated blocks below it in its column move down by the extra height — never over another block,
// a picture, a table, kept text or a rule, never past the bottom margin; where the room runs out the
// text shrinks as little as needed." Fitted with fit.ts and a fixed-advance font (0.5 em a character).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { BoundingBox } from '../../src/documents/document.ts';
import { isBlank } from '../../src/documents/translate/overlay/background.ts';
import { fitText, SHRINK_FLOOR } from '../../src/documents/translate/overlay/fit.ts';
import { GAP, reflow, type Flow } from '../../src/documents/translate/overlay/reflow.ts';

const PAGE_HEIGHT = 800;
const measure = (text: string, size: number) => text.length * size * 0.5;
const long = 'palabra '.repeat(15).trim();
const short = 'corto';

/** A 10 pt paragraph box of `lines` lines (12 pt apart) whose top is at `top` (PDF y), 100 pt wide at `l`. */
const para = (top: number, lines = 2, l = 50): BoundingBox => ({ l, r: l + 100, t: top, b: top - 10 - (lines - 1) * 12 });

function layout(flows: Flow[], texts: string[], options: { fixed?: BoundingBox[]; bottom?: number; empty?: (region: BoundingBox) => boolean } = {}) {
  return reflow({
    flows,
    fixed: options.fixed ?? [],
    bottom: options.bottom ?? 24,
    empty: options.empty ?? (() => true),
    fitAt: (i, shift, limitFor) => {
      const box = { ...flows[i]!.box, t: flows[i]!.box.t - shift, b: flows[i]!.box.b - shift };
      const fit = fitText({
        text: texts[i]!,
        box: { x: box.l, y: PAGE_HEIGHT - box.t, width: box.r - box.l, height: box.t - box.b },
        fontSize: 10,
        lineHeight: 12,
        limitY: PAGE_HEIGHT - limitFor(box),
        measure,
      });
      return { ...fit, box };
    },
  });
}

/** Where a placed text ends (PDF y). */
const textBottom = (p: { fit: { box: BoundingBox; height: number } }) => p.fit.box.t - p.fit.height;

test('"set at the floor, and the blocks below it in its column move down by the extra height"', () => {
  const flows = [para(700), para(670), para(640)];
  const { placed } = layout(flows.map((box) => ({ box, movable: true })), [long, short, short]);
  const [first, second, third] = placed;
  assert.ok(Math.abs(first!.fit.size - 10 * SHRINK_FLOOR) < 1e-9, `size ${first!.fit.size}`);
  assert.equal(first!.fit.belowFloor, false);
  assert.equal(first!.shift, 0);
  // The next block moved down by the height the text takes beyond its box: the source's spacing stays.
  assert.ok(second!.shift > 0);
  const spacing = flows[0]!.b - flows[1]!.t;
  assert.ok(Math.abs(textBottom(first!) - spacing - second!.fit.box.t) < 0.01, `${second!.fit.box.t} vs ${textBottom(first!)}`);
  // Everything below it in the column moved by the same height, keeping its spacing.
  assert.equal(third!.shift, second!.shift);
});

test('"never over another block": a moved column keeps every text above the next one', () => {
  const flows = [para(700), para(670), para(640)];
  const { placed } = layout(flows.map((box) => ({ box, movable: true })), [long, long, long]);
  for (let i = 0; i + 1 < placed.length; i++) assert.ok(textBottom(placed[i]!) >= placed[i + 1]!.fit.box.t + GAP - 0.01, `block ${i} reaches into block ${i + 1}`);
  for (const p of placed) assert.ok(Math.abs(p.fit.size - 10 * SHRINK_FLOOR) < 1e-9, `size ${p.fit.size}`);
});

test('"never off the page": past the bottom margin the blocks move only as far as it; what still does not fit continues on the notes page, never smaller than 70 % (issue 34)', () => {
  const flows = [para(700), para(670)];
  // The second block sits 12 pt above the margin: that is all the room there is.
  const bottom = flows[1]!.b - 12;
  const { placed } = layout(flows.map((box) => ({ box, movable: true })), [long, short], { bottom });
  assert.ok(Math.abs(placed[1]!.shift - 12) < 0.01, `moved ${placed[1]!.shift}`);
  assert.equal(placed[0]!.fit.belowFloor, true);
  // At the floor either way; with the move more of it stays on the page.
  const unmoved = layout(flows.map((box) => ({ box, movable: false })), [long, short], { bottom }).placed[0]!;
  assert.equal(placed[0]!.fit.size, unmoved.fit.size);
  assert.ok(placed[0]!.fit.lines.length > unmoved.fit.lines.length, `${placed[0]!.fit.lines.length} ≤ ${unmoved.fit.lines.length}`);
  assert.ok((placed[0]!.fit.overflow?.length ?? 0) < (unmoved.fit.overflow?.length ?? 0));
  assert.ok(textBottom(placed[0]!) >= placed[1]!.fit.box.t + GAP - 0.01);
  assert.ok(placed[1]!.fit.box.b >= bottom - 0.01);
});

test('"a picture, table or kept block below is not moved": the text shrinks instead, and what lies under it stays', () => {
  const flows = [para(700), para(600)];
  const picture = { l: 40, r: 160, t: 670, b: 620 };
  const { placed } = layout(flows.map((box) => ({ box, movable: true })), [long, short], { fixed: [picture] });
  assert.equal(placed[0]!.fit.belowFloor, true);
  assert.ok(textBottom(placed[0]!) >= picture.t + GAP - 0.01, 'drawn over the picture');
  assert.equal(placed[1]!.shift, 0, 'the caption under the picture moved');
});

test('"only translated blocks move": a block that stays (a table cell, a footer) makes the text shrink', () => {
  const flows = [{ box: para(700), movable: true }, { box: para(670), movable: false }];
  const { placed } = layout(flows, [long, short]);
  assert.equal(placed[0]!.fit.belowFloor, true);
  assert.equal(placed[1]!.shift, 0);
});

test('"in the same column": a block beside it does not move', () => {
  const flows = [para(700), para(670), para(670, 2, 300)];
  const { placed } = layout(flows.map((box) => ({ box, movable: true })), [long, short, short]);
  assert.ok(placed[1]!.shift > 0);
  assert.equal(placed[2]!.shift, 0);
});

test('"never onto a rule or drawing": where the text-free page is not empty, nothing moves and the text shrinks', () => {
  const flows = [para(700), para(670)];
  const rule = 655;
  const empty = (region: BoundingBox) => !(region.b <= rule && region.t >= rule);
  const { placed, wanted } = layout(flows.map((box) => ({ box, movable: true })), [long, short], { empty });
  assert.equal(wanted, true);
  assert.equal(placed[1]!.shift, 0);
  assert.equal(placed[0]!.fit.belowFloor, true);
});

test('a translation that fits its box and gap moves nothing', () => {
  const flows = [para(700), para(670)];
  const { placed, wanted } = layout(flows.map((box) => ({ box, movable: true })), [short, short]);
  assert.equal(wanted, false);
  assert.deepEqual(placed.map((p) => p.shift), [0, 0]);
});

test('"never onto a rule": a region of the text-free page with a rule in it is not empty, the blank page around it is', () => {
  // 72 dpi: one pixel a point. A white 200 × 200 pt page with a grey rule (0.5 pt drawn at 50 %) at y = 100.
  const data = new Uint8Array(200 * 200 * 3).fill(255);
  for (let x = 20; x < 180; x++) data.fill(160, (99 * 200 + x) * 3, (99 * 200 + x) * 3 + 3);
  const raster = { width: 200, height: 200, dpi: 72, data };
  assert.equal(isBlank(raster, 200, { l: 30, r: 120, t: 110, b: 90 }), false);
  assert.equal(isBlank(raster, 200, { l: 30, r: 120, t: 150, b: 110 }), true);
  assert.equal(isBlank(raster, 200, { l: 185, r: 195, t: 110, b: 90 }), true, 'beside the rule');
});
