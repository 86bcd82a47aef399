// Issue 17 item 8's figures on whole documents, the way a parsing task runs them (runDocparse with
// pictures cut, Markdown and JSON written): text-layer pages per second wall-clock and per
// CPU-second (one worker core), the reader process's peak resident size, and the worker's own
// resident size sampled while it runs — on the Debian manuals whole and on a generated 500-page
// document (a long document must stay bounded: pages are read and laid out one at a time).
import { runDocparse } from '../../src/documents/parse.ts';
import { longDocumentPdf } from '../../test/helpers/scans.ts';
import { cpuOf } from './cpu.ts';
import type { CorpusDocument } from './generated.ts';

export type SpeedRow = { document: string; pages: number; pagesPerSecond: number; pagesPerCpuSecond?: number; readerPeakMb: number; workerPeakMb: number; workerStartMb: number };

const MB = (bytes: number) => bytes / 2 ** 20;

async function timeDocument(name: string, pdf: Buffer, runs: number): Promise<SpeedRow> {
  let best = Infinity;
  let cpu: number | undefined = 0;
  let pages = 0;
  const stats = { readerPeakRss: 0 };
  const workerStart = process.memoryUsage().rss;
  let workerPeak = workerStart;
  const sampler = setInterval(() => {
    workerPeak = Math.max(workerPeak, process.memoryUsage().rss);
  }, 50);
  try {
    for (let i = 0; i < runs; i += 1) {
      const start = performance.now();
      // Passed through to extractDocument, as src/tasks/run-task.ts passes its options.
      const options = { name, onPicture: async () => {}, stats };
      const run = await cpuOf(() => runDocparse(pdf, options));
      best = Math.min(best, (performance.now() - start) / 1000);
      cpu = cpu === undefined || run.seconds === undefined ? undefined : cpu + run.seconds;
      pages = run.value.document.pages.length;
      workerPeak = Math.max(workerPeak, process.memoryUsage().rss);
    }
  } finally {
    clearInterval(sampler);
  }
  const row: SpeedRow = { document: name, pages, pagesPerSecond: pages / best, readerPeakMb: MB(stats.readerPeakRss), workerPeakMb: MB(workerPeak), workerStartMb: MB(workerStart) };
  if (cpu !== undefined && cpu > 0) row.pagesPerCpuSecond = (pages * runs) / cpu;
  return row;
}

/** The Debian manuals whole (from the corpus) and a generated 500-page document, three runs each (best wall-clock, mean CPU). */
export async function speedRows(debian: CorpusDocument[]): Promise<SpeedRow[]> {
  const rows: SpeedRow[] = [];
  for (const doc of debian) rows.push(await timeDocument(doc.name.replace(/, scored pages.*$/, ''), doc.pdf, 3));
  rows.push(await timeDocument('generated long document (500 pages of prose and headings)', await longDocumentPdf(500), 3));
  return rows;
}

export function speedTable(rows: SpeedRow[]): string {
  return [
    '| document (text layer, whole) | pages | pages/s (wall) | pages per CPU-second | reader peak RSS | worker RSS (start → peak) |',
    '|---|---:|---:|---:|---:|---:|',
    ...rows.map((r) => `| ${r.document} | ${r.pages} | ${r.pagesPerSecond.toFixed(1)} | ${r.pagesPerCpuSecond?.toFixed(1) ?? '–'} | ${Math.round(r.readerPeakMb)} MB | ${Math.round(r.workerStartMb)} → ${Math.round(r.workerPeakMb)} MB |`),
  ].join('\n');
}
