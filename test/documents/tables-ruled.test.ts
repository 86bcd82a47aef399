// Issue 32: ruled tables on documents nobody here wrote (the ICDAR 2013 competition pages of the public
// corpus, bench/docparse/public/icdar2013/README.md says where they come from), read through the whole
// pipeline, plus hand-built cases for the rules underneath.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import type { Table } from '../../src/documents/document.ts';
import { tableRules } from '../../src/documents/layout/tables/grids.ts';
import { runDocparse } from '../../src/documents/parse.ts';

const corpusFile = (path: string) => readFileSync(new URL(`../../bench/docparse/public/${path}`, import.meta.url));

async function tablesOf(path: string, pageNo = 1): Promise<Table[]> {
  const { document } = await runDocparse(corpusFile(path), { name: path });
  return (document.pages[pageNo - 1]?.blocks ?? []).flatMap((b) => (b.table ? [b.table] : []));
}

/** The table as rows of texts, a spanning cell's text repeated over every position it covers. */
function rowsOf(table: Table | undefined): string[][] {
  if (!table) return [];
  const rows = Array.from({ length: table.numRows }, () => Array.from({ length: table.numCols }, () => '·'));
  for (const cell of table.cells)
    for (let r = cell.row; r < cell.row + cell.rowSpan; r += 1) for (let c = cell.col; c < cell.col + cell.colSpan; c += 1) (rows[r] ?? [])[c] = cell.text;
  return rows;
}

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
});
