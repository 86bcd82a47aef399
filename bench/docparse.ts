// `npm run bench:docparse` — issue 25's benchmark on the public corpus, Signet beside opendataloader-pdf
// and pdftotext (bench/docparse/public-bench.ts); options `--sets docling,tabula`, `--only SET/ID,…`,
// `--dump DIR`, `--out` (write the results of a limited run too), `--struct-tree` (opendataloader-pdf with
// `--use-struct-tree`, its tagged-PDF mode). A full run ends with the API path's row (issue 40): a batch
// through docling-serve's `/v1/convert/file` beside `signet parse` (`--api` runs only that).
//
// `npm run bench:docparse -- --own` — the document-parsing quality benchmark of issue 17 (item 7) and its
// speed figures (item 8). The corpus: generated PDFs whose truth is known by construction
// (bench/docparse/generated.ts), pages of real Debian manuals with truth written by looking at the
// pages (bench/docparse/debian.ts, bench/docparse/truth/), and 300-dpi scans of both (image-only PDFs
// read through OCR). Each document goes through the engine exactly as a parsing task does
// (runDocparse with pictures cut), and is scored with opendataloader-bench's figures — NID, TEDS,
// MHS (bench/docparse/metrics.ts) — plus table-cell accuracy, heading F1, OCR word recall and pages
// per second, beside poppler's `pdftotext -layout` for speed. Writes bench/results/docparse.json and
// docparse.md.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { runDocparse } from '../src/documents/parse.ts';
import { killSpareReader, warmReader } from '../src/documents/pdf/reader-client.ts';
import { scanPdf, scanToolsMissing, tesseractMissing } from '../test/helpers/scans.ts';
import { debianDocuments, type Skipped } from './docparse/debian.ts';
import { generatedDocuments, type CorpusDocument } from './docparse/generated.ts';
import { cpuOf } from './docparse/cpu.ts';
import { speedRows, speedTable } from './docparse/speed.ts';
import { scoreDocument, summarise, type DocumentScores, type Summary } from './docparse/score.ts';
import { publicBenchmark } from './docparse/public-bench.ts';
import { apiPathRows, apiPathTable } from './docparse/api-path.ts';

/** Text-layer documents are timed this many times (best run kept); scans once. */
const TIMED_RUNS = 3;

function pdftotextLayout(pdf: Uint8Array): void {
  execFileSync('pdftotext', ['-layout', '-q', '-', '-'], { input: pdf, maxBuffer: 64 * 2 ** 20 });
}

async function seconds(run: () => Promise<unknown> | unknown): Promise<number> {
  const start = performance.now();
  await run();
  return (performance.now() - start) / 1000;
}

/** `--dump DIR`: each document's truth and parsed Markdown written there, for looking at the differences. */
const dumpAt = process.argv.indexOf('--dump');
const dumpDir = dumpAt > 0 ? process.argv[dumpAt + 1] : undefined;

function dump(index: number, doc: CorpusDocument, markdown: string): void {
  if (!dumpDir) return;
  mkdirSync(dumpDir, { recursive: true });
  const truth = doc.pages.map((p, i) => `<!-- page ${i + 1} -->\n\n${p.markdown.join('\n\n')}`).join('\n\n');
  writeFileSync(path.join(dumpDir, `${index}.truth.md`), `${truth}\n`);
  writeFileSync(path.join(dumpDir, `${index}.parsed.md`), markdown);
  writeFileSync(path.join(dumpDir, `${index}.pdf`), doc.pdf);
}

