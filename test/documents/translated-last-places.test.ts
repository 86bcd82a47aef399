// Issue 42, the last places of the translate corpus: pr-138's footnote marks and its page of tables
// beside a paragraph, table-as-picture's check boxes (a symbol font without a ToUnicode map), the
// Redbook's "Redpaper" wordmark (one word in two colours) and Debian Reference's "第 3.1.4 节". Real
// pages nobody here typeset (bench/translate-pdf/corpus/, sources in its manifest.json), each cut
// out as a one-page PDF and taken through the task's own steps (parse, split, translate, overlay)
// and the reader's check.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { ParsedDocument } from '../../src/documents/document.ts';
import { extractDocument } from '../../src/documents/pdf/extract.ts';
import { fontStyle } from '../../src/documents/pdf/fonts.ts';
import { createApertium } from '../../src/documents/translate/apertium.ts';
import { createOpenAi } from '../../src/documents/translate/openai.ts';
import { checkTranslatedPdf, popplerPages } from '../../src/documents/translate/overlay/check-pdf.ts';
import { drawnPages } from '../../src/documents/translate/overlay/check-drawn.ts';
import { gutters, type PageCheck } from '../../src/documents/translate/overlay/check.ts';
import { splitColumnSpanningBlocks } from '../../src/documents/translate/overlay/columns.ts';
import { renderOverlayPdf } from '../../src/documents/translate/overlay/draw.ts';
import { fromMarkup, toMarkup } from '../../src/documents/translate/styles.ts';
import { translateDocument } from '../../src/documents/translate/translate-document.ts';
import type { Translator } from '../../src/documents/translate/translator.ts';
import { protectVerbatim } from '../../src/documents/translate/verbatim.ts';
import { startDictionaryChatServer, type DictionaryServer } from '../helpers/dictionary-chat-server.ts';
import { ghostscriptUnavailableReason, popplerUnavailableReason } from '../helpers/poppler.ts';
import { skipUnlessAvailable } from '../helpers/services.ts';
import { apertiumMissing, corpusDir, onePage } from '../helpers/translate-corpus.ts';

function toolsMissing(): string | undefined {
  return ghostscriptUnavailableReason() ?? popplerUnavailableReason();
}


type Run = { source: Uint8Array; parsed: ParsedDocument; translated: ParsedDocument; output: Uint8Array; check: PageCheck };

async function translatePage(file: string, n: number, engine: Translator = createApertium(), pair = { source: 'en', target: 'es' }): Promise<Run> {
  const source = await onePage(file, n);
  const parsed = await splitColumnSpanningBlocks(source, await extractDocument(source));
  const translated = await translateDocument(parsed, engine, pair);
  const output = await renderOverlayPdf(source, parsed, translated);
  const drawn = { source: await drawnPages(source), translated: await drawnPages(output) };
  const [check] = await checkTranslatedPdf(source, output, { document: parsed, translated, drawn });
  return { source, parsed, translated, output, check: check! };
}

const textOf = async (pdf: Uint8Array) => (await popplerPages(pdf))[0]!.lineWords.map((l) => l.words.join(' ')).join('\n');

