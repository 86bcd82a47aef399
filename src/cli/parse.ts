// `signet parse FILE.pdf …`: the parsing task's engine (documents/parse.ts) on local files, like
// `docling FILE` or `marker_single`: no server, no database, no data dir, no SIGNET_* settings.
// Each file gets NAME.md, NAME.json and NAME/pictures/ (in --out, else beside it), written through a
// staging folder and renamed into place, so a file that fails leaves nothing behind; the others
// still run. stderr: a progress line per file on a terminal, and a failed file's one-line reason.
// stdout: the summary, one JSON value with --json or when stdout is not a terminal.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Option, type Command } from 'commander';
import type { OcrLanguages, OcrMode } from '../documents/pdf/ocr-page.ts';
import { cellText, formatTable, UsageError, wantsJson } from './output.ts';
import { fail } from './run.ts';
import { checkOutFolder, plural, ProgressLine, readFailure, resultName, runEachInput } from './local-files.ts';
import { stageResults, type Staged } from './parse-output.ts';

export type ParseFormat = 'md' | 'json';

type ParseOptions = { out?: string; format: string; ocr: OcrMode; lang?: string; json?: boolean; pictures: boolean };

/** What the summary says of one file. */
export type FileSummary =
  | { input: string; outputs: string[]; pictures: string[]; pages: number; ocr_pages: number; seconds: number; notes: string[] }
  | { input: string; error: string };
type Parsed = Extract<FileSummary, { outputs: string[] }>;

const FORMATS: readonly ParseFormat[] = ['md', 'json'];

/** `--format md,json` → the formats, or a usage error. */
export function parseFormats(value: string): ParseFormat[] {
  const names = value.split(',').map((name) => name.trim().toLowerCase());
  if (names.length === 0 || names.some((name) => !FORMATS.includes(name as ParseFormat))) {
    throw new UsageError(`--format takes md, json or md,json (not "${value}")`);
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

type RunFileOptions = { out?: string; formats: ParseFormat[]; ocrMode: OcrMode; ocrLanguages: OcrLanguages; pictures: boolean; signal: AbortSignal };

/** Parses one input and writes its results; throws with a one-line reason when it fails. */
async function parseFile(input: string, options: RunFileOptions, progress: ProgressLine): Promise<Parsed> {
  const began = performance.now();
  let data: Buffer;
  try {
    data = await readFile(input);
  } catch (error) {
    throw new Error(readFailure(error));
  }
  const name = resultName(input);
  const outDir = options.out ?? path.dirname(input);
  progress.show(`${input}: opening`);
  const { runDocparse } = await import('../documents/parse.ts');
  let staged: Staged | undefined;
  try {
    staged = stageResults(outDir, name);
    const target = staged;
    const { markdown, json, document } = await runDocparse(new Uint8Array(data.buffer, data.byteOffset, data.byteLength), {
      name,
      pictureDir: name,
      signal: options.signal,
      ocrMode: options.ocrMode,
      ocrLanguages: options.ocrLanguages,
      // Without pictures nothing is rendered: a picture's caption stays in the text.
      ...(options.pictures ? { onPicture: (file: string, png: Uint8Array) => target.writePicture(file, png) } : {}),
      onProgress: (done, total) => progress.show(`${input}: ${done}/${total} pages`),
    });
    if (options.formats.includes('md')) await staged.writeFile(`${name}.md`, markdown);
    if (options.formats.includes('json')) await staged.writeFile(`${name}.json`, json);
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

async function parseCommand(inputs: string[], o: ParseOptions): Promise<void> {
  let formats: ParseFormat[];
  let ocrLanguages: OcrLanguages = 'auto';
  try {
    formats = parseFormats(o.format);
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

  const results: FileSummary[] = await runEachInput(
    inputs,
    { out: o.out, verb: 'parse', past: 'parsed' },
    (input, signal, progress) => parseFile(input, { out: o.out, formats, ocrMode: o.ocr, ocrLanguages, pictures: o.pictures, signal }, progress),
    doneLine,
  );

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
    .description('parse PDF files on this machine into Markdown and docling-style JSON (no server, no database)')
    .argument('<files...>', 'the PDF files')
    .option('--out <dir>', 'where NAME.md, NAME.json and NAME/pictures/ go; created when missing (default: beside each input)')
    .option('--format <formats>', 'md, json or md,json', 'md,json')
    .addOption(new Option('--ocr <mode>', 'auto: OCR the pages without a text layer; off: never; force: every page').choices(['auto', 'off', 'force']).default('auto'))
    .option('--lang <languages>', 'OCR languages, tesseract names joined by + (e.g. eng+chi_sim); default: English, and Chinese too when English reads poorly')
    .option('--no-pictures', 'do not cut the pictures out as PNG files (faster; their captions stay in the text)')
    .option('--json', 'print the summary as JSON')
    .action((files: string[], o: ParseOptions) => parseCommand(files, o));
}
