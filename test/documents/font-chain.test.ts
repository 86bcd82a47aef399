// Issue 34, "every glyph printed": the translation is set in a chain of fonts chosen per character
// (overlay/font-chain.ts); what no font of the chain draws is counted as a missing glyph.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import { countMissingGlyphs, fontChain, missingGlyphs, printable, segments } from '../../src/documents/translate/overlay/font-chain.ts';

const DEJAVU = '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf';
const dejavu = existsSync(DEJAVU) ? undefined : 'Debian\'s fonts-dejavu-core is not installed (apt install fonts-dejavu-core)';

test('"chosen per character": Noto Sans SC first, the fraction slash of "1⁄4" and ∗ from DejaVu Sans', { skip: process.env.CI === 'true' ? false : dejavu }, () => {
  const chain = fontChain();
  assert.equal(chain[0]!.name, 'Noto Sans SC');
  const dejavuIndex = chain.findIndex((f) => f.name === 'DejaVu Sans');
  assert.ok(dejavuIndex > 0, 'DejaVu Sans is in the chain');
  assert.deepEqual(segments('1⁄4 英寸 ∗ note'), [
    { text: '1', font: 0 },
    { text: '⁄', font: dejavuIndex },
    { text: '4 英寸 ', font: 0 },
    { text: '∗ ', font: dejavuIndex },
    { text: 'note', font: 0 },
  ]);
  assert.deepEqual(missingGlyphs('1⁄4 † ∗ 英寸'), []);
});

test('"the layout check counts missing glyphs": a chain without the fallback fonts counts ⁄ and ∗ (a clone without the Debian fonts degrades clearly)', () => {
  const bundledOnly = fontChain().slice(0, 1);
  assert.deepEqual(missingGlyphs('1⁄4 and 2⁄3, a∗b', bundledOnly), ['⁄', '∗']);
  assert.equal(countMissingGlyphs('1⁄4 and 2⁄3, a∗b', bundledOnly), 3);
  // A character of a script no font here draws (Ol Chiki) is counted whatever is installed.
  assert.equal(countMissingGlyphs('ᱚᱛ'), 2);
});

test('"no missing glyphs": Symbol-font code points (U+F020–U+F0FF) print as their characters, control characters print nothing', () => {
  assert.equal(printable('Start \uf0ae Finish'), 'Start → Finish');
  assert.equal(printable('\uf061 \uf0b3 \uf062'), 'α ≥ β');
  assert.equal(printable('Ma\u0084rch'), 'March');
  assert.equal(countMissingGlyphs('a\u0084b \uf0ae c'), 0);
});
