// The metric implementations of `npm run bench:docparse` (bench/docparse/metrics.ts), each against
// identical inputs (1.0) and small edits whose value is computed by hand in the test's comment.
// The cases mirror opendataloader-bench's own tests (tests/test_evaluator_*.py) where they exist.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { cellAccuracy, f1, headingMatch, headingScores, markdownHeadings, readingOrderScores, tableScores, wordRecall, type GridCell } from '../../bench/docparse/metrics.ts';
import { markdownTablesToHtml } from '../../bench/docparse/markdown-html.ts';
import { indelRatio, lcsLength, levenshtein } from '../../bench/docparse/strings.ts';
import { treeEditDistance, type TreeNode } from '../../bench/docparse/tree-edit.ts';

const close = (actual: number | undefined, expected: number, what = '') => assert.ok(actual !== undefined && Math.abs(actual - expected) < 1e-9, `${what} ${actual} ≠ ${expected}`);

/** Textbook dynamic programme, to check the bit-parallel versions against. */
function dpLevenshtein(a: string, b: string): number {
  const A = [...a];
  const B = [...b];
  let prev = Array.from({ length: B.length + 1 }, (_, j) => j);
  for (let i = 1; i <= A.length; i += 1) {
    const cur = [i];
    for (let j = 1; j <= B.length; j += 1) cur[j] = Math.min((prev[j] ?? 0) + 1, (cur[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + (A[i - 1] === B[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[B.length] ?? 0;
}

function dpLcs(a: string, b: string): number {
  const A = [...a];
  const B = [...b];
  let prev = new Array<number>(B.length + 1).fill(0);
  for (let i = 1; i <= A.length; i += 1) {
    const cur = [0];
    for (let j = 1; j <= B.length; j += 1) cur[j] = A[i - 1] === B[j - 1] ? (prev[j - 1] ?? 0) + 1 : Math.max(prev[j] ?? 0, cur[j - 1] ?? 0);
    prev = cur;
  }
  return prev[B.length] ?? 0;
}

describe('string distances (rapidfuzz fuzz.ratio and Levenshtein.distance)', () => {
  test('Levenshtein: kitten → sitting is 3; identical strings 0; the bit-parallel blocks agree with the dynamic programme over 32-character block edges', () => {
    assert.equal(levenshtein('kitten', 'sitting'), 3);
    assert.equal(levenshtein('same', 'same'), 0);
    assert.equal(levenshtein('', 'abc'), 3);
    let seed = 7;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const text = (n: number, alphabet: string) => Array.from({ length: n }, () => [...alphabet][Math.floor(random() * [...alphabet].length)]).join('');
    for (let i = 0; i < 300; i += 1) {
      const alphabet = i % 2 === 0 ? 'ab' : 'abcdé中 ';
      const a = text(Math.floor(random() * 100), alphabet);
      const b = text(Math.floor(random() * 100), alphabet);
      assert.equal(levenshtein(a, b), dpLevenshtein(a, b), `${a} / ${b}`);
      assert.equal(lcsLength(a, b), dpLcs(a, b), `${a} / ${b}`);
    }
  });

  test('NID ratio: identical → 1; "abc"/"abd" → 1 − 2/6; two empty strings → 1', () => {
    close(indelRatio('reading order', 'reading order'), 1);
    close(indelRatio('abc', 'abd'), 1 - 2 / 6);
    close(indelRatio('', ''), 1);
    close(indelRatio('abc', ''), 0);
  });
});

describe('NID (evaluator_reading_order.py)', () => {
  test('identical Markdown → 1; whitespace differences are ignored', () => {
    const text = '# Title\n\nCell 1 Cell 2 Cell 3';
    assert.deepEqual(readingOrderScores(text, text), { nid: 1, nidS: 1 });
    assert.deepEqual(readingOrderScores('Cell 1\nCell 2\tCell 3', 'Cell 1   Cell 2  Cell 3'), { nid: 1, nidS: 1 });
    assert.equal(readingOrderScores('  ', 'anything'), undefined, 'no truth, no score');
  });

  test('one character replaced in 20 → 1 − 2/40; two words swapped "A B"/"B A" → 1 − 4/6', () => {
    close(readingOrderScores('Cell 1 Cell 2 Cell 3', 'Cell 1 Cell X Cell 3')?.nid, 1 - 2 / 40);
    close(readingOrderScores('A B', 'B A')?.nid, 1 - 4 / 6);
  });

  test('NID-S leaves tables out: other cell text lowers NID only', () => {
    const scores = readingOrderScores('Intro\n| A | B |\n| - | - |\n| 1 | 2 |\nOutro', 'Intro\n| A | B |\n| - | - |\n| X | Y |\nOutro');
    assert.ok(scores && scores.nid < 1);
    close(scores?.nidS, 1);
  });
});

describe('TEDS (evaluator_table.py)', () => {
  test('a Markdown table becomes the HTML table the evaluator builds (header row as th, cells escaped)', () => {
    assert.equal(markdownTablesToHtml('| Col1 | Col2 |\n| --- | --- |\n| A & B | <x> |\n'), '<table><tr><th>Col1</th><th>Col2</th></tr><tr><td>A &amp; B</td><td>&lt;x&gt;</td></tr></table>\n');
  });

  test('identical tables → 1; a Markdown table equals its HTML form with th and thead/tbody', () => {
    const table = '<table><tr><td>abc</td><td>1</td></tr></table>';
    assert.deepEqual(tableScores(table, table), { teds: 1, tedsS: 1 });
    assert.deepEqual(tableScores('| Col1 | Col2 |\n| --- | --- |\n| A | B |', '<table><thead><tr><th>Col1</th><th>Col2</th></tr></thead><tbody><tr><td>A</td><td>B</td></tr></tbody></table>'), { teds: 1, tedsS: 1 });
    assert.equal(tableScores('no table', 'no table'), undefined);
    assert.deepEqual(tableScores(table, 'plain text'), { teds: 0, tedsS: 0 });
  });

  test('one cell "abc" read as "xyz": distance 1 (3 of 3 characters) over 3 nodes (table, tr, td) → TEDS 2/3, TEDS-S 1', () => {
    const scores = tableScores('<table><tr><td>abc</td></tr></table>', '<table><tr><td>xyz</td></tr></table>');
    close(scores?.teds, 2 / 3);
    close(scores?.tedsS, 1);
  });

  test('a missing row of two cells: 3 deletions over 7 nodes → 1 − 3/7', () => {
    const scores = tableScores('<table><tr><td>a</td><td>b</td></tr><tr><td>c</td><td>d</td></tr></table>', '<table><tr><td>a</td><td>b</td></tr></table>');
    close(scores?.teds, 1 - 3 / 7);
    close(scores?.tedsS, 1 - 3 / 7);
  });

  test('a spanning header cell written as two pipe cells: a rename (spans differ) and an insertion over 7 nodes → 1 − 2/7', () => {
    const scores = tableScores('<table><tr><td colspan="2">Item</td></tr><tr><td>A</td><td>B</td></tr></table>', '| Item | |\n| --- | --- |\n| A | B |');
    close(scores?.teds, 1 - 2 / 7);
    close(scores?.tedsS, 1 - 2 / 7);
  });

  test('every table of the page counts: two tables, the second missing → its 3 nodes (table, tr, td) over 6 under the outer table', () => {
    const two = '<table><tr><td>a</td></tr></table>\n\ntext\n\n<table><tr><td>b</td></tr></table>';
    close(tableScores(two, '<table><tr><td>a</td></tr></table>')?.teds, 1 - 3 / 6);
  });
});

describe('MHS (evaluator_heading_level.py)', () => {
  test('identical → 1; heading levels are treated alike', () => {
    const markdown = '# Title\nSome content\nAnother line';
    assert.deepEqual(headingScores(markdown, markdown), { mhs: 1, mhsS: 1 });
    assert.deepEqual(headingScores('# Title\nDetails\n## Sub\nMore', '### Title\nDetails\n# Sub\nMore'), { mhs: 1, mhsS: 1 });
    assert.equal(headingScores('Just text', '# Heading'), undefined);
    assert.deepEqual(headingScores('# Title\nSome content', 'Title\nSome content'), { mhs: 0, mhsS: 0 });
  });

  test('a missing section (heading and its content): 2 deletions over 5 nodes → 0.6', () => {
    const scores = headingScores('# Intro\nWelcome\n# Details\nDeep dive', '# Intro\nWelcome');
    close(scores?.mhs, 0.6);
    close(scores?.mhsS, 0.6);
  });

  test('one character of four changed in a section\'s text: 0.25 over 3 nodes → 1 − 0.25/3; MHS-S 1', () => {
    const scores = headingScores('# Intro\nabcd', '# Intro\nabce');
    close(scores?.mhs, 1 - 0.25 / 3);
    close(scores?.mhsS, 1);
  });
});

describe('tree edit distance (APTED costs: delete 1, insert 1, rename by config)', () => {
  const t = (value: string, ...children: TreeNode<string>[]): TreeNode<string> => ({ value, children });
  const rename = (a: string, b: string) => (a === b ? 0 : 1);
  test('Zhang–Shasha\'s example: f(d(a c(b)) e) → f(c(d(a b)) e) is 2', () => {
    assert.equal(treeEditDistance(t('f', t('d', t('a'), t('c', t('b'))), t('e')), t('f', t('c', t('d', t('a'), t('b'))), t('e')), rename), 2);
    assert.equal(treeEditDistance(t('a', t('b'), t('c')), t('a', t('b'), t('c')), rename), 0);
    assert.equal(treeEditDistance(t('a'), t('a', t('b'), t('c')), rename), 2);
  });
});

describe('this project\'s figures', () => {
  const cell = (row: number, col: number, text: string, colSpan = 1): GridCell => ({ row, col, rowSpan: 1, colSpan, text });
  test('table-cell accuracy: same position, span and text; empty truth cells are not counted', () => {
    const truth = [[cell(0, 0, 'Item', 2), cell(1, 0, 'Gnat'), cell(1, 1, '13.65'), cell(2, 0, ''), cell(2, 1, '0.01')]];
    assert.deepEqual(cellAccuracy(truth, truth), { correct: 4, total: 4 });
    const parsed = [[cell(0, 0, 'Item'), cell(1, 0, 'gnat'), cell(1, 1, '13.65 0.01')]];
    assert.deepEqual(cellAccuracy(truth, parsed), { correct: 1, total: 4 }, 'the span is lost, two numbers share a cell; case is ignored');
    assert.deepEqual(cellAccuracy(truth, []), { correct: 0, total: 4 });
  });

  test('heading F1: texts matched at ≥ 80 % similarity in order, levels counted among matches', () => {
    const truth = markdownHeadings('# Publication quality tables\n\n## 1 Introduction\n\ntext\n\n### 1.1 A note');
    assert.deepEqual(headingMatch(truth, truth), { matched: 3, truth: 3, parsed: 3, levelCorrect: 3 });
    const parsed = markdownHeadings('# Publication quality tables∗\n\n## Simon Fear\n\n### 1 Introduction');
    assert.deepEqual(headingMatch(truth, parsed), { matched: 2, truth: 3, parsed: 3, levelCorrect: 1 });
    close(f1(2, 3, 3), 2 / 3);
    close(f1(0, 0, 0), 1);
  });

  test('OCR word recall: words as multisets, case ignored', () => {
    assert.deepEqual(wordRecall('The cat saw the dog.', 'the dog; THE cat saw'), { found: 5, total: 5 });
    assert.deepEqual(wordRecall('the the cat', 'the cat'), { found: 2, total: 3 });
  });
});
