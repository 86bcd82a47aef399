// Issue 41's rules ("Tables and structure that hold on documents nobody here tuned for"), each on a
// real page of the public corpus (bench/docparse/public/, whose manifests say where each file comes
// from), read through the whole pipeline as a parsing task reads it.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { runDocparse } from '../../src/documents/parse.ts';
import { tableGrid } from '../helpers/table-grid.ts';

const corpus = (set: string, file: string) => readFileSync(path.join(import.meta.dirname, '..', '..', 'bench', 'docparse', 'public', set, file));

async function parse(set: string, file: string) {
  const { document, markdown } = await runDocparse(corpus(set, file), { name: file });
  const blocks = document.pages.flatMap((p) => p.blocks);
  return { document, blocks, tables: blocks.filter((b) => b.label === 'table'), markdown };
}

describe('tables on documents nobody here tuned for (issue 41, item "Tables")', () => {
  test('"tables without rules whose columns are aligned by whitespace only": a spreadsheet\'s left-set headers over right-set numbers, and a year column counting up, are one two-column table', async () => {
    const { tables, blocks, markdown } = await parse('docling', 'odf_table_with_title_01_ods.pdf');
    assert.equal(tables.length, 1, markdown);
    assert.deepEqual(tableGrid(tables[0]?.table), [
      ['Year', 'Freshwater Ducks'],
      ['2019', '120'],
      ['2020', '135'],
      ['2021', '150'],
      ['2022', '170'],
      ['2023', '160'],
      ['2024', '180'],
    ]);
    assert.ok(!blocks.some((b) => b.label === 'section_header' && /^(?:Year|Freshwater Ducks)$/.test(b.text)), 'the column headers are not headings');
  });
});
