// Issue 26: the check that sees what a reader sees, on word and line boxes as pdftotext reports
// them (top-down points); the split of blocks joined across columns; CJK line breaking.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkPage, gutters, overlaps, type Box, type Word } from '../../src/documents/translate/overlay/check.ts';
import { joinLines, splitBlock } from '../../src/documents/translate/overlay/columns.ts';
import { tokenize, wrap } from '../../src/documents/translate/overlay/fit.ts';
import type { Block } from '../../src/documents/document.ts';

/** A word of Noto Sans SC at `size` on a baseline: pdftotext's box spans 1.16 em above and 0.29 em below. */
const word = (text: string, x: number, baseline: number, size = 10): Word => ({ text, xMin: x, xMax: x + text.length * size * 0.5, yMin: baseline - 1.16 * size, yMax: baseline + 0.29 * size });

/** Two columns of body lines, 12 pt apart, from y = 100: left x 72–300, right x 320–548. */
function twoColumns(rows: number): Array<Box & { text: string }> {
  const lines: Array<Box & { text: string }> = [];
  for (let i = 0; i < rows; i++) {
    const y = 100 + i * 12;
    lines.push({ text: `left ${i}`, xMin: 72, xMax: 300, yMin: y - 9, yMax: y + 3 });
    lines.push({ text: `right ${i}`, xMin: 320, xMax: 548, yMin: y - 9, yMax: y + 3 });
  }
  return lines;
}

test('"no word box overlaps another word box": two words printed over each other are one place', () => {
  const result = overlaps([word('tuerca', 100, 200), word('acero', 110, 201), word('fine', 300, 200)]);
  assert.equal(result.places, 1);
  assert.equal(result.words, 2);
});

test('lines set at 1.2 em do not overlap, although pdftotext\'s boxes of Noto Sans SC do (1.45 em tall)', () => {
  const lines = [word('first', 100, 200), word('second', 100, 212), word('third', 100, 224)];
  assert.ok(lines[0]!.yMax > lines[1]!.yMin, 'the raw boxes overlap');
  assert.equal(overlaps(lines).places, 0);
});

test('a hair of overlap (kerning, an italic\'s slant) is not text over text', () => {
  assert.equal(overlaps([word('ab', 100, 200), { ...word('cd', 109.5, 200) }]).places, 0);
});

test('the gutter between two columns is found where lines stand side by side on three rows or more', () => {
  const found = gutters(twoColumns(5));
  assert.equal(found.length, 1);
  assert.ok(found[0]!.xMin >= 300 && found[0]!.xMax <= 320, JSON.stringify(found[0]));
  assert.equal(gutters(twoColumns(2)).length, 0, 'two rows side by side are not yet columns');
});

test('a full-width line ends a gutter: a heading across the page is no crossing', () => {
  const lines = [...twoColumns(4), { text: 'heading', xMin: 72, xMax: 548, yMin: 150, yMax: 165 }, ...twoColumns(4).map((l) => ({ ...l, yMin: l.yMin + 80, yMax: l.yMax + 80 }))];
  const found = gutters(lines);
  assert.equal(found.length, 2);
  assert.ok(found.every((g) => g.yMax < 150 || g.yMin > 165));
});

test('fails because a translated word stands in the gutter of the source page', () => {
  const lines = twoColumns(6);
  const source = { words: lines.map((l) => ({ ...l })), lines };
  const clean = checkPage({ pageNo: 1, width: 612, height: 792, source, translated: { words: [word('izquierda', 72, 112), word('derecha', 330, 112)] } });
  assert.equal(clean.gutterCrossings, 0);
  const crossing = checkPage({ pageNo: 1, width: 612, height: 792, source, translated: { words: [word('atravesando', 290, 112)] } });
  assert.equal(crossing.gutterCrossings, 1);
});

test('fails because a translated word runs onto a picture the source text did not cover; a label kept on it is fine', () => {
  const picture = { xMin: 100, xMax: 300, yMin: 300, yMax: 500 };
  const source = { words: [word('Nut', 150, 400, 8)], lines: [], obstacles: [picture] };
  // A paragraph running over the picture's top edge; inside a picture that held no text at all.
  const onPicture = checkPage({ pageNo: 1, width: 612, height: 792, source, translated: { words: [word('párrafo', 200, 303)] } });
  assert.equal(onPicture.intoDrawings, 1);
  const bare = checkPage({ pageNo: 1, width: 612, height: 792, source: { ...source, words: [] }, translated: { words: [word('párrafo', 200, 400)] } });
  assert.equal(bare.intoDrawings, 1);
  const label = checkPage({ pageNo: 1, width: 612, height: 792, source, translated: { words: [word('Nut', 150, 400, 8)] } });
  assert.equal(label.intoDrawings, 0);
});

