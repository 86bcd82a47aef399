// Issue 42, item 4: "The remaining overlaps and gutter words (the corpus places above) to 0", and
// "every run's colour equal to its source's". Real pages of the translate corpus nobody here typeset
// (bench/translate-pdf/corpus/, sources in its manifest.json), each cut out as a one-page PDF and
// taken through the task's own steps (parse, split, translate by Debian's Apertium, overlay) and the
// reader's check: the Redbook's figure of SQL with callout boxes (p. 10) and its code listing between
// two rules (p. 14), the Federal Register's printer's slug set up the margin (p. 14), and the Los
// Angeles precinct listing whose printed rows run on from one ruled panel into the next.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ParsedDocument } from '../../src/documents/document.ts';
import { extractDocument } from '../../src/documents/pdf/extract.ts';
import { createApertium } from '../../src/documents/translate/apertium.ts';
import { checkTranslatedPdf, popplerPages } from '../../src/documents/translate/overlay/check-pdf.ts';
import { drawnPages } from '../../src/documents/translate/overlay/check-drawn.ts';
import { checkPage, type PageCheck, type SizedRun } from '../../src/documents/translate/overlay/check.ts';
import { splitColumnSpanningBlocks } from '../../src/documents/translate/overlay/columns.ts';
import { renderOverlayPdf } from '../../src/documents/translate/overlay/draw.ts';
import { isKeptBlock, isKeptCell } from '../../src/documents/translate/overlay/keep.ts';
import { translateDocument } from '../../src/documents/translate/translate-document.ts';
import { skipUnlessAvailable } from '../helpers/services.ts';
import { apertiumMissing, corpus, onePage } from '../helpers/translate-corpus.ts';


type Run = { parsed: ParsedDocument; output: Uint8Array; check: PageCheck };

async function translatePage(file: string, n: number): Promise<Run> {
  const source = await onePage(file, n);
  const parsed = await splitColumnSpanningBlocks(source, await extractDocument(source));
  const translated = await translateDocument(parsed, createApertium(), { source: 'en', target: 'es' });
  const output = await renderOverlayPdf(source, parsed, translated);
  const drawn = { source: await drawnPages(source), translated: await drawnPages(output) };
  const [check] = await checkTranslatedPdf(source, output, { document: parsed, translated, drawn });
  return { parsed, output, check: check! };
}

const pageWords = (doc: ParsedDocument) => doc.pages.flatMap((p) => p.blocks.flatMap((b) => (b.table ? b.table.cells.map((c) => c.text) : [b.text]))).join(' ').split(/\s+/u).filter(Boolean);

