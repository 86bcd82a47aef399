// Issue 25's table rules ("Tables break on real typesetting"), each on a real page from another
// project's corpus or a Debian manual (test/fixtures/public/README.md says where each comes from),
// read through the whole pipeline, plus small hand-built cases for the rules underneath.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import type { Table } from '../../src/documents/document.ts';
import type { DoclingDocument } from '../../src/documents/export/docling.ts';
import { htmlTable } from '../../src/documents/export/markdown.ts';
import type { Ruling, TextRun } from '../../src/documents/layout/geometry.ts';
import { findTables } from '../../src/documents/layout/tables/find.ts';
import { runDocparse } from '../../src/documents/parse.ts';
import { tableGrid } from '../helpers/table-grid.ts';

const fixture = (name: string) => readFileSync(new URL(`../fixtures/public/${name}`, import.meta.url));

async function parse(name: string) {
  const { document, markdown, json } = await runDocparse(fixture(name), { name });
  const blocks = document.pages.flatMap((p) => p.blocks);
  return { blocks, tables: blocks.filter((b) => b.label === 'table'), markdown, json: JSON.parse(json) as DoclingDocument };
}

const grid = tableGrid;

const run = (text: string, x: number, y: number, width = text.length * 5): TextRun => ({ text, x, y, width, size: 9, bold: false, hasEOL: false });