test('fails because text runs below the lowest line of the source page (a full page, or its footer)', () => {
  const source = { words: [word('last', 72, 740)], lines: [] };
  const midPage = checkPage({ pageNo: 1, width: 612, height: 792, source: { words: [word('last', 72, 400)], lines: [] }, translated: { words: [word('moved', 72, 600)] } });
  assert.equal(midPage.belowMargin, 0, 'a column that ends mid-page leaves room down to the outer 3 %');
  const result = checkPage({ pageNo: 1, width: 612, height: 792, source, translated: { words: [word('last', 72, 740), word('more', 72, 760)] } });
  assert.equal(result.belowMargin, 1);
});

test('"no body text set below 70 % of its source size", measured where the text stands', () => {
  const run = (size: number) => ({ xMin: 72, xMax: 300, yMin: 100, yMax: 112, size });
  const result = checkPage({ pageNo: 1, width: 612, height: 792, source: { words: [], lines: [], runs: [run(10)] }, translated: { words: [], runs: [run(7), run(6.5)] } });
  assert.equal(result.belowFloor, 1);
  assert.equal(result.smallestSize, 6.5);
  assert.equal(result.sourceSmallestSize, 10);
});

test('every source block translated: its translation on the page, or its source kept in place, or named as missing', () => {
  const words = [word('El', 72, 100), word('muelle', 90, 100), word('Keyway', 300, 300)];
  const result = checkPage({
    pageNo: 1, width: 612, height: 792, source: { words: [], lines: [] }, translated: { words },
    blocks: [{ source: 'The spring', translation: 'El muelle' }, { source: 'Keyway', translation: 'Chavetero' }, { source: 'Lost', translation: 'Perdido' }],
  });
  assert.deepEqual(result.blocks, { total: 3, present: 1, kept: 1, missing: ['Lost'] });
});

test('a block whose lines stand in two columns is split into one block per column, left column first', () => {
  const lines = twoColumns(6);
  // The block holds the first three rows of both columns (the lines inside its box).
  const block: Block = { label: 'text', text: lines.slice(0, 6).map((l) => l.text).join(' '), bbox: { l: 72, r: 548, t: 792 - 91, b: 792 - 130 }, fontSize: 10, bold: false };
  const parts = splitBlock(block, 792, lines, gutters(lines));
  assert.ok(parts, 'split');
  assert.equal(parts.length, 2);
  assert.ok(parts[0]!.bbox.r <= 300 && parts[1]!.bbox.l >= 320);
  assert.match(parts[0]!.text, /^left 0 left 1 left 2/);
  assert.match(parts[1]!.text, /^right 0 right 1 right 2$/);
});

test('a block is never split into parts that drop some of its words: where the lines in its box do not hold all its text, it stays whole', () => {
  const lines = twoColumns(6);
  // Its text names rows 3–5 of the left column too, which stand below its box (pdftotext joined them elsewhere).
  const block: Block = { label: 'text', text: lines.filter((_, i) => i % 2 === 0 || i < 6).map((l) => l.text).join(' '), bbox: { l: 72, r: 548, t: 792 - 91, b: 792 - 130 }, fontSize: 10, bold: false };
  assert.equal(splitBlock(block, 792, lines, gutters(lines)), undefined);
});

test('a block within one column is left as the parser made it', () => {
  const lines = twoColumns(6);
  const block: Block = { label: 'text', text: 'left 0 left 1 left 2', bbox: { l: 72, r: 300, t: 792 - 91, b: 792 - 127 }, fontSize: 10, bold: false };
  assert.equal(splitBlock(block, 792, lines, gutters(lines)), undefined);
});

test('lines are joined as a paragraph: hyphenation undone, no space between CJK characters', () => {
  assert.equal(joinLines(['self-locking nuts are con-', 'sidered here']), 'self-locking nuts are considered here');
  assert.equal(joinLines(['自锁螺母有三种', '不同的弹簧样式']), '自锁螺母有三种不同的弹簧样式');
});

test('CJK punctuation never starts a line and an opening bracket never ends one (kinsoku)', () => {
  const measure = (text: string) => [...text].length * 10;
  for (let width = 30; width <= 120; width += 10) {
    const lines = wrap('他说：「你好，世界。」然后（离开）了。弹簧使锁紧部分和承载部分保持一定距离。', width, measure);
    for (const line of lines) {
      assert.doesNotMatch(line, /^[，。、；：！？）」』》]/u, `width ${width}: "${line}" starts with closing punctuation`);
      assert.doesNotMatch(line, /[（「『《]$/u, `width ${width}: "${line}" ends with an opening bracket`);
    }
  }
});

test('no line break inside a Latin word in Chinese text', () => {
  const tokens = tokenize('使用 Debian 系统的 systemd 启动');
  assert.ok(tokens.includes('Debian') && tokens.includes('systemd'));
  const lines = wrap('使用 Debian 系统的 systemd 启动流程和配置', 70, (t) => [...t].length * 10);
  assert.ok(lines.some((l) => l.includes('Debian')) && lines.some((l) => l.includes('systemd')), lines.join(' | '));
});
