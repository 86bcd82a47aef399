// `npm run bench:pdf-reading` — reading speed and memory of issue 17 (item 8): text-layer pages per
// second on typical documents (Debian manuals, a generated 500-page document) with the reader
// process's peak RSS, beside poppler's pdftotext; and the scanned-page path (items 4, 7): documents whose text is
// known (generated pages, a Debian manual, a page of Simplified Chinese) are rendered to 300-dpi
// gray images and put back as image-only PDFs; the engine reads them by OCR, and we report word
// recall against the original text layer and pages per second — beside the same documents read
// from their text layer, and poppler's pdftotext for scale. Writes bench/results/pdf-reading.json and .md.
// scannedCases() is the corpus part the docparse benchmark can append to its own case list.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PDFDocument } from 'pdf-lib';
import type { ParsedDocument } from '../src/documents/document.ts';
import type { OcrLanguages } from '../src/documents/pdf/ocr-page.ts';
import { extractDocument } from '../src/documents/pdf/extract.ts';
import { killSpareReader } from '../src/documents/pdf/reader-client.ts';
import { samplePdf } from '../test/helpers/pdfs.ts';
import { longDocumentPdf, prosePdf, scanPdf } from '../test/helpers/scans.ts';

export type ScannedCase = { name: string; source: Buffer; scan: Buffer; truth: string; chinese: boolean };

const DEBIAN_MANUAL = '/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf';

/** The first `pages` pages of a PDF, as a new PDF. */
async function firstPages(pdf: Uint8Array, pages: number, from = 0): Promise<Buffer> {
  const source = await PDFDocument.load(pdf);
  const out = await PDFDocument.create();
  const indices = source.getPageIndices().slice(from, from + pages);
  for (const page of await out.copyPages(source, indices)) out.addPage(page);
  return Buffer.from(await out.save());
}

/** The original's text layer, read by poppler (independent of our reader): the truth OCR is scored against. */
function pdftotext(pdf: Uint8Array): string {
  return execFileSync('pdftotext', ['-q', '-', '-'], { input: pdf, maxBuffer: 64 * 2 ** 20 }).toString('utf8');
}

/** Scanned variants (300 dpi, gray) of documents whose text is known by construction or by their text layer. */
export async function scannedCases(): Promise<ScannedCase[]> {
  const sources: Array<{ name: string; pdf: Buffer; chinese: boolean }> = [
    { name: 'generated prose (3 pages)', pdf: await firstPages(await longDocumentPdf(3), 3), chinese: false },
    { name: 'generated sample (pages 1–3: lists, columns, ruled table)', pdf: await firstPages(await samplePdf(), 3), chinese: false },
    { name: 'generated sample (page 4: Simplified Chinese)', pdf: await firstPages(await samplePdf(), 1, 3), chinese: true },
    { name: 'one page: heading and two paragraphs', pdf: await prosePdf('Quarterly Review Summary', ['The committee reviewed forty two quarterly reports and found the figures consistent.', 'Optical character recognition turns the pixels of a scanned page back into words.']), chinese: false },
  ];
  if (existsSync(DEBIAN_MANUAL)) sources.push({ name: 'Debian: shared-mime-info spec (pages 1–4)', pdf: await firstPages(execFileSync('cat', [DEBIAN_MANUAL]), 4), chinese: false });
  const cases: ScannedCase[] = [];
  for (const source of sources) cases.push({ name: source.name, source: source.pdf, scan: await scanPdf(source.pdf, 300), truth: pdftotext(source.pdf), chinese: source.chinese });
  return cases;
}

/** Words for scoring: Latin words and numbers lower-cased, each Han character on its own. */
export function tokens(text: string): string[] {
  return text.toLowerCase().match(/\p{Script=Han}|[\p{L}\p{N}]+/gu) ?? [];
}

/** Share of the truth's tokens found in the read text (as multisets, order ignored). */
export function wordRecall(truth: string, read: string): number {
  const pool = new Map<string, number>();
  for (const t of tokens(read)) pool.set(t, (pool.get(t) ?? 0) + 1);
  const expected = tokens(truth);
  let found = 0;
  for (const t of expected) {
    const n = pool.get(t) ?? 0;
    if (n > 0) {
      found += 1;
      pool.set(t, n - 1);
    }
  }
  return expected.length === 0 ? 1 : found / expected.length;
}

const documentText = (doc: ParsedDocument) => doc.pages.flatMap((p) => p.blocks.map((b) => b.text)).join('\n');

type Row = { case: string; pages: number; languages: string; recall: number; ocrPagesPerSecond: number; textLayerPagesPerSecond: number; pdftotextPagesPerSecond: number };

async function timed<T>(run: () => Promise<T>): Promise<[T, number]> {
  const start = performance.now();
  const value = await run();
  return [value, (performance.now() - start) / 1000];
}

type SpeedRow = { document: string; pages: number; pagesPerSecond: number; coldPagesPerSecond: number; readerPeakMb: number; pdftotextPagesPerSecond: number };

