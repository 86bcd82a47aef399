// Issue 32 item 2 / issue 34 item 1: "a ruled frame around a multi-column listing is not a grid of
// one cell per line" — on the real precinct bulletin of the public corpus (pdfplumber's test file,
// bench/docparse/public/pages/README.md), and a hand-built ruled table whose records share their
// breaks, which stays a table.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import type { Ruling, TextRun } from '../../src/documents/layout/geometry.ts';
import { findTables } from '../../src/documents/layout/tables/find.ts';
import { runDocparse } from '../../src/documents/parse.ts';

const corpusPage = (name: string) => readFileSync(new URL(`../../bench/docparse/public/pages/${name}`, import.meta.url));

const run = (text: string, x: number, y: number): TextRun => ({ text, x, y, width: text.length * 4.5, size: 8, bold: false, hasEOL: false });
const box = (l: number, b: number, r: number, t: number): Ruling[] => [
  { x1: l, y1: b, x2: r, y2: b },
  { x1: l, y1: t, x2: r, y2: t },
  { x1: l, y1: b, x2: l, y2: t },
  { x1: r, y1: b, x2: r, y2: t },
];

describe('ruled frames round panels of text (issue 34 item 1, issue 32 item 2)', () => {
  test('la-precinct: "a ruled frame around a multi-column listing is not a grid of one cell per line" — each contest one paragraph, panels read one after the other', async () => {
    const { document } = await runDocparse(corpusPage('la-precinct.pdf'), { name: 'la-precinct.pdf' });
    const blocks = document.pages.flatMap((p) => p.blocks);
    assert.equal(blocks.filter((b) => b.label === 'table').length, 0, 'no table made of the frame');
    const texts = blocks.map((b) => b.text);
    assert.ok(texts.includes('GOVERNOR VOTER NOMINATED NEEL KASHKARI REP 247 EDMUND G BROWN DEM 69'), 'an entry is read across (name, party, votes) and a contest is one paragraph');
    assert.ok(texts.includes('AJ-SUPREME CT-G. LIU YES 90 NO 142'));
    const at = (start: string) => texts.findIndex((t) => t.startsWith(start));
    assert.ok(at('36TH ASSEMBLY DIST') < at('AJ-SUPREME CT-G. LIU'), 'the first panel is read to its end before the second');
    assert.ok(at('AJ 2D APP DV8-M. FLIER') < at('JUDGE-SUPERIOR COURT #61'), 'the second before the third');
    assert.ok(at('STATE MEASURE 47') < at('STATE MEASURE 48'), 'the third before the fourth');
  });

  test('"a table\'s rows run across all its columns": a ruled table whose records are one ruled row of many lines, with breaks shared by every column, stays a table', () => {
    // Three ruled columns, a header row, and one ruled body row of 12 records in groups of three.
    const rulings = [...box(50, 100, 350, 400), { x1: 50, y1: 380, x2: 350, y2: 380 }, { x1: 150, y1: 100, x2: 150, y2: 400 }, { x1: 250, y1: 100, x2: 250, y2: 400 }];
    const runs: TextRun[] = [run('Item', 60, 385), run('Count', 160, 385), run('Price', 260, 385)];
    let y = 365;
    for (let i = 0; i < 12; i += 1) {
      runs.push(run(`Part ${i + 1}`, 60, y), run(String(10 + i), 160, y), run(`${i + 1}.50`, 260, y));
      y -= i % 3 === 2 ? 20 : 10;
    }
    const found = findTables(rulings, runs);
    assert.equal(found.tables.length, 1);
    assert.equal(found.panels.length, 0);
    assert.equal(found.tables[0]?.table?.numRows, 13);
  });
});
