// Issue 41/42 together: a line set up the margin of an upright page (the Federal Register's printer's slug
// "jbell on DSKJLSW7X2PROD with PROPOSALS", bench/docparse/public/pages/fedreg-2020-17221.pdf) has its
// box along its direction (issue 42: the overlay keeps it as drawn), so it is as tall as the page's text.
// Reading order (layout/columns.ts) reads it after the page's text instead of letting it stand in every
// horizontal cut: the masthead, then the three columns, each top to bottom.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, test } from 'node:test';
import { runDocparse } from '../../src/documents/parse.ts';
import { killSpareReader } from '../../src/documents/pdf/reader-client.ts';

after(() => killSpareReader());

test('"reading order … columns": a printer\'s slug set up the margin is read after the page\'s text, and the columns around it keep their order', async () => {
  const pdf = readFileSync(new URL('../../bench/docparse/public/pages/fedreg-2020-17221.pdf', import.meta.url));
  const { markdown } = await runDocparse(pdf, { name: 'fedreg', ocrMode: 'off', pageRange: [1, 1] });
  const at = (text: string) => {
    const index = markdown.indexOf(text);
    assert.ok(index >= 0, `${text} is missing:\n${markdown}`);
    return index;
  };
  // The left column runs from the notice box down to the AD's summary; the middle column's comment methods follow it.
  assert.ok(at('# Proposed Rules') < at('This section of the FEDERAL REGISTER'));
  assert.ok(at('This section of the FEDERAL REGISTER') < at('DEPARTMENT OF TRANSPORTATION'));
  assert.ok(at('DEPARTMENT OF TRANSPORTATION') < at('Federal eRulemaking Portal'));
  const slug = markdown.indexOf('DSKJLSW7X2PROD');
  if (slug >= 0) assert.ok(slug > at('Federal eRulemaking Portal'), 'the slug comes after the page\'s text');
});