describe('tables on real typesetting (issue 25, item "Tables")', () => {
  test('OTSL paper, Table 1: "multi-line header cells and multi-line rows merged into one row; sub-rows kept as rows" — one table, not four, and its last row inside it', async () => {
    const { tables, blocks, markdown } = await parse('2305.03393v1-pg9.pdf');
    assert.equal(tables.length, 1, markdown);
    const rows = grid(tables[0]?.table);
    const header = ['# enc-layers', '# dec-layers', 'Language', 'TEDs', 'TEDs', 'TEDs', 'mAP (0.75)', 'Inference time (secs)'];
    assert.deepEqual(rows[0], header, 'two printed lines of a header cell are one cell');
    assert.deepEqual(rows[1], ['# enc-layers', '# dec-layers', 'Language', 'simple', 'complex', 'all', 'mAP (0.75)', 'Inference time (secs)']);
    assert.deepEqual(rows.slice(2), [
      ['6', '6', 'OTSL', '0.965', '0.934', '0.955', '0.88', '2.73'],
      ['6', '6', 'HTML', '0.969', '0.927', '0.955', '0.857', '5.39'],
      ['4', '4', 'OTSL', '0.938', '0.904', '0.927', '0.853', '1.97'],
      ['4', '4', 'HTML', '0.952', '0.909', '0.938', '0.843', '3.77'],
      ['2', '4', 'OTSL', '0.923', '0.897', '0.915', '0.859', '1.91'],
      ['2', '4', 'HTML', '0.945', '0.901', '0.931', '0.834', '3.81'],
      ['4', '2', 'OTSL', '0.952', '0.92', '0.942', '0.857', '1.22'],
      ['4', '2', 'HTML', '0.944', '0.903', '0.931', '0.824', '2'],
    ], 'each OTSL and HTML line its own row, under the key printed once between them');
    assert.ok(!blocks.some((b) => b.label !== 'table' && /\b0\.944\b|\b0\.824\b/.test(b.text)), 'no cell of the last row scattered into the text after the table');
    const cells = tables[0]?.table?.cells ?? [];
    assert.ok(cells.filter((c) => c.row < 2).every((c) => c.columnHeader), 'both header rows are column headers');
    assert.ok(cells.filter((c) => c.row >= 2).every((c) => !c.columnHeader));
  });

  test('OTSL paper, Table 1: "spanning header cells (colspan) in the JSON and as HTML tables in Markdown where a pipe table cannot hold them"', async () => {
    const { json, markdown } = await parse('2305.03393v1-pg9.pdf');
    const cells = json.tables[0]?.data.table_cells ?? [];
    const at = (text: string) => cells.find((c) => c.text === text);
    assert.deepEqual([at('TEDs')?.col_span, at('TEDs')?.start_col_offset_idx, at('TEDs')?.end_col_offset_idx], [3, 3, 6]);
    assert.deepEqual([at('# enc-layers')?.row_span, at('# enc-layers')?.end_row_offset_idx], [2, 2]);
    const six = cells.filter((c) => c.text === '6');
    assert.deepEqual(six.map((c) => [c.start_row_offset_idx, c.row_span]), [[2, 2], [2, 2]], 'the key printed once spans its two sub-rows');
    assert.equal(json.tables[0]?.data.grid[3]?.[0]?.text, '6', 'the grid repeats a spanning cell in every position it covers');
    assert.match(markdown, /<th colspan="3">TEDs<\/th>/);
    assert.match(markdown, /<th rowspan="2"># enc-layers<\/th>/);
    assert.match(markdown, /<tr><td>HTML<\/td><td>0\.944<\/td><td>0\.903<\/td><td>0\.931<\/td><td>0\.824<\/td><td>2<\/td><\/tr>/);
    assert.doesNotMatch(markdown, /^\| # enc-layers/m, 'no pipe table for a table with spans');
  });

  test('Redbook contents: "a table of contents as a list or a two-column table, dot leaders removed"', async () => {
    const { tables, blocks, markdown } = await parse('redbook-contents-p2.pdf');
    assert.equal(tables.length, 1, markdown);
    const cells = tables[0]?.cells ?? [];
    assert.equal(cells.length, 43, 'every entry of the page, one a row');
    assert.ok(cells.every((row) => row.length === 2));
    assert.deepEqual(cells[0], ['Notices', 'vii']);
    assert.deepEqual(cells[6], ['Comments welcome', 'xiii']);
    assert.deepEqual(cells[8], ['Chapter 1. Securing and protecting IBM DB2 data', '1']);
    assert.deepEqual(cells.at(-1), ['3.6.8 Demonstrating data access with a view and RCAC', '32']);
    assert.doesNotMatch(markdown, /\. \. \./, 'no dot leaders anywhere');
    assert.ok(!blocks.some((b) => b.label !== 'table' && /\b(?:Trademarks|Security fundamentals)\b/.test(b.text)), 'no entry left in a paragraph');
  });

  test('Texinfo manual contents (pdfTeX): "a table of contents … dot leaders removed", chapter lines set in bold and larger included', async () => {
    const { tables, markdown } = await parse('libtasn1-contents-p3.pdf');
    assert.equal(tables.length, 1, markdown);
    const cells = tables[0]?.cells ?? [];
    assert.deepEqual(cells.slice(0, 3), [['1 Introduction', '1'], ['2 ASN.1 structure handling', '2'], ['2.1 ASN.1 syntax', '2']]);
    assert.deepEqual(cells.slice(-3), [['A.1 GNU Free Documentation License', '24'], ['Concept Index', '32'], ['Function and Data Index', '33']]);
    assert.equal(cells.length, 21);
    assert.doesNotMatch(markdown, /\. \. \.|\.{3}/);
  });

  test('a spread with a checkbox table: "a table drawn as one picture with its words on top" is read as a table — header of two lines, one row per item, never across the gutter', async () => {
    const { tables, blocks, markdown } = await parse('legal-aid-spread-checkbox-table.pdf');
    assert.equal(tables.length, 1, markdown);
    const cells = tables[0]?.cells ?? [];
    assert.deepEqual(cells[0]?.slice(-2), ['State funded legal aid', 'CSOs'], 'a header cell of two printed lines is one cell');
    const items = cells.slice(1).map((row) => row.find((t) => /[a-z]{3}/.test(t)));
    assert.deepEqual(items, ['Persons with disabilities', 'Children', 'Women', 'The elderly', 'Migrants', 'Refugees, asylum seekers, or stateless persons', 'Internally displaced persons']);
    assert.ok(cells.slice(1).every((row) => row.at(-1) !== '' && row.at(-2) !== ''), 'each item has both of its boxes');
    assert.ok(blocks.some((b) => b.label !== 'table' && /Yes, at regional \(district\) level/.test(b.text)), 'the left page\'s list stays text');
  });
});

describe('table rules on hand-built pages (issue 25)', () => {
  // A ruled table like TeX draws it: column rules one piece per printed line; a partial rule under
  // a group heading; two numbered lines in one ruled row under a key printed between them.
  const h = (x1: number, x2: number, y: number): Ruling => ({ x1, x2, y1: y, y2: y });
  const v = (x: number, y1: number, y2: number): Ruling => ({ x1: x, x2: x, y1, y2 });
  const rulings = [
    h(100, 300, 300), h(160, 300, 287), h(100, 300, 274), h(100, 300, 248),
    ...[160, 230].flatMap((x) => [v(x, 287, 300), v(x, 274, 287), v(x, 261, 274), v(x, 248, 261)]),
    v(265, 274, 287), v(265, 261, 274), v(265, 248, 261),
  ];
  const runs = [
    run('Model', 110, 284), run('Scores', 254, 291, 22), run('a', 195, 278), run('b', 245, 278), run('c', 280, 278),
    run('Big', 110, 257), run('one', 170, 264), run('1.0', 240, 264), run('2.0', 275, 264), run('two', 170, 251), run('3.0', 240, 251), run('4.0', 275, 251),
  ];

  test('"sub-rows kept as rows": collinear pieces of a column rule are one rule, a key between two numbered lines spans them', () => {
    const { tables } = findTables(rulings, runs);
    assert.equal(tables.length, 1);
    assert.deepEqual(grid(tables[0]?.table), [
      ['Model', '', 'Scores', 'Scores'],
      ['Model', 'a', 'b', 'c'],
      ['Big', 'one', '1.0', '2.0'],
      ['Big', 'two', '3.0', '4.0'],
    ]);
  });

  test('a wrapped cell in a ruled row stays one cell: lines without numbers of their own are not sub-rows', () => {
    const wrapped = [
      run('Model', 110, 284), run('Scores', 254, 291, 22), run('a', 195, 278), run('b', 245, 278), run('c', 280, 278),
      run('Big', 110, 264), run('first half', 165, 264, 40), run('1.0', 240, 264), run('2.0', 275, 264), run('second half', 165, 251, 45),
    ];
    const { tables } = findTables(rulings, wrapped);
    assert.deepEqual(grid(tables[0]?.table).slice(2), [['Big', 'first half second half', '1.0', '2.0']]);
  });

  test('booktabs (rules only): "multi-line header cells … merged into one row", a partial rule under a group heading keeps the rows apart and the cells beside it span both', () => {
    const booktabs = [h(100, 400, 300), h(220, 340, 287), h(100, 400, 270), h(100, 400, 230)];
    const text = [
      run('#', 125, 291, 5), run('enc-layers', 110, 278, 40), run('TEDs', 270, 291, 20), run('simple', 225, 277, 28), run('all', 310, 277, 12), run('Time', 360, 291, 20), run('(secs)', 356, 278, 28),
      run('6', 125, 258, 5), run('0.96', 225, 258, 18), run('0.95', 310, 258, 18), run('2.73', 360, 258, 18),
      run('4', 125, 244, 5), run('0.93', 225, 244, 18), run('0.92', 310, 244, 18), run('1.97', 360, 244, 18),
    ];
    const { tables } = findTables(booktabs, text);
    assert.equal(tables.length, 1);
    assert.deepEqual(grid(tables[0]?.table), [
      ['# enc-layers', 'TEDs', 'TEDs', 'Time (secs)'],
      ['# enc-layers', 'simple', 'all', 'Time (secs)'],
      ['6', '0.96', '0.95', '2.73'],
      ['4', '0.93', '0.92', '1.97'],
    ]);
    const header = (tables[0]?.table?.cells ?? []).filter((c) => c.row < 2);
    assert.ok(header.every((c) => c.columnHeader));
  });

  test('booktabs without a group heading: header cells of two printed lines each (the second line as full as the first) are one header row', () => {
    const booktabs = [h(100, 400, 300), h(100, 400, 270), h(100, 400, 230)];
    const text = [
      run('Inference', 110, 289, 40), run('Score', 225, 289, 25), run('time (secs)', 108, 278, 45), run('(0.75)', 224, 278, 27),
      run('2.73', 110, 258, 18), run('0.96', 225, 258, 18), run('1.97', 110, 244, 18), run('0.93', 225, 244, 18),
    ];
    const { tables } = findTables(booktabs, text);
    assert.deepEqual(tables[0]?.cells, [['Inference time (secs)', 'Score (0.75)'], ['2.73', '0.96'], ['1.97', '0.93']]);
  });

  test('a frame drawn round a page is not a table (the two page backgrounds of a spread): its text is all in one ruled row', () => {
    // The two page backgrounds of a spread, drawn as rectangles of slightly different heights.
    const frame = [h(0, 600, 0), h(0, 600, 792), v(0, 0, 792), v(600, -14, 806), h(600, 1200, -14), h(600, 1200, 806), v(1200, -14, 806)];
    // On each page a list with a number at its right, lined up like two columns.
    const text = [400, 380, 360].flatMap((y, i) => [run(`Left item ${i}`, 50, y), run(`${i + 10}`, 300, y), run(`Right item ${i}`, 650, y), run(`${i + 20}`, 900, y)]);
    const { tables } = findTables(frame, text);
    assert.ok(tables.every((t) => t.bbox.r - t.bbox.l < 600), 'no table across the two pages');
  });

  test('"spanning header cells … as HTML tables in Markdown": colspan and rowspan kept, cell text escaped', () => {
    const cell = (text: string, row: number, col: number, rowSpan = 1, colSpan = 1, columnHeader = false) => ({ text, row, col, rowSpan, colSpan, columnHeader, rowHeader: false, bbox: { l: 0, r: 0, t: 0, b: 0 } });
    const table: Table = { numRows: 2, numCols: 2, cells: [cell('A<B & "C"', 0, 0, 1, 2, true), cell('x', 1, 0), cell('y', 1, 1)] };
    assert.equal(htmlTable(table), '<table>\n<tr><th colspan="2">A&lt;B &amp; &quot;C&quot;</th></tr>\n<tr><td>x</td><td>y</td></tr>\n</table>');
  });
});
