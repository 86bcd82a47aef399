// `signet parse FILE.pdf …`: the parsing task's engine (documents/parse.ts) on local files, like
// `docling FILE` or `marker_single`: no server, no database, no data dir, no SIGNET_* settings.
// Each file gets NAME.md, NAME.json and NAME/pictures/ (in --out, else beside it; --format adds
// NAME.html and NAME.txt or chooses among them), written through a
// staging folder and renamed into place, so a file that fails leaves nothing behind; the others
// still run. stderr: a progress line per file on a terminal, and a failed file's one-line reason.
// stdout: the summary, one JSON value with --json or when stdout is not a terminal.
import path from 'node:path';
import { Option, type Command } from 'commander';
import type { FurnitureMode } from '../documents/document.ts';
import type { OcrLanguages, OcrMode } from '../documents/pdf/ocr-page.ts';
import { cellText, formatTable, UsageError, wantsJson } from './output.ts';
import { fail } from './exit.ts';
import { checkOutFolder, oneLine, plural, ProgressLine, readInput, resultName } from './local-files.ts';
import { stageResults, type Staged } from './parse-output.ts';

export type ParseFormat = 'md' | 'json' | 'html' | 'text';

type ParseOptions = { out?: string; format: string; ocr: OcrMode; lang?: string; json?: boolean; pictures: boolean; threads?: string; furniture: FurnitureMode; remote?: boolean };

/** What the summary says of one file. */
export type FileSummary =
  | { input: string; outputs: string[]; pictures: string[]; pages: number; ocr_pages: number; seconds: number; notes: string[] }
  | { input: string; error: string };
type Parsed = Extract<FileSummary, { outputs: string[] }>;

const FORMATS: readonly ParseFormat[] = ['md', 'json', 'html', 'text'];

/** The file each format writes: NAME.md, NAME.json, NAME.html, NAME.txt. */
const EXTENSION: Record<ParseFormat, string> = { md: 'md', json: 'json', html: 'html', text: 'txt' };

/** `--format md,json,html,text` → the formats, or a usage error. */
export function parseFormats(value: string): ParseFormat[] {
  const names = value.split(',').map((name) => name.trim().toLowerCase());
  if (names.length === 0 || names.some((name) => !FORMATS.includes(name as ParseFormat))) {
    throw new UsageError(`--format takes md, json, html and text, one or several joined by commas (not "${value}")`);
  }
  return FORMATS.filter((format) => names.includes(format));
}

/** `--lang eng+chi_sim` checked against the languages tesseract has data for. */
export async function parseLanguages(value: string, ocr: OcrMode): Promise<string[]> {
  if (ocr === 'off') throw new UsageError('--lang chooses the languages OCR reads, but --ocr off turns OCR off; leave one of them out');
  const names = value.split('+').map((name) => name.trim());
  const malformed = names.find((name) => !/^[A-Za-z0-9_]+$/.test(name));
  if (malformed !== undefined) throw new UsageError(`--lang takes tesseract language names joined by +, e.g. eng+chi_sim (not "${value}")`);
  const { tesseractLanguages } = await import('../documents/ocr/tesseract.ts');
  const installed = await tesseractLanguages();
  if (installed === undefined) throw new UsageError(`--lang needs tesseract, which is not installed; install it (Debian: apt install tesseract-ocr tesseract-ocr-eng) or leave --lang out`);
  const missing = names.filter((name) => !installed.includes(name));
  if (missing.length > 0) {
    const debian = missing.map((name) => `tesseract-ocr-${name.toLowerCase().replace(/_/g, '-')}`).join(' ');
    throw new UsageError(
      `--lang: tesseract has no data for ${missing.map((name) => `"${name}"`).join(', ')} (installed: ${installed.filter((name) => name !== 'osd').join(', ') || 'none'}); install it (Debian: apt install ${debian}) or choose from those`,
    );
  }
  return names;
}

/** The engine's reasons speak to someone who uploaded the file; here it is a file on their disk. */
const forLocalFile = (message: string) => message.replace(/; upload a PDF document\.$/, '.').replace(/upload it again/g, 'parse it again');