async function measure(doc: CorpusDocument, index: number): Promise<DocumentScores> {
  // As a parsing task runs it (src/tasks/run-task.ts): pictures cut and handed over, OCR for pages without text.
  const options = { name: 'bench', onPicture: async () => {} };
  const start = performance.now();
  const first = await cpuOf(() => runDocparse(doc.pdf, options));
  const result = first.value;
  let best = (performance.now() - start) / 1000;
  dump(index, doc, result.markdown);
  let cpu = first.seconds;
  let cpuRuns = 1;
  let popplerBest = Infinity;
  for (let i = 0; i < TIMED_RUNS; i += 1) {
    if (doc.kind !== 'scan') {
      const runStart = performance.now();
      const run = await cpuOf(() => runDocparse(doc.pdf, options));
      best = Math.min(best, (performance.now() - runStart) / 1000);
      cpu = cpu === undefined || run.seconds === undefined ? undefined : cpu + run.seconds;
      cpuRuns += 1;
    }
    popplerBest = Math.min(popplerBest, await seconds(() => pdftotextLayout(doc.pdf)));
  }
  const pages = result.document.pages.length;
  return scoreDocument(doc, result, { pagesPerSecond: pages / best, pagesPerCpuSecond: cpu !== undefined && cpu > 0 ? (pages * cpuRuns) / cpu : undefined, pdftotextPagesPerSecond: pages / popplerBest });
}

const fixed = (value: number | undefined, digits = 2) => (value === undefined ? '–' : value.toFixed(digits));
const percent = (part: number, whole: number) => (whole === 0 ? '–' : `${((100 * part) / whole).toFixed(1)} %`);
const meanOf = (values: Array<number | undefined>) => {
  const defined = values.filter((v): v is number => v !== undefined);
  return defined.length === 0 ? undefined : defined.reduce((a, b) => a + b, 0) / defined.length;
};

function documentRow(d: DocumentScores): string {
  const page = (key: 'nid' | 'teds' | 'mhs') => fixed(meanOf(d.perPage.map((p) => p[key])));
  const headingF1 = summarise([d]).headingF1;
  return `| ${d.name} | ${d.scoredPages === d.pages ? d.pages : `${d.scoredPages} of ${d.pages}`} | ${page('nid')} | ${page('teds')} | ${page('mhs')} | ${percent(d.cells.correct, d.cells.total)} | ${d.headings.truth + d.headings.parsed === 0 ? '–' : fixed(headingF1)} | ${d.ocr ? percent(d.ocr.found, d.ocr.total) : '–'} | ${d.pagesPerSecond.toFixed(d.kind === 'scan' ? 2 : 1)} | ${fixed(d.pagesPerCpuSecond, d.kind === 'scan' ? 2 : 1)} | ${d.pdftotextPagesPerSecond.toFixed(0)} |`;
}

function summaryRow(label: string, s: Summary): string {
  return `| **${label}** | ${s.scoredPages === s.pages ? s.pages : `${s.scoredPages} of ${s.pages}`} | ${fixed(s.nid)} | ${fixed(s.teds)} | ${fixed(s.mhs)} | ${s.cellAccuracy === undefined ? '–' : `${(100 * s.cellAccuracy).toFixed(1)} %`} | ${fixed(s.headingF1)} | ${s.ocrWordRecall === undefined ? '–' : `${(100 * s.ocrWordRecall).toFixed(1)} %`} | ${fixed(s.pagesPerSecond, 1)} | ${fixed(s.pagesPerCpuSecond, 1)} | ${fixed(s.pdftotextPagesPerSecond, 0)} |`;
}

