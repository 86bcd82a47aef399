// Issue 32 item 3 and item 1: a table's grid as it is read — a right-to-left table in logical order
// (its first column the rightmost printed), and the empty gaps between printed columns not taken
// for columns. Real pages: docling's Persian test page (test/fixtures/public/README.md) and an
// ICDAR 2013 page of the public corpus (bench/docparse/public/icdar2013/README.md).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import type { Table } from '../../src/documents/document.ts';
import { runDocparse } from '../../src/documents/parse.ts';

async function tablesOf(url: URL, pageNo = 1): Promise<Table[]> {
  const { document } = await runDocparse(readFileSync(url), { name: 'page.pdf' });
  return (document.pages[pageNo - 1]?.blocks ?? []).flatMap((b) => (b.table ? [b.table] : []));
}

const rowsOf = (table: Table | undefined) => {
  const rows: string[][] = Array.from({ length: table?.numRows ?? 0 }, () => []);
  for (const cell of [...(table?.cells ?? [])].sort((a, b) => a.col - b.col)) rows[cell.row]?.push(cell.text);
  return rows;
};

describe('tables in reading order (issue 32)', () => {
  test('right_to_left_03: "RTL tables in logical order (the first column is the rightmost)" — label, then value, no gap columns', async () => {
    const tables = await tablesOf(new URL('../fixtures/public/right_to_left_03.pdf', import.meta.url));
    const second = tables[1];
    assert.equal(second?.numCols, 2, JSON.stringify(rowsOf(second)));
    assert.deepEqual(rowsOf(second)[0], ['تاريخ ارائه مدارک', '1403/09/19']);
    assert.deepEqual(rowsOf(second)[2], ['شماره جلسه کميته عرضه', '436']);
  });

  test('us-017 p. 1: "numbers under their header" — a table of bare figures under a two-level header, with its label-only row kept as a row', async () => {
    const [table] = await tablesOf(new URL('../../bench/docparse/public/icdar2013/us-017.pdf', import.meta.url));
    const rows = rowsOf(table);
    assert.equal(table?.numCols, 10);
    assert.deepEqual(rows.find((row) => row[0] === '1996'), ['1996', '51,544', '37,481', '14,062', '45,611', '32,762', '12,849', '5,933', '4,719', '1,213']);
    assert.ok(rows.some((row) => row[0] === 'Projected' && row.slice(1).every((text) => text === '')), 'the label-only row "Projected" is a row of its own');
    const header = table?.cells.find((cell) => cell.text === 'Public');
    assert.equal(header?.colSpan, 3, 'a group heading spans its three columns');
  });
});
