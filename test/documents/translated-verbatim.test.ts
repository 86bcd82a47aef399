// Issue 42, part 2: "numbers-only runs, URLs, and formula runs (math fonts such as CMMI/CMSY/CMEX/
// MSBM/Symbol/STIX-Math, or runs mostly of math symbols) are kept in the source's glyphs … and never
// sent to the engine (placeholders in the text sent, restored after, as PDFMathTranslate's {v0})".
// TraceMonkey's p. 4 (a LaTeX paper: "φ-nodes" and "a − a" set in CMMI/CMSY inside sentences, line
// numbers and version figures) through Debian's Apertium, every segment sent recorded.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { extractDocument } from '../../src/documents/pdf/extract.ts';
import { createApertium } from '../../src/documents/translate/apertium.ts';
import { translateDocument } from '../../src/documents/translate/translate-document.ts';
import type { Translator } from '../../src/documents/translate/translator.ts';
import { protectVerbatim, restoreVerbatim } from '../../src/documents/translate/verbatim.ts';
import { skipUnlessAvailable } from '../helpers/services.ts';

const corpus = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../bench/translate-pdf/corpus');

function unavailable(): string | undefined {
  const apertium = spawnSync('apertium', ['-l'], { encoding: 'utf8' });
  return apertium.error || !/^\s*eng-spa\s*$/m.test(apertium.stdout) ? 'apertium with the eng-spa mode is not installed' : undefined;
}

describe('formulas, numbers and URLs are never sent to the engine (issue 42)', () => {
  test('"placeholders in the text sent, restored after": URLs, e-mail addresses, numbers and math-symbol runs become tokens and come back as the source\'s characters', () => {
    const source = 'See https://example.org/a.pdf or a@b.org: in 2019, 10% of x + y = 1 held where α ≤ 2β, but the 3-point rule did not.';
    const { text, kept } = protectVerbatim(source);
    assert.deepEqual(kept, ['https://example.org/a.pdf', 'a@b.org', 'x + y = 1', 'α ≤ 2β', '2019', '10%']);
    assert.doesNotMatch(text, /example|@|2019|10%|α|≤|=/, 'none of them is in the text sent');
    assert.match(text, /3-point rule/, 'a number that is part of a word stays in it');
    assert.equal(restoreVerbatim(text, kept), source);
    assert.equal(restoreVerbatim(text.replace('ZQV3QZ', ''), kept), undefined, 'a token the engine lost is noticed (the segment then goes again unprotected)');
  });

  test('"code … never sent to the engine": identifiers joined by underscores (Redbook p. 20\'s CLIENT_HOST, VERIFY_GROUP_FOR_USER) are tokens; a word with a hyphen or an apostrophe is not', () => {
    const source = 'The CLIENT_HOST variable and VERIFY_GROUP_FOR_USER (user_name) hold the host\'s well-known name.';
    const { text, kept } = protectVerbatim(source);
    assert.deepEqual(kept, ['CLIENT_HOST', 'VERIFY_GROUP_FOR_USER', 'user_name']);
    assert.match(text, /^The ZQV0QZ variable and ZQV1QZ \(ZQV2QZ\) hold the host's well-known name\.$/);
    assert.equal(restoreVerbatim(text, kept), source);
  });

  test('"markup keeps its tags": numbers inside a styled segment are tokens, the tag\'s class number is not', () => {
    const { text, kept } = protectVerbatim('costs <span class="s1">12 dollars</span> today');
    assert.equal(text, 'costs <span class="s1">ZQV0QZ dollars</span> today');
    assert.deepEqual(kept, ['12']);
  });

  test('"formula runs (math fonts such as CMMI/CMSY…) are kept … and never sent to the engine": TraceMonkey p. 4 through Apertium', { skip: skipUnlessAvailable('Apertium translation of a real page', unavailable()) }, async () => {
    const parsed = await extractDocument(new Uint8Array(readFileSync(path.join(corpus, 'tracemonkey.pdf'))));
    const page = parsed.pages.find((p) => p.pageNo === 4)!;
    const phi = page.blocks.find((b) => b.formulas?.includes('φ'));
    const identity = page.blocks.find((b) => b.formulas?.includes('a − a'));
    assert.ok(phi && identity, 'the reader gives the stretches set in a math font ("φ", "a − a") as the blocks\' formulas');
    const apertium = createApertium();
    const sent: string[] = [];
    const recording: Translator = { ...apertium, translate: (segments, pair, signal, hints) => { sent.push(...segments); return apertium.translate(segments, pair, signal, hints); } };
    const translated = await translateDocument({ pages: [page] }, recording, { source: 'en', target: 'es' });
    assert.ok(sent.length > 0);
    for (const segment of sent) assert.doesNotMatch(segment, /φ|a − a|\b(?:19|20)\d\d\b/u, `a formula or number was sent: ${segment.slice(0, 120)}`);
    const out = translated.pages[0]!.blocks;
    const index = (b: typeof phi) => page.blocks.indexOf(b!);
    assert.match(out[index(phi)]!.text, /φ/u, 'the formula is back in the translation');
    assert.match(out[index(identity)]!.text, /a − a/u);
    assert.notEqual(out[index(phi)]!.text, phi!.text, 'the sentence around it was translated');
    assert.doesNotMatch(out.map((b) => b.text).join(' '), /ZQV\d+QZ/, 'no token is left in the translation');
  });
});