type RunFileOptions = { out?: string; formats: ParseFormat[]; ocrMode: OcrMode; ocrLanguages: OcrLanguages; pictures: boolean; signal: AbortSignal; threads: number; furniture: FurnitureMode };

/** Parses one input and writes its results; throws with a one-line reason when it fails. */
async function parseFile(input: string, options: RunFileOptions, progress: ProgressLine): Promise<Parsed> {
  const began = performance.now();
  const data = await readInput(input);
  const name = resultName(input);
  const outDir = options.out ?? path.dirname(input);
  progress.show(`${input}: opening`);
  const { runDocparse } = await import('../documents/parse.ts');
  let staged: Staged | undefined;
  try {
    staged = stageResults(outDir, name);
    const target = staged;
    const result = await runDocparse(new Uint8Array(data.buffer, data.byteOffset, data.byteLength), {
      name,
      pictureDir: name,
      signal: options.signal,
      ocrMode: options.ocrMode,
      ocrLanguages: options.ocrLanguages,
      threads: options.threads,
      furniture: options.furniture,
      // Without pictures nothing is rendered: a picture's caption stays in the text.
      ...(options.pictures ? { onPicture: (file: string, png: Uint8Array) => target.writePicture(file, png) } : {}),
      onProgress: (done, total) => progress.show(`${input}: ${done}/${total} pages`),
    });
    const { document } = result;
    // Only the formats asked for are made (each is made when read).
    const contents: Record<ParseFormat, () => string> = { md: () => result.markdown, json: () => result.json, html: () => result.html, text: () => result.text };
    for (const format of options.formats) await staged.writeFile(`${name}.${EXTENSION[format]}`, contents[format]());
    const { outputs, pictures } = await staged.commit();
    staged = undefined;
    const seconds = Math.round((performance.now() - began) / 100) / 10;
    return { input, outputs, pictures, pages: document.pages.length, ocr_pages: document.pages.filter((page) => page.textSource === 'ocr').length, seconds, notes: document.notes ?? [] };
  } catch (error) {
    if (options.signal.aborted) throw options.signal.reason;
    throw new Error(forLocalFile(error instanceof Error ? error.message : String(error)));
  } finally {
    await staged?.discard();
  }
}

/** A parsed file's last progress line on a terminal; its outputs are in the summary. */
const doneLine = (result: Parsed) => `${result.input}: ${plural(result.pages, 'page')}${result.ocr_pages > 0 ? ` (${result.ocr_pages} by OCR)` : ''} in ${result.seconds.toFixed(1)} s`;

/** What a file's row of the terminal's summary says it produced. */
const producedText = (result: Parsed) => [...result.outputs, ...(result.pictures.length > 0 ? [`${plural(result.pictures.length, 'picture')} in ${path.dirname(result.pictures[0]!)}`] : [])].join(', ');

/** --threads, else SIGNET_PARSE_THREADS, else the default (the cores but one, 1 to 4): validated as the setting is. */
export async function threadsOf(option: string | undefined): Promise<number> {
  const { DEFAULT_LOCAL_PARSE_THREADS, parseThreadsFrom } = await import('../config/settings.ts');
  try {
    return parseThreadsFrom(option === undefined ? process.env : { SIGNET_PARSE_THREADS: option }, DEFAULT_LOCAL_PARSE_THREADS);
  } catch (error) {
    throw new Error(option === undefined ? (error as Error).message : `--threads: ${(error as Error).message.replace(/^SIGNET_PARSE_THREADS: /, '')}`);
  }
}

