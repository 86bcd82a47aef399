// Issue 32: pages whose text runs up or down the page (a landscape table on a page with /Rotate 90)
// are read as the page is shown — on documents of the public corpus (bench/docparse/public/*/README.md
// says where each comes from) — and an upright page with fake-bold text is not taken for one.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import type { Table } from '../../src/documents/document.ts';
import type { TextRun } from '../../src/documents/layout/geometry.ts';
import { textTurn } from '../../src/documents/layout/turned.ts';
import { runDocparse } from '../../src/documents/parse.ts';

const corpusFile = (path: string) => readFileSync(new URL(`../../bench/docparse/public/${path}`, import.meta.url));

const textRows = (table: Table | undefined) => {
  const rows: string[][] = Array.from({ length: table?.numRows ?? 0 }, () => []);
  for (const cell of table?.cells ?? []) rows[cell.row]?.push(cell.text);
  return rows;
};

describe('turned pages (issue 32)', () => {
  test('senate-expenditures: "text running up the page is laid out turned, read as the page is shown" — the header left to right, the rows top to bottom', async () => {
    const { document } = await runDocparse(corpusFile('pages/senate-expenditures.pdf'), { name: 'senate.pdf' });
    const page = document.pages[0];
    const table = page?.blocks.find((b) => b.table)?.table;
    const rows = textRows(table);
    assert.deepEqual(rows[0]?.slice(0, 3), ['DOCUMENT NO.', 'DATE POSTED', 'PAYEE NAME']);
    const flat = rows.map((r) => r.join(' | '));
    const first = flat.findIndex((r) => r.includes('DHAW20190001'));
    const second = flat.findIndex((r) => r.includes('DHAW20190002'));
    assert.ok(first > 0 && second > first, 'DHAW20190001 comes before DHAW20190002');
    assert.ok(flat[first]?.startsWith('DHAW20190001 | 05/03/2019 | CITIBANK - TRAVEL CBA CARD'), flat[first]);
    // Boxes stay in the page's own (unrotated) coordinates: the table is tall and narrow there.
    const box = page?.blocks.find((b) => b.table)?.bbox;
    assert.ok(box && box.t - box.b > box.r - box.l, JSON.stringify(box));
    assert.equal(page?.width, 612);
  });

  test('eu-015 p. 2: "a chart\'s labels are not table cells" once the page is read turned — each of the three tables by country its own', async () => {
    const { document } = await runDocparse(corpusFile('icdar2013/eu-015.pdf'), { name: 'eu-015.pdf' });
    const tables = (document.pages[1]?.blocks ?? []).flatMap((b) => (b.table ? [b.table] : []));
    const headed = tables.map((t) => textRows(t)).filter((rows) => rows.at(-1)?.[0] === 'Grand Total');
    assert.equal(headed.length, 3);
    assert.deepEqual(headed[0]?.[1], ['Spain', '268']);
  });

  test('"text drawn again a fraction of a point off (fake bold) is not a second row": an upright page stays upright', () => {
    const run = (text: string, x: number, y: number): TextRun => ({ text, x, y, width: text.length * 10, size: 20, bold: false, hasEOL: false });
    const runs = [run('2011', 203, 629.7), run('2011', 202.8, 629.5), run('2011 年度报告', 202.8, 629.7), run('年度报告', 261.8, 629.5), run('Annual report', 100, 500), run('of the company', 240, 500)];
    assert.equal(textTurn(runs), 0);
  });
});
