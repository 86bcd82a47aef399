// Issue 41's table rules ("find what separates the 0.85 from the 0.65 … and fix the causes in the table
// stages"), each on a real page of the public corpus (bench/docparse/public/, whose manifests say where
// each file comes from) read through the whole pipeline, plus hand-built runs for the rules underneath.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import type { TextRun } from '../../src/documents/layout/geometry.ts';
import { evenlyAdvancing, isCodeListing } from '../../src/documents/layout/monospace.ts';
import { segmentsOf } from '../../src/documents/layout/tables/grid.ts';
import { runDocparse } from '../../src/documents/parse.ts';
import { tableGrid } from '../helpers/table-grid.ts';

const corpus = (set: string, file: string) => readFileSync(path.join(import.meta.dirname, '..', '..', 'bench', 'docparse', 'public', set, file));

async function parse(set: string, file: string, pages?: [number, number]) {
  const { document, markdown } = await runDocparse(corpus(set, file), { name: file, ...(pages ? { pageRange: pages } : {}) });
  return { document, markdown };
}

const run = (text: string, x: number, y: number, width: number, size = 11): TextRun => ({ text, x, y, width, size, bold: false, hasEOL: false });

describe('cells of ruled tables (issue 41, item "Tables": spanning cells, cells that wrap)', () => {
  test('"cells that wrap": a cell holding a bulleted list stays one cell — the bullet set apart by the list\'s indent is the item\'s marker, not a column (a Writer table of list cells)', async () => {
    const { document, markdown } = await parse('docling', 'text_document_03_odt.pdf', [1, 2]);
    const tables = document.pages[0]?.blocks.filter((b) => b.label === 'table') ?? [];
    assert.equal(tables.length, 3, markdown);
    assert.deepEqual(tableGrid(tables[0]?.table).slice(0, 2), [
      ['Column A', 'Column B'],
      ['This is a list: A First A Second A Third', 'This is a formatted list: B First B Second B Third'],
    ]);
    assert.equal(tables[0]?.table?.numCols, 2);
  });

  test('"spanning cells": a table nested in a cell of another is that cell\'s text — its rules are no rows or columns of the outer table', async () => {
    const { document, markdown } = await parse('docling', 'text_document_03_odt.pdf', [1, 1]);
    const tables = document.pages[0]?.blocks.filter((b) => b.label === 'table') ?? [];
    assert.deepEqual(tableGrid(tables[1]?.table), [
      ['Column A', 'Column B'],
      ['Simple cell upper left', 'Simple cell with bold and italic text'],
      ['A B C Cell 1 Cell 2 Cell 3', 'Rich cell A nested table A B C Cell 1 Cell 2 Cell 3'],
    ], markdown);
  });

  test('"header rows … spanning cells": a frame of one column with a rule between its rows of a few lines is a one-column table, each framed table on its own under its heading', async () => {
    const { document, markdown } = await parse('docling', 'text_document_03_odt.pdf', [1, 2]);
    const page = document.pages[1];
    const tables = page?.blocks.filter((b) => b.label === 'table') ?? [];
    assert.equal(tables.length, 4, markdown);
    assert.deepEqual(tableGrid(tables[0]?.table), [['Cell 1 item 1 Cell 1 item 2'], ['Cell 2 item 1 Cell 2 item 2']]);
    assert.deepEqual(tableGrid(tables[3]?.table), [['List item 1 List item 2'], ['Regular text in second cell']]);
    const headings = page?.blocks.filter((b) => b.label === 'section_header').map((b) => b.text);
    assert.deepEqual(headings, ['Lists with same numId in different cells', 'Lists with different numIds in different cells', 'Multiple columns with lists', 'Mixed content - list and regular text in different cells'], 'the headings between the tables stay headings: the cells are the body text');
  });

  test('"spanning cells": a column rule drawn down every other row but left out beside a cell\'s text over an empty neighbour is a cell spanning on ("Merged row")', async () => {
    const { document, markdown } = await parse('docling', 'text_document_02_odt.pdf');
    const [table] = document.pages[0]?.blocks.filter((b) => b.label === 'table') ?? [];
    const merged = table?.table?.cells.find((c) => c.text === 'Merged row');
    assert.deepEqual([merged?.col, merged?.colSpan, merged?.rowSpan], [0, 2, 1], markdown);
    assert.deepEqual(tableGrid(table?.table)[0], ['Merged row', 'Merged row', 'Cell 1.3', 'Cell 1.4', 'Cell 1.5', 'Cell 1.6', 'Cell 1.7']);
  });

  test('hand-built: a bullet a list\'s indent from its text joins it; a matrix of ● and ○ marks keeps its columns', () => {
    const item = segmentsOf([run('•', 77.5, 660, 5.1), run('Cell 1 item 1', 95.5, 660, 58.2)], 0.9);
    assert.deepEqual(item.map((s) => s.text), ['• Cell 1 item 1']);
    const matrix = segmentsOf([run('Feature', 72, 600, 40), run('●', 150, 600, 6), run('○', 170, 600, 6)], 0.9);
    assert.deepEqual(matrix.map((s) => s.text), ['Feature', '●', '○']);
  });
});