/** issue 43: `--remote` — the files go to the server of `signet login`; results are written as here. */
async function remoteParseCommand(inputs: string[], o: ParseOptions): Promise<void> {
  let formats: ParseFormat[];
  try {
    formats = parseFormats(o.format);
    if (o.out !== undefined) await checkOutFolder(o.out);
    if (o.threads !== undefined) throw new UsageError('--threads is for parsing on this machine; leave it out with --remote');
    if (o.lang !== undefined && !/^[A-Za-z0-9_]+(\+[A-Za-z0-9_]+)*$/.test(o.lang)) throw new UsageError(`--lang takes tesseract language names joined by +, e.g. eng+chi_sim (not "${o.lang}")`);
  } catch (error) {
    fail(error instanceof Error ? error.message : String(error), 2);
  }
  const { parseRemoteFiles } = await import('./remote/parse-remote.ts');
  const results = await parseRemoteFiles(inputs, { out: o.out, formats, ocr: o.ocr, ...(o.lang === undefined ? {} : { lang: o.lang }) });
  const failed = results.filter((r) => 'error' in r).length;
  const summary = { files: results, parsed: results.length - failed, failed };
  if (wantsJson(o)) process.stdout.write(`${JSON.stringify(summary)}\n`);
  else {
    process.stdout.write(`${formatTable(results.map((r) => ({ ...r })), [
      { header: 'input', value: (row) => row.input },
      { header: 'pages', value: (row) => row.pages },
      { header: 'seconds', value: (row) => row.seconds },
      { header: 'result', value: (row) => cellText('error' in row ? `failed: ${String(row.error)}` : row.outputs) },
    ])}\n`);
  }
  process.exitCode = failed > 0 ? 1 : 0;
}

async function parseCommand(inputs: string[], o: ParseOptions): Promise<void> {
  if (o.remote) return remoteParseCommand(inputs, o);
  let formats: ParseFormat[];
  let ocrLanguages: OcrLanguages = 'auto';
  let threads: number;
  try {
    formats = parseFormats(o.format);
    threads = await threadsOf(o.threads);
    if (o.out !== undefined) await checkOutFolder(o.out);
    if (o.lang !== undefined) ocrLanguages = await parseLanguages(o.lang, o.ocr);
  } catch (error) {
    // A wrong argument: exit 2, nothing read or written.
    fail(error instanceof Error ? error.message : String(error), 2);
  }
  if (o.ocr === 'force' && o.lang === undefined) {
    const { isInstalled } = await import('../documents/limited.ts');
    if (!(await isInstalled('tesseract'))) fail('--ocr force needs tesseract, which is not installed; install it (Debian: apt install tesseract-ocr tesseract-ocr-eng) or use --ocr auto', 2);
  }

  const controller = new AbortController();
  const interrupt = () => controller.abort(new Error('interrupted'));
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);

  const progress = new ProgressLine();
  const results: FileSummary[] = [];
  // Two inputs of one name would write the same results: the second fails instead of overwriting.
  const claimed = new Map<string, string>();
  const clash = inputs.map((input) => {
    const key = path.resolve(o.out ?? path.dirname(input), resultName(input));
    const earlier = claimed.get(key);
    if (earlier === undefined) claimed.set(key, input);
    return earlier;
  });
  // Several files are parsed at once when there are more than one, sharing the reader processes
  // --threads allows (one file takes them all; many files take one each), so a batch of short
  // files keeps the cores busy as a long document does (issue 31, item 4). One file more than
  // readers runs at once: this process lays one file out while the readers read the others, a file
  // waiting for a reader another gave back rather than starting a process of its own.
  const together = Math.max(1, Math.min(threads + 1, inputs.length));
  const perFile = Math.max(1, Math.floor(threads / together));
  const { killSpareReader, limitReadersInUse } = await import('../documents/pdf/reader-client.ts');
  limitReadersInUse(threads);
  const done: Array<FileSummary | undefined> = [];
  // Files finish in any order when several run at once; what is said of each is said in input order.
  let said = 0;
  const sayInOrder = () => {
    for (; said < inputs.length && done[said] !== undefined; said += 1) {
      const result = done[said] as FileSummary;
      if ('error' in result) {
        progress.clear();
        process.stderr.write(`signet: ${result.input}: ${result.error}\n`);
        continue;
      }
      progress.end(doneLine(result));
      if (process.stderr.isTTY) for (const note of result.notes) process.stderr.write(`  note: ${note}\n`);
    }
  };
  let next = 0;
  const lane = async () => {
    while (next < inputs.length && !controller.signal.aborted) {
      const index = next++;
      const input = inputs[index] as string;
      try {
        const earlier = clash[index];
        if (earlier !== undefined) throw new Error(`its results would overwrite those of ${earlier} (same name, same folder); parse it on its own with another --out`);
        // The plain text links to no picture: with --format text alone, none is cut.
        const pictures = o.pictures && formats.some((format) => format !== 'text');
        done[index] = await parseFile(input, { out: o.out, formats, ocrMode: o.ocr, ocrLanguages, pictures, signal: controller.signal, threads: perFile, furniture: o.furniture }, progress);
      } catch (error) {
        if (controller.signal.aborted) return;
        done[index] = { input, error: oneLine(error instanceof Error ? error.message : String(error)) };
      }
      sayInOrder();
    }
  };
  await Promise.all(Array.from({ length: together }, lane));
  results.push(...done.filter((r): r is FileSummary => r !== undefined));
  await killSpareReader();
  if (controller.signal.aborted) {
    progress.clear();
    fail(`interrupted; ${results.filter((r) => 'outputs' in r).length} of ${inputs.length} files were parsed; nothing of the file in progress was written`, 130);
  }

  const failed = results.filter((r) => 'error' in r).length;
  const summary = { files: results, parsed: results.length - failed, failed };
  if (wantsJson(o)) process.stdout.write(`${JSON.stringify(summary)}\n`);
  else {
    const rows = results.map((r) => ({ input: r.input, pages: 'pages' in r ? r.pages : undefined, seconds: 'seconds' in r ? r.seconds : undefined, result: 'error' in r ? `failed: ${r.error}` : producedText(r) }));
    process.stdout.write(`${formatTable(rows, [
      { header: 'input', value: (row) => row.input },
      { header: 'pages', value: (row) => row.pages },
      { header: 'seconds', value: (row) => row.seconds },
      { header: 'result', value: (row) => cellText(row.result) },
    ])}\n`);
  }
  process.exitCode = failed > 0 ? 1 : 0;
}

