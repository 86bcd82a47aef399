// Issue 18 "Text fitting: the translation is set in the block's box with the source's size where it
// fits, shrunk in small steps down to a floor (say 70 %), then wrapped beyond the box only downwards
// into free space; never over another block." Measured with a fixed-advance font: 0.5 em per character.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fitText, SHRINK_FLOOR, wrap } from '../../src/documents/translate/overlay/fit.ts';

const measure = (text: string, size: number) => text.length * size * 0.5;
const box = { x: 0, y: 100, width: 100, height: 12 };

test('the source size where the translation fits the box', () => {
  const fit = fitText({ text: 'short text', box, fontSize: 10, limitY: 300, measure });
  assert.equal(fit.size, 10);
  assert.deepEqual(fit.lines, ['short text']);
});

test('shrunk in 5 % steps until it fits, not further', () => {
  // 24 characters: 120 pt at 10 pt, fits 100 pt at 8 pt (96 pt), the first 5 % step that fits in one line.
  const fit = fitText({ text: 'abcdefghijklmnopqrstuvwx', box, fontSize: 10, limitY: 300, measure });
  assert.ok(Math.abs(fit.size - 8) < 1e-9, String(fit.size));
  assert.equal(fit.lines.length, 1);
});

test('at the 70 % floor the text grows downwards into free space, as far as it needs and no further than the limit', () => {
  const text = 'word '.repeat(40).trim();
  const fit = fitText({ text, box, fontSize: 10, limitY: 300, measure });
  assert.ok(Math.abs(fit.size - 10 * SHRINK_FLOOR) < 1e-9);
  assert.ok(fit.lines.length > 2);
  assert.ok(box.y + fit.height <= 300);
  assert.equal(fit.belowFloor, false);
});

test('issue 34 "never below 70 %, never over other text": with no free space below, the lines that fit stay at the floor, the rest is handed on for the notes page', () => {
  const text = 'word '.repeat(20).trim();
  const fit = fitText({ text, box, fontSize: 10, limitY: box.y + box.height, measure, marker: '→1' });
  assert.equal(fit.belowFloor, true);
  assert.ok(Math.abs(fit.size - 10 * SHRINK_FLOOR) < 1e-9, `set at the floor, not under it: ${fit.size}`);
  assert.ok(fit.height <= box.height + 0.5, `${fit.height}`);
  assert.ok(fit.overflow && fit.overflow.length > 0, 'the rest continues elsewhere');
  assert.equal(`${fit.lines.join(' ')} ${fit.overflow}`.replace(/\s+/g, ' '), text, 'no word is lost');
  // The marker fits after the last line that stays.
  assert.ok(measure(`${fit.lines.at(-1)} →1`, fit.size) <= box.width, fit.lines.at(-1));
});

test('issue 34: a box too small for even one line at the floor keeps only the marker; the whole text goes to the notes page', () => {
  const fit = fitText({ text: 'a translation far too long for a box of two points', box: { ...box, height: 2 }, fontSize: 10, limitY: box.y + 2, measure });
  assert.deepEqual(fit.lines, ['']);
  assert.equal(fit.overflow, 'a translation far too long for a box of two points');
});

test('line height follows the source block (scaled with the size)', () => {
  const fit = fitText({ text: 'word '.repeat(30).trim(), box: { ...box, height: 200 }, fontSize: 10, lineHeight: 15, limitY: 400, measure });
  assert.equal(fit.lineHeight / fit.size, 1.5);
});

test('Chinese wraps between characters and keeps closing punctuation on its line', () => {
  const lines = wrap('本手册说明如何种植小花园。早上给植物浇水', 50, (t) => [...t].length * 10);
  assert.deepEqual(lines, ['本手册说明', '如何种植小', '花园。早上', '给植物浇水']);
});