describe('the last places of the translate corpus (issue 42)', { skip: skipUnlessAvailable('layout-keeping translation of real pages', apertiumMissing()) }, () => {
  test('"superscript footnote markers stay attached to their word": pr-138 p. 1 — the marks † and ^ that open their footnotes go into the translation before the word they open, and nothing is set over them', async () => {
    const { output, check } = await translatePage('pr-138.pdf', 1);
    const text = await textOf(output);
    assert.match(text, /†\s?Los productos/u, 'the dagger opens the first footnote\'s translation');
    assert.match(text, /\^\s?El producto/u, 'the caret opens the second footnote\'s translation');
    // The page number kept below the footnotes keeps its own glyphs only, not the line above's.
    assert.doesNotMatch(text, /\bProduct\b/u, 'no English words of the footnote kept as drawn');
    assert.equal(check.overlappingWords, 0, check.examples.join('; '));
  });

  test('"the remaining … gutter words to 0": pr-138 p. 2 — a gutter begins where its column\'s longest line ends, and a table across a strip ends it like a full-width heading', async () => {
    const source = await onePage('pr-138.pdf', 2);
    const lines = (await popplerPages(source))[0]!.lines;
    const parsed = await extractDocument(source);
    const page = parsed.pages[0]!;
    const tables = page.blocks.filter((b) => b.label === 'table').map((b) => ({ xMin: b.bbox.l - 2, xMax: b.bbox.r + 2, yMin: page.height - b.bbox.t - 2, yMax: page.height - b.bbox.b + 2 }));
    const strips = gutters(lines, tables);
    // The paragraph under the tables and the small table beside it: its lines reach x 415.3 on rows
    // where the table has no line, so the gutter starts there, not at 411.6 where the lines beside a
    // table row end.
    const beside = strips.find((g) => g.yMin > 400 && g.xMin > 400 && g.xMax < 430);
    assert.ok(beside, 'the gutter between the notes and the table beside them');
    assert.ok(beside.xMin >= 415, `the gutter starts after the column's longest line (${beside.xMin})`);
    // The gap beside the title ("Investment Home Loan Interest Rates" … "Effective as at") is one row: no gutter.
    assert.ok(!strips.some((g) => g.yMin < 30), 'no gutter runs up from the table into the title row');
    const { check } = await translatePage('pr-138.pdf', 2);
    assert.equal(check.gutterCrossings, 0, check.examples.join('; '));
    assert.equal(check.overlappingWords, 0, check.examples.join('; '));
  });

  test('"symbol glyphs … kept in the source\'s glyphs, colour and place and never sent to the engine": table-as-picture — the white check boxes (U+0084 of a symbol font without a ToUnicode map) are kept as drawn before each answer', async () => {
    assert.ok(!protectVerbatim('\u0084\u0084 They work in parallel').text.includes('\u0084'), 'the unnamed glyphs never reach the engine');
    const { source, output, check } = await translatePage('table-as-picture.pdf', 1);
    const boxes = (pdf: Uint8Array) => popplerPages(pdf).then((pages) => pages[0]!.words.filter((w) => w.text.includes('\u0084')).map((w) => `${Math.round(w.xMin)},${Math.round(w.yMin)}`));
    const before = await boxes(source);
    assert.ok(before.length >= 20, 'the source has its check boxes');
    assert.deepEqual(await boxes(output), before, 'every check box where the source drew it');
    assert.equal(check.colourChanged, 0, check.examples.join('; '));
    assert.equal(check.overlappingWords, 0, check.examples.join('; '));
    // The answer starts where the source's words start, right of its box.
    const words = (await popplerPages(output))[0]!.words;
    const answer = words.find((w) => w.text === 'Obran');
    assert.ok(answer && answer.xMin > 163, `the translation starts after the box (${answer?.xMin})`);
  });

  test('"URLs … kept in the source\'s glyphs, colour and place": the slide deck\'s footnote link (slide 3) stays on its underline, the line\'s translation set before it', async () => {
    const { source, output, check } = await translatePage('pdfua-presentation.pdf', 3);
    const url = 'https://www.pdfa.org/resource/pdfua-in-a-nutshell/';
    const at = async (pdf: Uint8Array) => (await popplerPages(pdf))[0]!.words.find((w) => w.text === url);
    const [before, after] = [await at(source), await at(output)];
    assert.ok(before && after, 'the URL on both pages');
    assert.ok(Math.abs(after.xMin - before.xMin) < 1 && Math.abs(after.yMin - before.yMin) < 1, `the URL where the source drew it (${after.xMin} vs ${before.xMin})`);
    const line = (await textOf(output)).split('\n').find((l) => l.includes(url));
    assert.match(line ?? '', /Más info: PDF\/UA en un Nutshell, https/u, 'the translation before it on its line');
    assert.equal(check.overlappingWords, 0, check.examples.join('; '));
  });

  test('"per-run colour kept for every run": the Redbook\'s "Redpaper" — a word whose colour changes inside it (red "Red", black "paper") comes back in its pieces', async () => {
    const parsed = await extractDocument(await onePage('redbook.pdf', 14));
    const block = parsed.pages[0]!.blocks.find((b) => b.text.startsWith('Redpaper'));
    assert.ok(block?.spans, 'the wordmark has its colours');
    const markup = toMarkup(block)!;
    // Apertium joins letters across a tag and moves the tag around the whole word ("<span>Red</span>paper"
    // came back red "Redpaper"): the word goes in one tag of its own, and comes back in its pieces.
    const tag = /<span class="s(\d+)">Redpaper<\/span>/u.exec(markup.html);
    assert.ok(tag, `the word whole inside one tag: ${markup.html}`);
    const back = fromMarkup(`<span class="s${tag[1]}">Redpaper</span> ™`, markup);
    assert.deepEqual(back.spans?.slice(0, 2).map((s) => [s.text.trim().split(' ')[0], s.color]), [['Red', '#ff0000'], ['paper', '#000000']]);
    const { check } = await translatePage('redbook.pdf', 14);
    assert.equal(check.colourChanged, 0, check.examples.join('; '));
  });

  test('"list bullets and other symbol glyphs … kept in the source\'s glyphs, colour and place and never sent to the engine": table-as-picture, question 28 — the bullets of a dingbat font (DingbatsTwo\'s "y") are read as pictures, not as the letters "yy", and stay as drawn', async () => {
    assert.equal(fontStyle('XXQNYR+AllumiStd-DingbatsTwo', 0, -1).dingbats, true);
    assert.equal(fontStyle('XXQNYR+AdobeCorpID-MyriadRg', 0, -1).dingbats, false);
    const parsed = await extractDocument(await onePage('table-as-picture.pdf', 1));
    const texts = parsed.pages[0]!.blocks.flatMap((b) => [b.text, ...(b.table?.cells.map((c) => c.text) ?? [])]);
    assert.ok(texts.some((t) => t.includes('Persons with disabilities')), 'the list is read');
    assert.ok(!texts.some((t) => /(?:^|\s)yy(?:\s|$)/u.test(t)), `no bullet read as "yy": ${texts.filter((t) => /yy/u.test(t)).join(' | ')}`);
    const { source, translated, output, check } = await translatePage('table-as-picture.pdf', 1);
    const sent = translated.pages[0]!.blocks.flatMap((b) => [b.text, ...(b.table?.cells.map((c) => c.text) ?? [])]);
    assert.ok(!sent.some((t) => /\byy\b/u.test(t)), 'no "yy" in the translation');
    // The reader reads the kept glyphs as it reads the source's: the same pictures where the source drew them.
    const bullets = (pdf: Uint8Array) => drawnPages(pdf).then((pages) => pages[0]!.runs.filter((r) => r.text === '\ue079' && r.xMax - r.xMin > 1).map((r) => `${Math.round(r.xMin)},${Math.round(r.yMin)}`));
    const before = await bullets(source);
    assert.equal(before.length, 7, 'the source has its seven bullets');
    assert.deepEqual(await bullets(output), before, 'every bullet where the source drew it');
    const words = (await popplerPages(output))[0]!.words;
    const first = words.find((w) => w.text === 'Personas');
    assert.ok(first && first.xMin > 785, `the item's translation starts after its bullet (${first?.xMin})`);
    assert.equal(check.colourChanged, 0, check.examples.join('; '));
    assert.equal(check.missingGlyphs, 0, check.examples.join('; '));
  });

  test('"Style exactly as the source": table-as-picture — question 28 (MyriadBd) comes out bold, MyriadBdIt / MyriadRgIt read as italic; the check counts a wholly bold block set regular', async () => {
    assert.deepEqual([fontStyle('XXQNYR+AdobeCorpID-MyriadBd', 0, -1), fontStyle('XXQNYR+AdobeCorpID-MyriadBdIt', 0, -1), fontStyle('XXQNYR+AdobeCorpID-MyriadRgIt', 0, -1), fontStyle('XXQNYR+AdobeCorpID-MyriadRg', 0, -1)].map((s) => [s.bold, s.italic]), [[true, false], [true, true], [false, true], [false, false]]);
    const { source, parsed, translated, check } = await translatePage('table-as-picture.pdf', 1);
    const blocks = parsed.pages[0]!.blocks;
    const question = blocks.find((b) => b.text.startsWith('Are specialized legal aid services'));
    assert.ok(question?.bold, 'question 28 is bold in the parse');
    assert.equal(check.styleFallbacks, 0, check.examples.join('; '));
    assert.ok(check.styledWords >= 40, `the wholly bold questions are counted (${check.styledWords} styled words)`);
    // The same translation set regular (the weight lost, as before the parse read "Bd"): the check counts it.
    const unbold = (doc: ParsedDocument): ParsedDocument => ({ ...doc, pages: doc.pages.map((p) => ({ ...p, blocks: p.blocks.map((b) => { const { spans: _spans, ...rest } = b; return { ...rest, bold: false }; }) })) });
    const [plain, regular] = [unbold(parsed), unbold(translated)];
    const output = await renderOverlayPdf(source, plain, regular);
    const [lost] = await checkTranslatedPdf(source, output, { document: plain, translated: regular, drawn: { source: await drawnPages(source), translated: await drawnPages(output) } });
    assert.ok(lost!.styleFallbacks >= 40, `the check counts the bold blocks set regular (${lost!.styleFallbacks} of ${lost!.styledWords})`);
  });
});