/** Issue 17's benchmark on generated pages and Debian manuals (`--own`). */
async function ownCorpus(): Promise<void> {
  const corpus: CorpusDocument[] = await generatedDocuments();
  const { documents: debian, skipped } = await debianDocuments();
  corpus.push(...debian);
  const missing: Skipped[] = [...skipped];
  const scanReason = scanToolsMissing() ?? tesseractMissing();
  const toScan = corpus.filter((d) => d.kind === 'generated' || d.name.includes('booktabs'));
  if (scanReason) missing.push(...toScan.map((d) => ({ name: `scan of ${d.name}`, reason: scanReason })));
  else for (const d of toScan) corpus.push({ name: `scan (300 dpi) of ${d.name.replace(/^[^:]+: /, '').replace('scored pages', 'pages')}`, kind: 'scan', pages: d.pages, pdf: await scanPdf(d.excerpt ?? d.pdf, 300) });
  for (const skip of missing) process.stdout.write(`skipped: ${skip.name} — ${skip.reason}\n`);

  warmReader();
  await runDocparse(corpus[0]?.pdf ?? Buffer.alloc(0), { name: 'warm-up' }).catch(() => {});
  const results: DocumentScores[] = [];
  for (const [index, doc] of corpus.entries()) {
    const scores = await measure(doc, index);
    results.push(scores);
    process.stdout.write(`${documentRow(scores)}\n`);
  }
  const speed = await speedRows(debian);
  await killSpareReader();

  const textLayer = results.filter((d) => d.kind !== 'scan');
  const scans = results.filter((d) => d.kind === 'scan');
  const totals = {
    generated: summarise(results.filter((d) => d.kind === 'generated')),
    debian: summarise(results.filter((d) => d.kind === 'debian')),
    textLayer: summarise(textLayer),
    scans: summarise(scans),
  };
  const header = [
    '| document | pages (scored of parsed) | NID | TEDS | MHS | table cells | heading F1 | OCR word recall | pages/s (wall) | pages per CPU-second | pdftotext -layout pages/s (wall) |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  const table = [
    ...header,
    ...results.map(documentRow),
    summaryRow('generated (text layer)', totals.generated),
    ...(debian.length > 0 ? [summaryRow('Debian manuals (text layer)', totals.debian)] : []),
    summaryRow('all text-layer pages', totals.textLayer),
    ...(scans.length > 0 ? [summaryRow('scans (OCR)', totals.scans)] : []),
  ].join('\n');
  const dir = path.join(import.meta.dirname, 'results');
  mkdirSync(dir, { recursive: true });
  const at = new Date().toISOString();
  const load = loadavg().map((n) => n.toFixed(1)).join(', ');
  const machine = `${cpus().length} cores, load average at the end ${load}`;
  writeFileSync(path.join(dir, 'docparse.json'), `${JSON.stringify({ at, node: process.version, machine, skipped: missing, totals, documents: results, speed }, null, 2)}\n`);
  const notes = missing.map((s) => `- skipped: ${s.name} — ${s.reason}`).join('\n');
  writeFileSync(path.join(dir, 'docparse.md'), `Run ${at} (Node ${process.version}; ${machine}).\n\n${table}\n${notes ? `\n${notes}\n` : ''}\n${speedTable(speed)}\n`);
  process.stdout.write(`\n${table}\n\n${speedTable(speed)}\n`);
  process.stdout.write(`\nNID-S ${fixed(totals.textLayer.nidS)}, TEDS-S ${fixed(totals.textLayer.tedsS)}, MHS-S ${fixed(totals.textLayer.mhsS)}, heading level accuracy ${fixed(totals.textLayer.headingLevelAccuracy)} (text layer)\n`);
}

/** `--name a,b` as a list, or undefined. */
function listOption(name: string): string[] | undefined {
  const at = process.argv.indexOf(name);
  return at > 0 ? (process.argv[at + 1] ?? '').split(',').filter((s) => s !== '') : undefined;
}

/** Issue 40: the API path beside `signet parse` (bench/docparse/api-path.ts); `--api` runs only this. */
async function apiPath(): Promise<void> {
  const table = apiPathTable(await apiPathRows());
  mkdirSync(path.join(import.meta.dirname, 'results'), { recursive: true });
  writeFileSync(path.join(import.meta.dirname, 'results', 'docparse-api.md'), `Run ${new Date().toISOString()} (Node ${process.version}).\n\n${table}`);
  process.stdout.write(`\n${table}`);
}

if (import.meta.main) {
  if (process.argv.includes('--own')) await ownCorpus();
  else if (process.argv.includes('--api')) await apiPath();
  else {
    const sets = listOption('--sets');
    const only = listOption('--only');
    await publicBenchmark({ ...(sets ? { sets } : {}), ...(only ? { only } : {}), ...(dumpDir ? { dump: dumpDir } : {}), out: process.argv.includes('--out'), structTree: process.argv.includes('--struct-tree') });
    if (!sets && !only) await apiPath();
  }
  process.exit(0);
}