/** Text-layer speed: the first run starts a reader process (cold), the best of three later runs reuses it (warm). */
async function textLayerSpeed(): Promise<SpeedRow[]> {
  const documents: Array<{ name: string; pdf: Buffer }> = [];
  for (const file of ['/usr/share/doc/libtasn1-doc/libtasn1.pdf', DEBIAN_MANUAL]) if (existsSync(file)) documents.push({ name: `Debian: ${path.basename(file)}`, pdf: execFileSync('cat', [file]) });
  documents.push({ name: 'generated sample (4 pages, CJK font)', pdf: await samplePdf() });
  documents.push({ name: 'generated long document (500 pages)', pdf: await longDocumentPdf(500) });
  const rows: SpeedRow[] = [];
  for (const { name, pdf } of documents) {
    await killSpareReader();
    const stats = { readerPeakRss: 0 };
    const [cold, coldSeconds] = await timed(() => extractDocument(pdf, { ocr: null, stats }));
    let best = Infinity;
    for (let i = 0; i < 3; i += 1) best = Math.min(best, (await timed(() => extractDocument(pdf, { ocr: null })))[1]);
    const [, popplerSeconds] = await timed(async () => pdftotext(pdf));
    const pages = cold.pages.length;
    rows.push({ document: name, pages, pagesPerSecond: pages / best, coldPagesPerSecond: pages / coldSeconds, readerPeakMb: stats.readerPeakRss / 2 ** 20, pdftotextPagesPerSecond: pages / popplerSeconds });
    process.stdout.write(`${name}: ${(pages / best).toFixed(1)} pages/s warm, ${(pages / coldSeconds).toFixed(1)} cold, reader peak ${Math.round(stats.readerPeakRss / 2 ** 20)} MB\n`);
  }
  return rows;
}

async function main(): Promise<void> {
  const speed = await textLayerSpeed();
  const speedTable = [
    '| document (text layer) | pages | pages/s (reader warm) | pages/s (first document, reader cold) | reader peak RSS | pdftotext pages/s |',
    '|---|---:|---:|---:|---:|---:|',
    ...speed.map((r) => `| ${r.document} | ${r.pages} | ${r.pagesPerSecond.toFixed(1)} | ${r.coldPagesPerSecond.toFixed(1)} | ${Math.round(r.readerPeakMb)} MB | ${r.pdftotextPagesPerSecond.toFixed(0)} |`),
  ].join('\n');
  const cases = await scannedCases();
  const rows: Row[] = [];
  const settings: Array<{ label: string; languages: OcrLanguages }> = [
    { label: 'auto', languages: 'auto' },
    { label: 'eng', languages: ['eng'] },
    { label: 'eng+chi_sim', languages: ['eng', 'chi_sim'] },
  ];
  await extractDocument(cases[0]?.source ?? Buffer.alloc(0)).catch(() => {}); // warm the reader process
  for (const c of cases) {
    const pages = (await PDFDocument.load(c.source)).getPageCount();
    const [, textSeconds] = await timed(() => extractDocument(c.source, { ocr: null }));
    const [, popplerSeconds] = await timed(async () => pdftotext(c.source));
    for (const setting of settings) {
      const [doc, seconds] = await timed(() => extractDocument(c.scan, { ocrLanguages: setting.languages }));
      const row: Row = {
        case: c.name,
        pages,
        languages: setting.label,
        recall: wordRecall(c.truth, documentText(doc)),
        ocrPagesPerSecond: pages / seconds,
        textLayerPagesPerSecond: pages / textSeconds,
        pdftotextPagesPerSecond: pages / popplerSeconds,
      };
      rows.push(row);
      process.stdout.write(`${row.case} [${row.languages}]: recall ${(row.recall * 100).toFixed(1)} %, OCR ${row.ocrPagesPerSecond.toFixed(2)} pages/s\n`);
    }
  }
  const table = [
    '| document (scanned at 300 dpi) | pages | OCR languages | OCR word recall | OCR pages/s | text layer pages/s | pdftotext pages/s |',
    '|---|---:|---|---:|---:|---:|---:|',
    ...rows.map((r) => `| ${r.case} | ${r.pages} | ${r.languages} | ${(r.recall * 100).toFixed(1)} % | ${r.ocrPagesPerSecond.toFixed(2)} | ${r.textLayerPagesPerSecond.toFixed(1)} | ${r.pdftotextPagesPerSecond.toFixed(0)} |`),
  ].join('\n');
  const dir = path.join(import.meta.dirname, 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'pdf-reading.json'), `${JSON.stringify({ at: new Date().toISOString(), node: process.version, speed, ocr: rows }, null, 2)}\n`);
  writeFileSync(path.join(dir, 'pdf-reading.md'), `${speedTable}\n\n${table}\n`);
  process.stdout.write(`\n${speedTable}\n\n${table}\n`);
}

if (import.meta.main) await main();
