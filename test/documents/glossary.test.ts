// Issue 18 item 4: "the same source term is translated the same way across a document (batching with
// context for the OpenAI-compatible engine; a per-task glossary … applied before and checked after
// translation)". Real Apertium eng-spa and the loopback OpenAI-compatible server.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import type { Block, ParsedDocument } from '../../src/documents/document.ts';
import { createApertium } from '../../src/documents/translate/apertium.ts';
import { compileGlossary, GlossaryError, parseGlossary, protect, restore } from '../../src/documents/translate/glossary.ts';
import { createOpenAi } from '../../src/documents/translate/openai.ts';
import { translateDocument } from '../../src/documents/translate/translate-document.ts';
import type { Translator } from '../../src/documents/translate/translator.ts';
import { skipUnlessAvailable } from '../helpers/services.ts';
import { startOpenAiServer, type FakeServer } from '../helpers/translation-servers.ts';

const EN_ES = { source: 'en', target: 'es' };
const block = (text: string): Block => ({ label: 'text', text, bbox: { l: 72, t: 700, r: 500, b: 680 }, fontSize: 11, bold: false });
const doc = (...pages: string[][]): ParsedDocument => ({ pages: pages.map((texts, i) => ({ pageNo: i + 1, width: 595, height: 842, blocks: texts.map(block) })) });

test('a glossary is a JSON object of non-empty "term": "translation" strings, at most 200 terms; anything else is refused with a reason', () => {
  assert.deepEqual(parseGlossary('{" house ": "vivienda"}'), { house: 'vivienda' });
  for (const bad of ['', 'null', '[]', '{"a": 1}', '{"a": ""}', `{"${'x'.repeat(101)}": "y"}`, '{"a\\u0000": "b"}']) {
    assert.throws(() => parseGlossary(bad), GlossaryError, bad);
  }
});

test('terms are protected as whole words, longest first, in any case; a lost placeholder is reported', () => {
  const matcher = compileGlossary({ note: 'nota', 'credit note': 'nota de crédito' });
  const { text, used } = protect('A Credit Note is a note, not a footnote.', matcher);
  assert.equal(text, 'A ZQX0QZ is a ZQX1QZ, not a footnote.');
  assert.equal(restore('Una ZQX0QZ es una ZQX1QZ.', used, matcher), 'Una nota de crédito es una nota.');
  assert.equal(restore('Una ZQX0QZ es una nota.', used, matcher), undefined);
});

const apertiumMissing = spawnSync('apertium', ['-l'], { encoding: 'utf8' }).stdout?.includes('eng-spa') ? undefined : 'apertium eng-spa is not installed';

describe('glossary with the real Apertium eng-spa', { skip: skipUnlessAvailable('apertium', apertiumMissing) }, () => {
  test('"applied before and checked after translation": the glossary translation replaces the engine\'s own, on every page', async () => {
    const source = doc(['The house is big.'], ['My house is small.']);
    const plain = await translateDocument(source, createApertium(), EN_ES);
    assert.match(plain.pages[0]!.blocks[0]!.text, /casa/);
    const result = await translateDocument(source, createApertium(), EN_ES, { glossary: { house: 'vivienda' } });
    for (const page of result.pages) {
      assert.match(page.blocks[0]!.text, /vivienda/);
      assert.doesNotMatch(page.blocks[0]!.text, /casa/);
    }
    assert.equal(result.notes, undefined, 'no glossary misses to report');
  });
});

/** An engine that loses every placeholder (as a careless service might): the check after translation catches it. */
const forgetful: Translator = {
  engine: 'libretranslate',
  languagePairs: async () => undefined,
  translate: async (segments) => segments.map((s) => s.replace(/ZQX\d+QZ/g, 'thing')),
};

test('a segment whose glossary term the engine lost is translated again without protection, and the miss is noted', async () => {
  const result = await translateDocument(doc(['The house is big.']), forgetful, EN_ES, { glossary: { house: 'vivienda' } });
  assert.equal(result.pages[0]!.blocks[0]!.text, 'The house is big.', 'the text is not lost');
  assert.match(result.notes?.[0] ?? '', /1 passage does not use the glossary/);
});

describe('OpenAI-compatible engine: batching with context', () => {
  let server: FakeServer;
  before(async () => { server = await startOpenAiServer(); });
  after(() => server.close());

  test('each batch carries the segments translated before it, so terms stay consistent across the document', async () => {
    const engine = createOpenAi({ url: server.url, model: 'test-model' });
    await translateDocument(doc(['The invoice is due.'], ['Pay the invoice now.']), engine, EN_ES, { glossary: { invoice: 'factura' } });
    const prompts = server.requestsTo('/v1/chat/completions').map((r) => String((r.body as { messages: Array<{ content: string }> }).messages[0]!.content));
    assert.equal(prompts.length, 2);
    assert.doesNotMatch(prompts[0]!, /Earlier parts/);
    assert.match(prompts[1]!, /Earlier parts of the same document/);
    assert.match(prompts[1]!, /"source":"The invoice is due\."/);
    assert.match(prompts[1]!, /ZQX0QZ stand for glossary terms/);
  });
});

test('characters the bundled font cannot draw (Hangul) are named in a note; Spanish and Chinese need none', async () => {
  const { missingGlyphsNote } = await import('../../src/documents/translate/overlay/coverage.ts');
  assert.equal(missingGlyphsNote(doc(['La casa es grande. 房子很大。'])), undefined);
  assert.match(missingGlyphsNote(doc(['집이 크다'])) ?? '', /cannot show 4 different characters of the translation, such as "집" \(U\+C9D1\)/);
});
