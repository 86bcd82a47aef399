// Translated PDFs of real layouts, checked as a reader sees them (issue 26).
//
//   npm run bench:translate-pdf [-- --label after] [--only amt-handbook[,redbook…]] [--png DIR]
//
// Every page of bench/translate-pdf/corpus/ (the handbook page a second time en→zh) (public pages nobody here typeset: manifest.json says
// where each comes from) is parsed, translated (en→es by Debian's Apertium; zh→en by an
// OpenAI-compatible server on loopback answering from bench/translate-pdf/corpus/zh-en.json, a
// dictionary of the corpus sentences), laid out by the overlay, and checked (overlay/check.ts):
// overlapping words, words in a column gutter or on a drawing, text below the margin, the smallest
// size against the source's, text below 70 % of its source size, source blocks whose translation is
// missing; and (issue 34) characters no font draws (notdef), runs in another fill colour than the
// source runs of their block, or a block's source colour no translated run keeps (colour), and styled words whose style the engine's markup kept
// (styles, kept/all). Notes pages (text continued from where it did not fit at 70 %) are rows of
// their own. Prints one row per page and writes bench/results/translate-pdf-corpus-<label>.json.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { extractDocument } from '../src/documents/pdf/extract.ts';
import { createApertium } from '../src/documents/translate/apertium.ts';
import { createLibreTranslate } from '../src/documents/translate/libretranslate.ts';
import { createOpenAi } from '../src/documents/translate/openai.ts';
import { checkTranslatedPdf } from '../src/documents/translate/overlay/check-pdf.ts';
import { splitColumnSpanningBlocks } from '../src/documents/translate/overlay/columns.ts';
import { drawnPages } from '../src/documents/translate/overlay/check-drawn.ts';
import type { PageCheck } from '../src/documents/translate/overlay/check.ts';
import { renderOverlayPdf } from '../src/documents/translate/overlay/draw.ts';
import { translateDocument } from '../src/documents/translate/translate-document.ts';
import type { Translator } from '../src/documents/translate/translator.ts';
import { startDictionaryChatServer } from '../test/helpers/dictionary-chat-server.ts';
import { startLongerTranslationServer } from '../test/helpers/longer-translation-server.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const corpusDir = path.join(here, 'translate-pdf', 'corpus');
type Entry = { file: string; pages: number[]; class: string; pair: string; /** "longer": the LibreTranslate-compatible engine whose output runs a third longer (issue 42). */ engine?: string };
const manifest = JSON.parse(readFileSync(path.join(corpusDir, 'manifest.json'), 'utf8')) as { documents: Entry[] };
const arg = (name: string) => { const i = process.argv.indexOf(name); return i > 0 ? process.argv[i + 1] : undefined; };
const label = arg('--label') ?? 'latest';
const only = arg('--only');
const pngDir = arg('--png');

const dictionary = (name: string) => { const file = path.join(corpusDir, name); return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>) : {}; };
// One dictionary server for both directions: the source sentences of the corpus, Chinese and English.
const chat = await startDictionaryChatServer({ ...dictionary('zh-en.json'), ...dictionary('en-zh.json') });
// Issue 42: a LibreTranslate-compatible engine whose output runs about a third longer than the source.
const longer = await startLongerTranslationServer();
const longerEngine = createLibreTranslate({ url: longer.url });
const engines: Record<string, Translator | string> = {
  'en-es': createApertium(),
  'zh-en': createOpenAi({ url: chat.url, model: 'dictionary' }),
  'en-zh': createOpenAi({ url: chat.url, model: 'dictionary' }),
  'ar-en': 'no engine here offers ar→en (Apertium has no Arabic pair; no model server on this machine)',
};

type Row = PageCheck & { file: string; class: string; pair: string; sourcePage: number; seconds: number };
const rows: Row[] = [];
const skipped: Array<{ file: string; pages: number; reason: string }> = [];
for (const entry of manifest.documents) {
  if (only && !only.split(',').some((name) => entry.file.includes(name))) continue;
  const engine = entry.engine === 'longer' ? longerEngine : engines[entry.pair];
  if (typeof engine !== 'object') { skipped.push({ file: entry.file, pages: entry.pages.length, reason: engine ?? `no engine for ${entry.pair}` }); continue; }
  const [source, target] = entry.pair.split('-') as [string, string];
  const pair = entry.engine ? `${entry.pair} (${entry.engine})` : entry.pair;
  const data = new Uint8Array(readFileSync(path.join(corpusDir, entry.file)));
  const started = performance.now();
  try {
    // As a task does (run-task.ts): blocks joined across columns are split before translation.
    const parsed = process.argv.includes('--no-split') ? await extractDocument(data) : await splitColumnSpanningBlocks(data, await extractDocument(data));
    const translated = await translateDocument(parsed, engine, { source, target });
    const output = await renderOverlayPdf(data, parsed, translated);
    const seconds = (performance.now() - started) / 1000 / parsed.pages.length;
    const drawn = { source: await drawnPages(data), translated: await drawnPages(output) };
    const checks = await checkTranslatedPdf(data, output, { document: parsed, translated, drawn });
    checks.forEach((c, i) => rows.push({ ...c, file: entry.file, class: entry.class, pair, sourcePage: entry.pages[i] ?? i + 1, seconds }));
    if (pngDir) {
      mkdirSync(pngDir, { recursive: true });
      writeFileSync(path.join(pngDir, `${entry.file.replace(/\.pdf$/, '')}.${entry.pair}.${label}.pdf`), output);
    }
  } catch (error) {
    skipped.push({ file: entry.file, pages: entry.pages.length, reason: `failed: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}` });
  }
}
await chat.close();
await longer.close();