describe('code listings are not tables (issue 41, item "Tables"; the manual class behind opendataloader)', () => {
  test('IBM Redbook p. 7, Example 2-1: an SQL query between two rules, in a font not marked monospaced, is a code block with its lines as printed — not a two-column table of keywords and clauses', async () => {
    const { document, markdown } = await parse('docling', 'redp5110_sampled.pdf');
    const page = document.pages[6];
    assert.equal(page?.pageNo, 7);
    assert.ok(!page?.blocks.some((b) => b.label === 'table' && /SELECT|ORDER BY/.test(b.text)), markdown);
    assert.equal(page?.blocks.filter((b) => b.label === 'table').length, 1, 'Table 2-1 above it is still a table');
    const code = page?.blocks.filter((b) => b.label === 'code') ?? [];
    assert.equal(code.length, 1, 'one listing');
    const lines = (code[0]?.text ?? '').split('\n').map((l) => l.replace(/\s+/g, ' ').trim());
    assert.deepEqual(lines, ['SELECT function_id,', 'user_name,', 'usage,', 'user_type', 'FROM function_usage', 'WHERE function_id=’QIBM_DB_SECADM’', 'ORDER BY user_name;']);
  });

  test('a table set in Courier, column after column of figures (ICDAR us-035a p. 3), is still a table', async () => {
    const { document, markdown } = await parse('icdar2013', 'us-035a.pdf', [3, 3]);
    const [table] = document.pages[0]?.blocks.filter((b) => b.label === 'table') ?? [];
    assert.deepEqual(tableGrid(table?.table).slice(0, 3), [
      ['Status', 'Sample size', 'Percent', 'Weighted Percent'],
      ['Total', '39695', '100.0', '100.0'],
      ['Not interviewed', '5701', '14.4', '18.2'],
    ], markdown);
  });

  test('hand-built: short words advancing evenly per character are monospaced; a proportional font\'s, or one label numbered over and over, are not', () => {
    const mono = ['SELECT', 'function_id,', 'user_name,', 'usage,', 'FROM', 'ORDER BY'].map((t, i) => run(t, 100, 700 - 12 * i, t.length * 0.5 * 10, 10));
    assert.ok(evenlyAdvancing(mono));
    assert.ok(isCodeListing(mono), 'program signs (_ , ;) on two lines or more');
    // Helvetica's advances: capitals wider than small letters.
    const widths: Record<string, number> = { SELECT: 0.648, 'user_name,': 0.5, usage: 0.533, FROM: 0.681, WHERE: 0.767, 'Item A': 0.52 };
    const proportional = Object.entries(widths).map(([t, w], i) => run(t, 100, 700 - 12 * i, t.length * w * 10, 10));
    assert.ok(!evenlyAdvancing(proportional));
    const labels = ['Cell 1 item 1', 'Cell 1 item 2', 'Cell 2 item 1', 'Cell 2 item 2'].map((t, i) => run(t, 100, 700 - 12 * i, 58.2));
    assert.ok(!evenlyAdvancing(labels));
  });
});
