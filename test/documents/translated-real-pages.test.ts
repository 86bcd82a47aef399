// Issue 26: translated.pdf of real pages nobody here typeset, checked as a reader sees them
// (overlay/check.ts on pdftotext's words). The aviation maintenance handbook page (docling's
// amt_handbook_sample.pdf: two columns, photographs with callout labels) through the task's own
// steps — parse, split blocks joined across columns, translate, overlay — en→es by Debian's
// Apertium and en→zh by an OpenAI-compatible server on loopback answering from a dictionary of the
// page's sentences; and a Chinese manual page (Debian Reference) zh→en the same way.
// Before issue 26 the handbook page came out with 35 places of text over text and 11 words in the
// gutter (bench/results/translate-pdf-corpus-before.json).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { ParsedDocument } from '../../src/documents/document.ts';
import { extractDocument } from '../../src/documents/pdf/extract.ts';
import { createApertium } from '../../src/documents/translate/apertium.ts';
import { createOpenAi } from '../../src/documents/translate/openai.ts';
import { checkTranslatedPdf, popplerPages } from '../../src/documents/translate/overlay/check-pdf.ts';
import { drawnPages } from '../../src/documents/translate/overlay/check-drawn.ts';
import { tokens, type PageCheck } from '../../src/documents/translate/overlay/check.ts';
import { splitColumnSpanningBlocks } from '../../src/documents/translate/overlay/columns.ts';
import { renderOverlayPdf } from '../../src/documents/translate/overlay/draw.ts';
import { translateDocument } from '../../src/documents/translate/translate-document.ts';
import type { LanguagePair, Translator } from '../../src/documents/translate/translator.ts';
import { startDictionaryChatServer, type DictionaryServer } from '../helpers/dictionary-chat-server.ts';
import { ghostscriptUnavailableReason, popplerUnavailableReason } from '../helpers/poppler.ts';
import { skipUnlessAvailable } from '../helpers/services.ts';

const corpus = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../bench/translate-pdf/corpus');
const read = (name: string) => new Uint8Array(readFileSync(path.join(corpus, name)));
const dictionary = (name: string) => JSON.parse(readFileSync(path.join(corpus, name), 'utf8')) as Record<string, string>;

function unavailable(): string | undefined {
  const apertium = spawnSync('apertium', ['-l'], { encoding: 'utf8' });
  if (apertium.error || !/^\s*eng-spa\s*$/m.test(apertium.stdout)) return 'apertium with the eng-spa mode is not installed';
  return ghostscriptUnavailableReason() ?? popplerUnavailableReason();
}

type Run = { source: Uint8Array; parsed: ParsedDocument; translated: ParsedDocument; output: Uint8Array; checks: PageCheck[] };

/** As a translation task does it (run-task.ts), then the check with pdf.js's sizes and drawings. */
async function translatePage(file: string, translator: Translator, pair: LanguagePair): Promise<Run> {
  const source = read(file);
  const parsed = await splitColumnSpanningBlocks(source, await extractDocument(source));
  const translated = await translateDocument(parsed, translator, pair);
  const output = await renderOverlayPdf(source, parsed, translated);
  const drawn = { source: await drawnPages(source), translated: await drawnPages(output) };
  return { source, parsed, translated, output, checks: await checkTranslatedPdf(source, output, { document: parsed, translated, drawn }) };
}

/** The reader's targets of issue 26, every page: nothing over text, in a gutter, on a drawing or below the margin; every block shown. */
function assertReadable(checks: PageCheck[]): void {
  for (const c of checks) {
    const where = `page ${c.pageNo}: ${c.examples.join('; ')}`;
    assert.equal(c.overlappingWords, 0, `words printed over words — ${where}`);
    assert.equal(c.gutterCrossings, 0, `words in a column gutter — ${where}`);
    assert.equal(c.intoDrawings, 0, `words on a picture or rule — ${where}`);
    assert.equal(c.belowMargin, 0, `words below the margin — ${where}`);
    assert.deepEqual(c.blocks?.missing, [], 'every source block has its translation (or its label kept) on the page');
  }
}

describe('real pages translated and checked as a reader sees them', { skip: skipUnlessAvailable('layout-keeping translation of real pages', unavailable()) }, () => {
  let chat: DictionaryServer;
  let openai: Translator;
  before(async () => {
    chat = await startDictionaryChatServer({ ...dictionary('en-zh.json'), ...dictionary('zh-en.json') });
    openai = createOpenAi({ url: chat.url, model: 'dictionary' });
  });
  after(() => chat.close());

  test('the two-column handbook page en→es: no text over text, none across the gutter or on the photographs', async () => {
    const run = await translatePage('amt-handbook.pdf', createApertium(), { source: 'en', target: 'es' });
    assertReadable(run.checks);
    // The paragraphs the parser joined across the two columns were set per column.
    assert.ok(run.parsed.pages[0]!.blocks.every((b) => b.bbox.r - b.bbox.l < 300 || b.label === 'picture'), 'no block spans both columns');
  });

  test('the handbook page en→zh through the OpenAI-compatible engine: readable, and broken by Chinese rules', async () => {
    const run = await translatePage('amt-handbook.pdf', openai, { source: 'en', target: 'zh' });
    assertReadable(run.checks);
    const lines = (await popplerPages(run.output))[0]!.lineWords.map((l) => l.words);
    for (const line of lines) assert.doesNotMatch(line.join(''), /^[，。、；：！？）」』》]/u, `"${line.join('')}" starts with closing punctuation`);
    // No Latin word is broken across lines: each one in the translation is a whole word on the page.
    const onPage = new Set(tokens(lines.flat().join(' ')));
    const latin = run.translated.pages[0]!.blocks.flatMap((b) => b.text.match(/[A-Za-z]{3,}/g) ?? []);
    assert.ok(latin.length > 0);
    for (const word of latin) assert.ok(onPage.has(word.toLowerCase()), `"${word}" is not whole on the page`);
  });

  test('issue 34, "every glyph printed": the handbook\'s "1⁄4" en→zh is drawn (its fraction slash from DejaVu Sans, chosen per character), 0 missing glyphs', async () => {
    const run = await translatePage('amt-handbook.pdf', openai, { source: 'en', target: 'zh' });
    assert.ok(run.translated.pages[0]!.blocks.some((b) => b.text.includes('1⁄4')), 'the translation has "1⁄4"');
    assert.deepEqual(run.checks.map((c) => c.missingGlyphs), [0]);
    const words = (await popplerPages(run.output))[0]!.words.map((w) => w.text).join(' ');
    assert.match(words, /1⁄4/u, '"1⁄4" is on the page as text');
    const fonts = spawnSync('pdffonts', ['-'], { input: Buffer.from(run.output), encoding: 'utf8' });
    assert.match(fonts.stdout, /DejaVuSans/, `the slash's font is embedded: ${fonts.stdout}`);
  });

  test('a Chinese manual page zh→en: readable, every block translated', async () => {
    const run = await translatePage('debian-reference-zh.pdf', openai, { source: 'zh', target: 'en' });
    assertReadable(run.checks);
    assert.equal(chat.missing.length, 0);
  });
});
