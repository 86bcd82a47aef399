// The bench's second truth (bench/docparse/docling-truth.ts) renders docling's published JSON the way
// docling's own exports do: a table is laid on its grid, so a cell docling left out of `table_cells`
// (an empty one) is an empty cell and the cells after it keep their columns.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { doclingMarkdownTruth, doclingPages, pipeTableHtml } from '../../bench/docparse/docling-truth.ts';
import { PUBLIC_CORPUS } from '../../bench/docparse/public-corpus.ts';

const cell = (text: string, row: number, col: number, rows = 1, cols = 1) => ({ text, start_row_offset_idx: row, end_row_offset_idx: row + rows, start_col_offset_idx: col, end_col_offset_idx: col + cols });

test("a position no cell of docling's table covers is an empty cell, the cells after it keep their columns", () => {
  const table = { self_ref: '#/tables/0', label: 'table', prov: [{ page_no: 1 }], data: { num_rows: 2, num_cols: 4, table_cells: [cell('Head', 0, 0, 1, 2), cell('C', 0, 2), cell('D', 0, 3), cell('a', 1, 0), cell('X', 1, 2)] } };
  const doc = { body: { self_ref: '#/body', label: 'unspecified', children: [{ $ref: '#/tables/0' }] }, furniture: { self_ref: '#/furniture', label: 'unspecified' }, texts: [], tables: [table], pictures: [], groups: [] };
  assert.deepEqual(doclingPages(doc).get(1), ['<table>\n<tr><td colspan="2">Head</td><td>C</td><td>D</td></tr>\n<tr><td>a</td><td></td><td>X</td><td></td></tr>\n</table>']);
});

test("redp5110 p. 8 in docling's truth: Table 2-2's X marks under *JOBCTL and QIBM_DB_SQLADM, six cells a row, as docling's own Markdown has them", () => {
  const truth = readFileSync(path.join(PUBLIC_CORPUS, 'docling', 'redp5110_sampled.docling.md'), 'utf8');
  const page = truth.split('<!-- page 8 -->')[1]?.split('<!-- page 9 -->')[0] ?? '';
  const row = page.split('\n').find((l) => l.includes('SET CURRENT DEGREE'));
  assert.equal(row, '<tr><td>SET CURRENT DEGREE (SQL statement)</td><td>X</td><td></td><td>X</td><td></td><td></td></tr>');
});

test("docling's Markdown export read back as its JSON: a spanning cell's text repeated in each position it covers is one cell with its spans", () => {
  // text_document_02.odt.md at e1cb2b2, the table as docling's export writes it; its JSON (efbc2c0) holds these spans.
  const lines = [
    '| Merged row | Merged row | Cell 1.3 | Cell 1.4 | Cell 1.5 | Cell 1.6 | Cell 1.7 |',
    '| - | - | - | - | - | - | - |',
    '|  |  | Merged cell 2x2 | Merged cell 2x2 |  | Merged column |  |',
    '|  |  | Merged cell 2x2 | Merged cell 2x2 |  | Merged column |  |',
    '|  |  |  |  |  | Merged column |  |',
    '|  |  |  |  |  | Merged column |  |',
  ];
  const html = pipeTableHtml(lines);
  assert.match(html, /<th colspan="2">Merged row<\/th><th>Cell 1.3<\/th>/);
  assert.match(html, /<tr><td><\/td><td><\/td><td colspan="2" rowspan="2">Merged cell 2x2<\/td><td><\/td><td rowspan="4">Merged column<\/td><td><\/td><\/tr>/);
  assert.equal(html.split('<tr>').length - 1, 5);
});

test("a picture's own data in docling's Markdown (its classification and chart table after <!-- image -->) is left out, as the JSON keeps it in the picture", () => {
  const md = 'Before\n\n<!-- image -->\n\nBar chart\n\n| | A |\n|--|--|\n| Row 1 | 9.1 |\n\n<!-- image -->\n\nAfter the picture, a paragraph.';
  assert.equal(doclingMarkdownTruth(md), 'Before\n\nAfter the picture, a paragraph.');
});

test("a rich cell's lists and nested tables (the table's children) are written inside their cells, not again after the table; its footnotes follow it", () => {
  const text = (i: number, label: string, t: string, parent: string) => ({ self_ref: `#/texts/${i}`, label, text: t, prov: [{ page_no: 1 }], parent: { $ref: parent } });
  const nested = { self_ref: '#/tables/1', label: 'table', prov: [{ page_no: 1 }], data: { num_rows: 1, num_cols: 1, table_cells: [cell('inner', 0, 0)] } };
  const outer = { self_ref: '#/tables/0', label: 'table', prov: [{ page_no: 1 }], children: [{ $ref: '#/texts/0' }, { $ref: '#/tables/1' }, { $ref: '#/texts/1' }], footnotes: [{ $ref: '#/texts/1' }], data: { num_rows: 1, num_cols: 1, table_cells: [cell('A First inner', 0, 0)] } };
  const doc = { body: { self_ref: '#/body', label: 'unspecified', children: [{ $ref: '#/tables/0' }] }, furniture: { self_ref: '#/furniture', label: 'unspecified' }, texts: [text(0, 'list_item', 'A First', '#/tables/0'), text(1, 'footnote', '※ note', '#/tables/0')], tables: [outer, nested], pictures: [], groups: [] };
  assert.deepEqual(doclingPages(doc).get(1), ['<table>\n<tr><td>A First inner</td></tr>\n</table>', '※ note']);
});
