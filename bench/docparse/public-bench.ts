// `npm run bench:docparse` — issue 25's benchmark: the public corpus (bench/docparse/public/, PDFs from
// other projects' test suites with truth not written by Signet's authors) parsed by Signet,
// opendataloader-pdf and pdftotext in the same run, every page scored with the same NID / TEDS / MHS,
// and the wall time of each program over the whole corpus, its process start included. Text-layer
// files and scans are timed as two batches (only Signet reads scans; opendataloader's local mode has
// no OCR). Writes bench/results/docparse-public.json and .md on a full run.
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { furnitureHeadings } from './furniture-headings.ts';
import { markdownPages } from './score.ts';
import { publicDocuments, type PublicDocument } from './public-corpus.ts';
import { tesseractMissing } from '../../test/helpers/scans.ts';
import { opendataloaderMissing, pdftotextMissing, runOpendataloader, runPdftotext, runSignet, textPages, type BatchRun, type EngineName } from './public-engines.ts';
import { scorePage, scoreTable, summarise, timingTable, twoTruthTable, worstPages, type PageResult, type Timing } from './public-report.ts';

export type PublicOptions = {
  sets?: string[];
  only?: string[];
  dump?: string;
  out?: boolean;
  /** Run opendataloader-pdf with `--use-struct-tree` (its tagged-PDF mode), the peer of Signet's tagged reading (issue 31). */
  structTree?: boolean;
};

/** The name a document's file goes by in a batch: unique over all sets. */
const batchName = (doc: PublicDocument) => `${doc.set}__${doc.id}`;

function pagesOf(engine: EngineName, output: string | undefined): Map<number, string> {
  if (output === undefined) return new Map();
  return engine === 'pdftotext' ? textPages(output) : markdownPages(output);
}

function dump(dir: string, doc: PublicDocument, runs: Partial<Record<EngineName, BatchRun>>): void {
  const at = path.join(dir, doc.set);
  mkdirSync(at, { recursive: true });
  const truth = [...doc.truthPages.entries()].map(([n, md]) => `<!-- page ${n} -->\n\n${md}`).join('\n\n');
  writeFileSync(path.join(at, `${doc.id}.truth.md`), `${truth}\n`);
  for (const [engine, run] of Object.entries(runs)) {
    const output = run?.outputs.get(batchName(doc));
    if (output !== undefined) writeFileSync(path.join(at, `${doc.id}.${engine}.${engine === 'pdftotext' ? 'txt' : 'md'}`), output);
  }
  copyFileSync(doc.pdfPath, path.join(at, doc.file));
}

async function runBatch(label: string, docs: PublicDocument[], work: string, engines: EngineName[], structTree = false): Promise<{ runs: Partial<Record<EngineName, BatchRun>>; timing: Timing }> {
  const inputs = path.join(work, label, 'in');
  mkdirSync(inputs, { recursive: true });
  const files = docs.map((doc) => {
    const file = path.join(inputs, `${batchName(doc)}.pdf`);
    symlinkSync(doc.pdfPath, file);
    return file;
  });
  const runs: Partial<Record<EngineName, BatchRun>> = {};
  const timing: Timing = { batch: label, files: docs.length, pages: docs.reduce((n, d) => n + d.pages, 0), seconds: {}, cpuSeconds: {}, peakTreeMb: {}, peakProcessMb: {} };
  if (files.length === 0) return { runs, timing };
  // One after the other, never side by side: each has the machine to itself.
  for (const engine of engines) {
    const out = path.join(work, label, engine);
    process.stdout.write(`${label}: ${engine} on ${files.length} files … `);
    const run = engine === 'signet' ? await runSignet(files, out) : engine === 'opendataloader' ? await runOpendataloader(files, out, structTree ? ['--use-struct-tree'] : []) : await runPdftotext(files, out);
    runs[engine] = run;
    timing.seconds[engine] = run.seconds;
    if (run.cpuSeconds !== undefined) timing.cpuSeconds[engine] = run.cpuSeconds;
    if (run.memory && timing.peakTreeMb && timing.peakProcessMb) {
      timing.peakTreeMb[engine] = Math.round(run.memory.peakTreeBytes / 2 ** 20);
      timing.peakProcessMb[engine] = Math.round(run.memory.peakProcessBytes / 2 ** 20);
    }
    process.stdout.write(`${run.seconds.toFixed(1)} s wall, ${run.cpuSeconds?.toFixed(1) ?? '–'} s CPU${run.failures.length > 0 ? ` (${run.failures.length} failed)` : ''}\n`);
  }
  return { runs, timing };
}

