// Layout-keeping translation output (issue 18 "A measured figure: seconds per page for layout-keeping
// output (engine time excluded) and peak worker RSS on a 200-page document").
//
//   npm run bench:translate-pdf-speed [-- pages]   (the real-layout corpus: npm run bench:translate-pdf)
//
// Builds a typeset-looking document of `pages` pages (default 200: prose, a coloured panel, a vector
// figure, an image, a ruled table with numbers, code, a formula), parses it, translates it with
// Apertium eng-spa (timed apart), then times translated.pdf (ghostscript text removal, kept text,
// fitting and drawing, composing) and bilingual.pdf. Prints seconds per page and the worker's peak
// RSS (this process; ghostscript runs as its own process and is measured on its own).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { extractDocument } from '../src/documents/pdf/extract.ts';
import { createApertium } from '../src/documents/translate/apertium.ts';
import { renderBilingualPdf } from '../src/documents/translate/bilingual.ts';
import { renderOverlayPdf } from '../src/documents/translate/overlay/draw.ts';
import { translateDocument } from '../src/documents/translate/translate-document.ts';
import { manualPdf } from '../test/helpers/translation-pdfs.ts';

const pages = Number(process.argv[2] ?? 200);
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;
const source = new Uint8Array(await manualPdf(Math.ceil(pages / 2)));
const parsed = await extractDocument(source);
let start = performance.now();
const translated = await translateDocument(parsed, createApertium(), { source: 'en', target: 'es' });
const engineSeconds = (performance.now() - start) / 1000;
const rssBeforeOutput = process.resourceUsage().maxRSS * 1024;

start = performance.now();
const output = await renderOverlayPdf(source, parsed, translated);
const overlaySeconds = (performance.now() - start) / 1000;
start = performance.now();
const bilingual = await renderBilingualPdf(source, output);
const bilingualSeconds = (performance.now() - start) / 1000;
const peakRss = process.resourceUsage().maxRSS * 1024;

// Ghostscript's own peak, measured apart (it is a separate program).
const dir = mkdtempSync(path.join(tmpdir(), 'signet-bench-'));
let gsPeak = 'not measured (/usr/bin/time missing)';
try {
  writeFileSync(path.join(dir, 'in.pdf'), source);
  const report = spawnSync('/usr/bin/time', ['-f', '%M', 'gs', '-q', '-dSAFER', '-dBATCH', '-dNOPAUSE', '-sDEVICE=pdfwrite', '-dFILTERTEXT', `-sOutputFile=${path.join(dir, 'out.pdf')}`, path.join(dir, 'in.pdf')], { encoding: 'utf8' });
  if (report.status === 0) gsPeak = mb(Number(report.stderr.trim().split('\n').at(-1)) * 1024);
} catch {
  // keep the message above
} finally {
  rmSync(dir, { recursive: true, force: true });
}

console.log(`pages: ${parsed.pages.length} (source ${mb(source.length)}, translated.pdf ${mb(output.length)}, bilingual.pdf ${mb(bilingual.length)})`);
console.log(`engine (Apertium, excluded): ${engineSeconds.toFixed(2)} s`);
console.log(`translated.pdf: ${overlaySeconds.toFixed(2)} s = ${(overlaySeconds / parsed.pages.length * 1000).toFixed(1)} ms per page`);
console.log(`bilingual.pdf: ${bilingualSeconds.toFixed(2)} s = ${(bilingualSeconds / parsed.pages.length * 1000).toFixed(1)} ms per page`);
console.log(`layout-keeping output in total: ${((overlaySeconds + bilingualSeconds) / parsed.pages.length).toFixed(4)} s per page`);
console.log(`peak RSS of the worker process: ${mb(peakRss)} (${mb(rssBeforeOutput)} already after parsing and translating); ghostscript's own peak: ${gsPeak}`);