const pad = (s: string | number, n: number) => String(s).padEnd(n);
// Issue 42: the blocks continued on a notes page, by kind ("running text 2, table cell 1").
const notesOf = (toNotes: Record<string, number> | undefined) => Object.entries(toNotes ?? {}).map(([kind, n]) => `${kind} ${n}`).join(', ') || '-';
console.log(`${pad('page', 30)} ${pad('pair', 6)} ${pad('overlap', 9)} ${pad('gutter', 7)} ${pad('drawing', 8)} ${pad('margin', 7)} ${pad('min size', 13)} ${pad('<70%', 5)} ${pad('notdef', 7)} ${pad('colour', 7)} ${pad('styles', 9)} ${pad('blocks', 14)} to notes`);
for (const r of rows) {
  const size = r.smallestSize === undefined ? '-' : `${r.smallestSize.toFixed(1)}/${r.sourceSmallestSize?.toFixed(1) ?? '-'}`;
  const blocks = r.blocks ? `${r.blocks.present}/${r.blocks.total}${r.blocks.kept ? ` (${r.blocks.kept} kept)` : ""}${r.blocks.missing.length ? ` missing ${r.blocks.missing.length}` : ""}` : "-";
  console.log(`${pad(`${r.file} ${r.notesPage ? 'notes' : `p${r.sourcePage}`}`, 30)} ${pad(r.pair, 6)} ${pad(`${r.overlapPlaces}/${r.overlappingWords}`, 9)} ${pad(r.gutterCrossings, 7)} ${pad(r.intoDrawings, 8)} ${pad(r.belowMargin, 7)} ${pad(size, 13)} ${pad(r.belowFloor, 5)} ${pad(r.missingGlyphs, 7)} ${pad(r.colourChanged, 7)} ${pad(`${r.styledWords - r.styleFallbacks}/${r.styledWords}`, 9)} ${pad(blocks, 14)} ${notesOf(r.toNotes)}`);
}
for (const s of skipped) console.log(`${pad(s.file, 30)} not measured (${s.pages} page${s.pages === 1 ? '' : 's'}): ${s.reason}`);
const sum = (f: (r: Row) => number) => rows.reduce((n, r) => n + f(r), 0);
const clean = rows.filter((r) => r.overlappingWords === 0 && r.gutterCrossings === 0).length;
console.log(`\n${rows.length} pages measured: ${clean} with no overlapping words and no gutter crossing; overlapping words ${sum((r) => r.overlappingWords)} (${sum((r) => r.overlapPlaces)} places), gutter crossings ${sum((r) => r.gutterCrossings)}, words on drawings ${sum((r) => r.intoDrawings)}, below the margin ${sum((r) => r.belowMargin)}, runs below 70 % ${sum((r) => r.belowFloor)}, missing glyphs ${sum((r) => r.missingGlyphs)}, runs in another colour than the source's ${sum((r) => r.colourChanged)}, styled words kept ${sum((r) => r.styledWords - r.styleFallbacks)}/${sum((r) => r.styledWords)}, blocks translated ${sum((r) => r.blocks?.present ?? 0)}/${sum((r) => r.blocks?.total ?? 0)} (kept as drawn ${sum((r) => r.blocks?.kept ?? 0)}, missing ${sum((r) => r.blocks?.missing.length ?? 0)})`);
const byKind: Record<string, number> = {};
for (const r of rows) for (const [kind, n] of Object.entries(r.toNotes ?? {})) byKind[kind] = (byKind[kind] ?? 0) + n;
console.log(`blocks continued on a notes page, by kind: ${notesOf(byKind)}; notes pages ${rows.filter((r) => r.notesPage).length}`);
if (chat.missing.length > 0) console.log(`zh-en dictionary lacks ${chat.missing.length} segments, e.g. ${JSON.stringify(chat.missing.slice(0, 3))}`);
const results = path.join(here, 'results', `translate-pdf-corpus-${label}.json`);
writeFileSync(results, `${JSON.stringify({ label, date: new Date().toISOString(), pages: rows.map(({ examples, ...r }) => ({ ...r, examples })), skipped }, null, 1)}\n`);
console.log(`written ${path.relative(process.cwd(), results)}`);
