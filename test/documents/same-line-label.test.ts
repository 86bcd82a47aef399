// Issue 41: "issue-67-zh p. 3: a heading joined with a far-right label on the same baseline" — the
// sub-heading "1、资产负债表项目变动的情况及原因" and the unit note "单位：人民币元" printed 243 pt to its
// right on the same line are two blocks (layout/continuation.ts: text on a block's own last line is
// never the top of the next column), on the real page (bench/docparse/public/pages/issue-67-zh.pdf).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, test } from 'node:test';
import { runDocparse } from '../../src/documents/parse.ts';
import { killSpareReader } from '../../src/documents/pdf/reader-client.ts';

after(() => killSpareReader());

test('a label on the same baseline far to the right of a heading is not joined to it as a paragraph continued in the next column', async () => {
  const pdf = readFileSync(new URL('../../bench/docparse/public/pages/issue-67-zh.pdf', import.meta.url));
  const { markdown } = await runDocparse(pdf, { name: 'issue-67-zh', ocrMode: 'off', pageRange: [3, 3] });
  const paragraphs = markdown.split(/\n\n+/);
  assert.ok(paragraphs.some((p) => p.endsWith('1、资产负债表项目变动的情况及原因')), markdown);
  assert.ok(paragraphs.includes('单位：人民币元'), markdown);
  assert.ok(!markdown.includes('原因单位'), markdown);
});
