// Issue 26 tests that depend on the parser (issue 25): they failed on the parser of
// 2026-11-27 before its gutters, sizes, italic headings and picture labels, and pass since.
// Each failure names what the parser hands over that the overlay cannot fix on its own.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { extractDocument } from '../../src/documents/pdf/extract.ts';
import { createApertium } from '../../src/documents/translate/apertium.ts';
import { checkTranslatedPdf } from '../../src/documents/translate/overlay/check-pdf.ts';
import { drawnPages } from '../../src/documents/translate/overlay/check-drawn.ts';
import { splitColumnSpanningBlocks } from '../../src/documents/translate/overlay/columns.ts';
import { renderOverlayPdf } from '../../src/documents/translate/overlay/draw.ts';
import { translateDocument } from '../../src/documents/translate/translate-document.ts';

const corpus = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../bench/translate-pdf/corpus');
const source = new Uint8Array(readFileSync(path.join(corpus, 'amt-handbook.pdf')));

test('"no body text set below 70 % of its source size" on the handbook page (failed while the parser sized a body line by its fraction glyphs: "Rol-top ranges from 1⁄4 inch …" comes as a 5.5 pt block)', async () => {
  const parsed = await splitColumnSpanningBlocks(source, await extractDocument(source));
  const translated = await translateDocument(parsed, createApertium(), { source: 'en', target: 'es' });
  const output = await renderOverlayPdf(source, parsed, translated);
  const [check] = await checkTranslatedPdf(source, output, { document: parsed, translated, drawn: { source: await drawnPages(source), translated: await drawnPages(output) } });
  assert.equal(check!.belowFloor, 0, `${check!.belowFloor} runs below 70 % of the source size; smallest ${check!.smallestSize} pt`);
});

test('the parser hands over the handbook page without blocks joined across columns (failed while the first block ran from the left column into the right)', async () => {
  const parsed = await extractDocument(source);
  for (const block of parsed.pages[0]!.blocks) assert.ok(block.bbox.r - block.bbox.l < 300, `"${block.text.slice(0, 40)}" spans ${Math.round(block.bbox.l)}–${Math.round(block.bbox.r)}`);
});

test('"a run-in heading keeps its style and its line": "Boots Self-Locking Nut" is its own italic heading, not glued into its paragraph', async () => {
  const parsed = await extractDocument(source);
  const heading = parsed.pages[0]!.blocks.find((b) => b.text.trim() === 'Boots Self-Locking Nut');
  assert.ok(heading, 'the heading is a block of its own');
  assert.ok(heading.italic, 'in italic, as the source sets it');
});

test('labels of a drawing are not headings: "Untightened nut" and "Tightened nut" are part of the picture', async () => {
  const parsed = await extractDocument(source);
  const headings = parsed.pages[0]!.blocks.filter((b) => b.label === 'section_header').map((b) => b.text);
  assert.deepEqual(headings.filter((t) => /tightened nut/i.test(t)), []);
});