describe('"table cells: wrap inside the cell, use the cell\'s free width … then shrink" (draw.ts cellRoom)', { skip: skipUnlessAvailable('layout-keeping translation of real pages', apertiumMissing()) }, () => {
  test('Redbook p. 20 (Table 3-2): a description cell never wraps down onto the row\'s rule — the room below a cell is free on the page too', async () => {
    const { output, check } = await translatePage('redbook.pdf', 10);
    const rows = (await popplerPages(output))[0]!.lineWords.map((l) => l.words.join(' '));
    const host = rows.find((r) => r.includes('anfitrión'));
    assert.ok(host?.includes('sistema'), `the cell on one line above its rule: ${host}`);
    assert.equal(check.overlappingWords, 0, check.examples.join('; '));
  });
});

describe('"list items, captions, labels, headings … wrap, free space beside and below" (draw.ts)', { skip: skipUnlessAvailable('layout-keeping translation of real pages', toolsMissing()) }, () => {
  let chat: DictionaryServer;
  before(async () => {
    chat = await startDictionaryChatServer(JSON.parse(readFileSync(path.join(corpusDir, 'zh-en.json'), 'utf8')) as Record<string, string>);
  });
  after(() => chat.close());

  test('Debian Reference p. 100 (zh→en): "Section 3.1.4" for "第 3.1.4 节" keeps to its line where the room beside it is free, its number blue', async () => {
    const { output, check } = await translatePage('debian-reference-zh.pdf', 1, createOpenAi({ url: chat.url, model: 'dictionary' }), { source: 'zh', target: 'en' });
    const text = await textOf(output);
    for (const n of ['3.1.1', '3.1.2', '3.1.3', '3.1.4']) assert.match(text, new RegExp(`Section ${n.replace(/\./g, '\\.')}`, 'u'), `"Section ${n}" on one line`);
    assert.equal(check.colourChanged, 0, check.examples.join('; '));
  });
});
