// Issue 32 item 4: headings on documents nobody here wrote (the public corpus, bench/docparse/public/
// pages/README.md says where each comes from), read through the whole pipeline.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import type { Block } from '../../src/documents/document.ts';
import { runDocparse } from '../../src/documents/parse.ts';

async function blocksOf(name: string, pageNo: number): Promise<Block[]> {
  const data = readFileSync(new URL(`../../bench/docparse/public/pages/${name}`, import.meta.url));
  const { document } = await runDocparse(data, { name });
  return document.pages[pageNo - 1]?.blocks ?? [];
}

const headings = (blocks: Block[]) => blocks.filter((b) => b.label === 'section_header' || b.label === 'title').map((b) => b.text);

describe('headings on the public corpus (issue 32 item 4)', () => {
  test('freeculture p. 5: "a single monospaced line set well above the body size, holding words, is a heading, not code"', async () => {
    const blocks = await blocksOf('freeculture.pdf', 5);
    assert.deepEqual(headings(blocks), ['CHAPTER TWO: “Mere Copyists”']);
    assert.equal(blocks.filter((b) => b.label === 'code').length, 0);
  });

  test('mom-sample-docs p. 3: "a bold heading at the body size wrapped onto a second line of a narrow column is a heading"', async () => {
    const blocks = await blocksOf('mom-sample-docs.pdf', 3);
    assert.deepEqual(headings(blocks), ['John Cage — Leaving It All to Chance', 'Beyond Cage — Catching the Midnight Train']);
  });

  test('nics-background-checks: "a document that is mostly tables has its body in the cells" — its title over the table is a heading, not a row of it', async () => {
    const blocks = await blocksOf('nics-background-checks.pdf', 1);
    assert.ok(headings(blocks).some((text) => text.startsWith('NICS Firearm Background Checks')), JSON.stringify(headings(blocks)));
    const table = blocks.find((b) => b.table)?.table;
    assert.ok(!table?.cells.some((cell) => cell.text.includes('NICS Firearm')), 'the title is no cell');
  });
});