export async function publicBenchmark(options: PublicOptions): Promise<void> {
  const malformed: string[] = [];
  const onMalformed = (set: string, problems: string[]) => {
    if (process.env.CI === 'true') throw new Error(`the corpus set ${set} is malformed:\n${problems.join('\n')}`);
    malformed.push(`set ${set} left out, its manifest is malformed: ${problems.join('; ')}`);
    process.stdout.write(`skipped: ${malformed.at(-1)}\n`);
  };
  let docs = publicDocuments({ ...(options.sets ? { sets: options.sets } : {}), onMalformed });
  if (options.only) docs = docs.filter((d) => options.only?.some((o) => d.id === o || `${d.set}/${d.id}` === o));
  if (docs.length === 0) throw new Error('no documents in the public corpus match (bench/docparse/public/<set>/manifest.json)');
  const skipped: Array<{ engine: EngineName; reason: string }> = [];
  const engines: EngineName[] = ['signet'];
  const odlMissing = opendataloaderMissing();
  if (odlMissing && process.env.CI === 'true') throw new Error(`opendataloader-pdf cannot run under CI: ${odlMissing}`);
  if (odlMissing) skipped.push({ engine: 'opendataloader', reason: odlMissing });
  else engines.push('opendataloader');
  const popplerMissing = pdftotextMissing();
  if (popplerMissing) skipped.push({ engine: 'pdftotext', reason: popplerMissing });
  else engines.push('pdftotext');
  // Scans are read through OCR: without tesseract their pages would score 0 for want of a program, not of the engine.
  const noOcr = tesseractMissing();
  if (noOcr && process.env.CI !== 'true' && docs.some((d) => d.class === 'scan')) {
    docs = docs.filter((d) => d.class !== 'scan');
    malformed.push(`the scans (class scan) — ${noOcr}`);
  }
  for (const s of skipped) process.stdout.write(`skipped: ${s.engine} — ${s.reason}\n`);

  const work = mkdtempSync(path.join(tmpdir(), 'signet-docbench-public-'));
  try {
    const textLayer = await runBatch('text layer', docs.filter((d) => d.class !== 'scan'), work, engines, options.structTree);
    const scans = await runBatch('scans', docs.filter((d) => d.class === 'scan'), work, engines, options.structTree);
    const runsOf = (doc: PublicDocument) => (doc.class === 'scan' ? scans.runs : textLayer.runs);
    const pages: PageResult[] = [];
    // Issue 41: the files that have another project's published truth are scored against it too, in the same run.
    const secondPages: PageResult[] = [];
    for (const doc of docs) {
      const runs = runsOf(doc);
      if (options.dump) dump(options.dump, doc, runs);
      const predicted = Object.fromEntries(engines.map((e) => [e, pagesOf(e, runs[e]?.outputs.get(batchName(doc)))])) as Record<EngineName, Map<number, string>>;
      for (const [page, truth] of doc.truthPages) {
        const scores: PageResult['scores'] = {};
        for (const engine of engines) scores[engine] = scorePage(truth, predicted[engine].get(page) ?? '', doc.scope, engine);
        pages.push({ set: doc.set, id: doc.id, page, class: doc.class, tex: doc.tex, scope: doc.scope, scores });
      }
      for (const [page, truth] of doc.secondTruthPages ?? []) {
        // A truth without pages is the whole document's: the pages parsed are joined before scoring.
        const of = (engine: EngineName) => (doc.second_truth?.whole ? [...predicted[engine].entries()].sort(([a], [b]) => a - b).map(([, md]) => md).join('\n\n') : (predicted[engine].get(page) ?? ''));
        const scores: PageResult['scores'] = {};
        for (const engine of engines) scores[engine] = scorePage(truth, of(engine), doc.scope, engine);
        secondPages.push({ set: doc.set, id: doc.id, page, class: doc.class, tex: doc.tex, scope: doc.scope, scores });
      }
    }
    const timings = [textLayer.timing, scans.timing].filter((t) => t.files > 0);
    const failures = Object.fromEntries(engines.map((e) => [e, [...(textLayer.runs[e]?.failures ?? []), ...(scans.runs[e]?.failures ?? [])]]));
    const commands = Object.fromEntries(engines.map((e) => [e, textLayer.runs[e]?.command ?? scans.runs[e]?.command ?? '']));
    const scoreMd = scoreTable(pages, engines);
    const secondMd = secondPages.length > 0 ? twoTruthTable(pages, secondPages, engines) : '';
    const timeMd = timingTable(timings, engines);
    const worst = `${worstPages(pages, 'nid')}\n\n${worstPages(pages, 'teds')}\n\n${worstPages(pages, 'mhs')}`;
    // Issue 41: "No running head, footer or page number as a heading anywhere in the corpus".
    const furniture = docs.flatMap((doc) => furnitureHeadings(textLayer.runs.signet?.outputs.get(batchName(doc)) ?? scans.runs.signet?.outputs.get(batchName(doc)) ?? '').map((h) => `- ${doc.set}/${doc.id}: "${h.text}" — ${h.why === 'repeated' ? `a heading on pages ${h.pages.join(', ')}` : `a page number as a heading (p. ${h.pages.join(', ')})`}`));
    const furnitureMd = `Headings in Signet's Markdown that come back on two pages or more of a document (digits as placeholders), or are only a page number — where a running head, footer or page number left as a heading would show (issue 41; bench/docparse/furniture-headings.ts; the corpus notes judge each): ${furniture.length}${furniture.length > 0 ? `\n\n${furniture.join('\n')}` : ''}`;
    const worstSecond = secondPages.length > 0 ? (['nid', 'teds', 'mhs'] as const).map((key) => worstPages(secondPages, key, 8, "docling's truth")).join('\n\n') : '';
    const failed = engines.flatMap((e) => (failures[e] ?? []).map((f) => `- ${e}: ${f}`)).join('\n');
    const skippedMd = [...skipped.map((s) => `- skipped: ${s.engine} — ${s.reason}`), ...malformed.map((m) => `- skipped: ${m}`)].join('\n');
    process.stdout.write(`\n${scoreMd}\n\n${secondMd}\n\n${timeMd}\n\n${worst}\n\n${worstSecond}\n\n${furnitureMd}\n${failed ? `\n${failed}\n` : ''}${skippedMd ? `\n${skippedMd}\n` : ''}`);

    const subset = options.sets !== undefined || options.only !== undefined;
    if (subset && !options.out) {
      process.stdout.write('\n(a run limited with --sets or --only writes no results file unless --out is given)\n');
      return;
    }
    const at = new Date().toISOString();
    const machine = `${cpus().length} cores, load average at the end ${loadavg().map((n) => n.toFixed(1)).join(', ')}`;
    const dir = path.join(import.meta.dirname, '..', 'results');
    const sets = [...new Set(docs.map((d) => d.set))];
    const withSecond = new Set(secondPages.map((p) => `${p.set}/${p.id}`));
    const summary = {
      overall: summarise(pages, engines),
      textLayer: summarise(pages.filter((p) => p.class !== 'scan'), engines),
      notTex: summarise(pages.filter((p) => !p.tex), engines),
      ...(secondPages.length > 0 ? { secondTruthFilesOwnTruth: summarise(pages.filter((p) => withSecond.has(`${p.set}/${p.id}`)), engines), secondTruth: summarise(secondPages, engines) } : {}),
    };
    writeFileSync(path.join(dir, 'docparse-public.json'), `${JSON.stringify({ at, node: process.version, machine, sets, commands, skipped, malformed, failures, timings, summary, pages, secondPages }, null, 1)}\n`);
    const commandLines = engines.map((e) => `- ${e}: \`${commands[e]}\``).join('\n');
    const md = [
      `Run ${at} (Node ${process.version}; ${machine}). Sets: ${sets.join(', ')}; ${docs.length} files, ${pages.length} pages with truth.`,
      'Every page scored with the same functions (bench/docparse/metrics.ts, opendataloader-bench\'s NID / TEDS / MHS); a figure is the mean over the pages whose truth defines it (NID and MHS: whole-page truth; TEDS: pages whose truth has a table). pdftotext writes plain text: only its NID is given.',
      scoreMd,
      ...(secondMd ? ["The files that have docling's own published ground truth (docling's `tests/data/*/groundtruth/` JSON, rendered page by page by bench/docparse/docling-truth.ts, uncorrected; `second_truth` in bench/docparse/public/docling/manifest.json) scored against it and against this corpus's truth, in the same run: two columns per measure and program. Where they disagree the corpus notes say which is right on that page.", secondMd] : []),
      'Wall time of each program over the batch, its process start included (one process over all files; pdftotext one process per file); the CPU time of every process it ran (user + system of the command and all its descendants — Signet\'s reader processes, opendataloader\'s JVM, poppler\'s and tesseract\'s runs — each counted once reaped; the figure less moved by other work on a shared machine) with pages per CPU-second over the batch; and the peak resident memory, sampled every 100 ms, of all its processes together and of the largest one:',
      timeMd,
      commandLines,
      worst,
      ...(worstSecond ? [worstSecond] : []),
      furnitureMd,
      ...(failed ? [failed] : []),
      ...(skippedMd ? [skippedMd] : []),
    ].join('\n\n');
    writeFileSync(path.join(dir, 'docparse-public.md'), `${md}\n`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
