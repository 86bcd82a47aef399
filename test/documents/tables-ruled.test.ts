// Issue 32: ruled tables on documents nobody here wrote (the ICDAR 2013 competition pages of the public
// corpus, bench/docparse/public/icdar2013/README.md says where they come from), read through the whole
// pipeline, plus hand-built cases for the rules underneath.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import type { Table } from '../../src/documents/document.ts';
import { tableRules } from '../../src/documents/layout/tables/grids.ts';
import { runDocparse } from '../../src/documents/parse.ts';
import { tableGrid } from '../helpers/table-grid.ts';

const corpusFile = (path: string) => readFileSync(new URL(`../../bench/docparse/public/${path}`, import.meta.url));

async function tablesOf(path: string, pageNo = 1): Promise<Table[]> {
  const { document } = await runDocparse(corpusFile(path), { name: path });
  return (document.pages[pageNo - 1]?.blocks ?? []).flatMap((b) => (b.table ? [b.table] : []));
}

const rowsOf = tableGrid;

describe('ruled tables (issue 32)', () => {
  test('"collinear pieces of one rule are joined": a piece a fraction of a point off the line does not swallow the pieces before it', () => {
    // A column rule drawn one piece per row at x = 507.24, and a shaded header cell's edge at x = 507.0.
    const pieces = [
      { x1: 507, y1: 635, x2: 507, y2: 650 },
      ...[550, 562, 574, 586].map((y) => ({ x1: 507.24, y1: y, x2: 507.24, y2: y + 11.5 })),
    ];
    const { vertical } = tableRules(pieces, 0);
    const length = vertical.reduce((sum, r) => sum + r.y2 - r.y1, 0);
    assert.ok(length >= 15 + 4 * 11.5 - 0.01, `every piece is still drawn (${length} pt of ${15 + 46})`);
  });

  test('us-027 p. 1: "a band with no text between an edge drawn across the table and one drawn only in part is the padding of a shaded cell, not a column" — Age | Enrollment | %', async () => {
    const [table] = await tablesOf('icdar2013/us-027.pdf');
    const rows = rowsOf(table);
    assert.deepEqual(rows[0], ['Age', 'Enrollment', '%']);
    assert.deepEqual(rows[1], ['14-17', '231,000', '1.3']);
    assert.deepEqual(rows.at(-1), ['Total', '17,758,000', '100']);
    assert.equal(rows.length, 9);
  });

  test('issue-53: "bands at a frame\'s top and bottom that no column rule runs through, holding text in one column, are its title and key, not rows"', async () => {
    const { document } = await runDocparse(corpusFile('pages/issue-53.pdf'), { name: 'issue-53.pdf' });
    const blocks = document.pages[0]?.blocks ?? [];
    const table = blocks.find((b) => b.table)?.table;
    const rows = rowsOf(table);
    assert.equal(rows[0]?.[1], 'Intl Pax Traffic', 'the table starts at its own first row');
    assert.ok(rows.at(-1)?.[0]?.startsWith('FY2015 TTL'), 'and ends at its last');
    assert.ok(blocks.some((b) => !b.table && b.text === 'Key'), 'the key below is text of the page');
  });

  test('us-020: "a rule drawn in pieces is one rule" and "a box round one line is not a table\'s rule" — the booktabs table found, its seven columns from the figures, header words set close kept in their own columns', async () => {
    const [table, ...others] = await tablesOf('icdar2013/us-020.pdf');
    assert.equal(others.length, 0);
    const rows = rowsOf(table);
    assert.equal(rows[0]?.[0], 'Education system', 'the running header\'s bar is not a row');
    assert.equal(rows[0]?.[2], 'National desired population overall exclusion rate');
    assert.equal(rows[0]?.[3], 'Weighted school participation rate before substitution');
    assert.deepEqual(rows[1], ['Australia', '100', '4', '96', '98', '95', '93']);
    assert.deepEqual(rows.at(-1), ['United States', '100', '7', '80', '85', '96', '81']);
  });

  test('us-025 p. 2: "a caption between two rules starts the next table" — Tables 3, 4 and 5 are three tables', async () => {
    const tables = await tablesOf('icdar2013/us-025.pdf', 2);
    assert.equal(tables.length, 3);
    assert.ok(!rowsOf(tables[0]).flat().some((text) => /tABLE 4/u.test(text)));
    assert.deepEqual(rowsOf(tables[0]).at(-1)?.slice(0, 2), ['total', '9,369']);
  });

  test('tabula AnimalSounds: "column headers set over a table\'s first rule (a rule under each row, none over the header) are its header row"', async () => {
    const [table] = await tablesOf('tabula/AnimalSounds.pdf');
    const rows = rowsOf(table);
    assert.deepEqual(rows[0], ['Animal', 'Action', 'Result']);
    assert.ok(table?.cells.filter((cell) => cell.row === 0).every((cell) => cell.columnHeader));
    assert.deepEqual(rows[1], ['Cat', 'Says', 'Meow']);
  });
});