describe('the remaining places of the translate corpus (issue 42)', { skip: skipUnlessAvailable('layout-keeping translation of real pages', apertiumMissing()) }, () => {
  test('"the remaining overlaps … to 0": Redbook p. 10 — a figure of SQL with callout boxes is a picture (its labels translated in place), not a table whose cells run over each other', async () => {
    const { parsed, check } = await translatePage('redbook.pdf', 8);
    const page = parsed.pages[0]!;
    assert.ok(!page.blocks.some((b) => b.label === 'table'), 'the figure is no table');
    const callout = page.blocks.find((b) => b.text.startsWith('Names the row permission'));
    assert.ok(callout?.inPicture, 'a callout is the figure\'s label');
    assert.equal(check.overlappingWords, 0, check.examples.join('; '));
  });

  test('"code … kept in the source\'s glyphs … and place": Redbook p. 14 — the listing between two rules ("Example 3-10") is code, kept as drawn, and nothing overlaps', async () => {
    const { parsed, check } = await translatePage('redbook.pdf', 12);
    const page = parsed.pages[0]!;
    assert.ok(!page.blocks.some((b) => b.label === 'table'), 'no table made of the listing');
    const listing = page.blocks.filter((b) => b.text.includes('ALTER TABLE HR_SCHEMA.EMPLOYEES'));
    assert.equal(listing.length, 1);
    assert.equal(listing[0]!.label, 'code');
    assert.ok(isKeptBlock(listing[0]!, page));
    assert.equal(check.overlappingWords, 0, check.examples.join('; '));
  });

  test('"the remaining overlaps … to 0": Redbook p. 9 (Table 2-2) — the column headers set up the page stay as drawn, not set across into the rows of crosses', async () => {
    const { parsed, check } = await translatePage('redbook.pdf', 7);
    const table = parsed.pages[0]!.blocks.find((b) => b.label === 'table' && b.table?.cells.some((c) => c.text === 'QIBM_DB_SQLADM'));
    assert.ok(table?.table, 'Table 2-2 is read');
    const header = table.table.cells.find((c) => c.text === 'QIBM_DB_SQLADM')!;
    assert.ok(isKeptCell(header, table), 'the turned header is kept');
    assert.ok(!isKeptCell(table.table.cells.find((c) => c.text.startsWith('Visual Explain within'))!, table), 'a row\'s text is translated');
    assert.equal(check.overlappingWords, 0, check.examples.join('; '));
  });

  test('"the remaining overlaps … to 0": Federal Register p. 14 — the printer\'s slug set up the margin stays as drawn, upright text is not set over it', async () => {
    const { parsed, check } = await translatePage('federal-register.pdf', 3);
    const page = parsed.pages[0]!;
    const slug = page.blocks.find((b) => b.text.startsWith('jbell on'));
    assert.ok(slug, 'the turned line is read');
    assert.ok(slug.bbox.r - slug.bbox.l < 10 && slug.bbox.t - slug.bbox.b > 90, `its box runs up the page: ${JSON.stringify(slug.bbox)}`);
    assert.ok(isKeptBlock(slug, page), 'kept as the source drew it');
    assert.equal(check.overlappingWords, 0, check.examples.join('; '));
    assert.equal(check.belowMargin, 0, check.examples.join('; '));
  });

  test('"the remaining … gutter words to 0": la-precinct — every word of the listing stays, each printed row an entry of its own, no word of the listing in a gutter', async () => {
    const source = corpus('la-precinct.pdf');
    const whole = await extractDocument(source);
    const split = await splitColumnSpanningBlocks(source, whole);
    // The split by columns never drops a word (it lost "JEFFREY PRANG", "MUKUND SHAH" and the counts beside them).
    assert.deepEqual([...pageWords(split)].sort(), [...pageWords(whole)].sort());
    const entry = split.pages[0]!.blocks.find((b) => b.text === 'NEEL KASHKARI');
    assert.ok(entry, 'a name of the listing is an entry of its own, not a line of a paragraph');
    // An entry has its own line breaks, not its panel's: the panel's would break "EDMUND G" / "BROWN"
    // away from its party and count.
    assert.equal(entry.lineBreaks, undefined, 'a one-line entry breaks nowhere');
    // A block of one printed row that is a listing's row — the header's "PAGE   1", a label and its
    // value set apart across a gutter — is split there too: the label is translated in its place and
    // the number kept where it stood ("Página" no longer pushes the "1" into the gutter).
    assert.ok(split.pages[0]!.blocks.some((b) => b.text === 'PAGE'), 'the header\'s "PAGE" is a block of its own');
    const { output, check } = await translatePage('la-precinct.pdf', 1);
    assert.equal(check.gutterCrossings, 0, check.examples.join('; '));
    const rows = (await popplerPages(output))[0]!.lineWords.map((l) => l.words.join(' '));
    for (const name of ['EDMUND G BROWN', 'RON NEHRING', 'DAYAN MATHAI']) assert.ok(rows.some((r) => r.includes(name)), `"${name}" on one row`);
    assert.equal(check.overlappingWords, 0, check.examples.join('; '));
    // A listing's label takes its column's free width: Apertium's "Núm" for "NO" is set whole, not broken
    // into "Nú" and "m" in the box the two letters had, so every block's translation is found on the page.
    assert.deepEqual(check.blocks?.missing ?? [], [], 'no translated block is missing from the page');
  });
});

describe('"every run\'s colour equal to its source\'s" (check.ts, f)', () => {
  const run = (xMin: number, yMin: number, width: number, color: string, text?: string): SizedRun => ({ xMin, xMax: xMin + width, yMin, yMax: yMin + 10, size: 10, color, ...(text ? { text } : {}) });
  const block = { xMin: 50, xMax: 400, yMin: 95, yMax: 135 };
  const check = (source: SizedRun[], translated: SizedRun[]) => checkPage({ pageNo: 1, width: 600, height: 800, source: { words: [], lines: [], runs: source, regions: [block] }, translated: { words: [], runs: translated } });

  test('a blue link that moved within its block (Debian Reference p. 100, zh→en) keeps its source\'s colour', () => {
    const source = [run(60, 100, 80, '#000000'), run(140, 100, 40, '#0000ff'), run(180, 100, 200, '#000000')];
    const translated = [run(60, 100, 200, '#000000'), run(260, 100, 60, '#0000ff'), run(60, 120, 100, '#000000')];
    assert.equal(check(source, translated).colourChanged, 0);
  });

  test('a translated line that runs on past its source box (widened to its column) is still its block\'s: the link\'s blue is kept', () => {
    const source = [run(60, 100, 20, '#000000'), run(82, 100, 30, '#0000ff')];
    const translated = [run(60, 100, 40, '#000000'), run(104, 100, 30, '#0000ff')];
    const narrow = { xMin: 55, xMax: 115, yMin: 95, yMax: 115 };
    const result = checkPage({ pageNo: 1, width: 600, height: 800, source: { words: [], lines: [], runs: source, regions: [narrow] }, translated: { words: [], runs: translated } });
    assert.equal(result.colourChanged, 0);
  });

  test('a red square bullet printed black is a changed colour, though its block has black text', () => {
    const source = [run(60, 100, 8, '#ff0000', '■'), run(75, 100, 200, '#000000')];
    const translated = [run(60, 100, 8, '#000000', '■'), run(75, 100, 220, '#000000')];
    assert.equal(check(source, translated).colourChanged, 2, 'the bullet in black, and the block\'s red that no run keeps');
  });

  test('a colour no source run of the block has is a changed colour', () => {
    const source = [run(60, 100, 200, '#000000')];
    const translated = [run(60, 100, 100, '#000000'), run(160, 100, 40, '#00ff00')];
    assert.equal(check(source, translated).colourChanged, 1);
  });
});