export function registerParseCommand(program: Command): void {
  program
    .command('parse')
    .description('parse PDF files on this machine into Markdown, docling-style JSON, HTML or plain text (no server, no database)')
    .argument('<files...>', 'the PDF files')
    .option('--out <dir>', 'where NAME.md, NAME.json (NAME.html, NAME.txt) and NAME/pictures/ go; created when missing (default: beside each input)')
    .option('--format <formats>', 'md, json, html, text, or several joined by commas', 'md,json')
    .addOption(new Option('--ocr <mode>', 'auto: OCR the pages without a text layer; off: never; force: every page').choices(['auto', 'off', 'force']).default('auto'))
    .option('--lang <languages>', 'OCR languages, tesseract names joined by + (e.g. eng+chi_sim); default: English, and Chinese too when English reads poorly')
    .addOption(new Option('--furniture <mode>', 'page headers, footers and page numbers in the Markdown, HTML and text: drop (left out; the JSON keeps them under furniture) or keep').choices(['drop', 'keep']).default('drop'))
    .option('--no-pictures', 'do not cut the pictures out as PNG files (faster; their captions stay in the text)')
    .option('--threads <n>', 'reader processes to use: a long file\'s pages, or several files, side by side (default: SIGNET_PARSE_THREADS, else the cores but one, 1 to 4)')
    .option('--remote', 'parse on the server of signet login (POST /v1/convert/file, as the signed-in person); results written here as usual')
    .option('--json', 'print the summary as JSON')
    .addHelpText('after', `\nExample:\n  $ npx signet parse report.pdf scan.pdf --out parsed/    # parsed/report.md, parsed/report.json, parsed/report/pictures/\n  $ npx signet parse report.pdf --remote                  # on the server of signet login`)
    .action((files: string[], o: ParseOptions) => parseCommand(files, o));
}
