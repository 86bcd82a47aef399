// `signet translate FILE.pdf … --to LANG`: the translation task's engine on local files, like
// `pdf2zh file.pdf -lo es`: no server, no database, no data dir. Each file is parsed, translated
// by the chosen engine (Apertium here on the machine, or a LibreTranslate / OpenAI-compatible
// server named by SIGNET_TRANSLATE_URL), set on its own pages, and checked as a reader sees it.
// Writes NAME.LANG.pdf and NAME.LANG.bilingual.pdf (in --out, else beside the input), each through a
// temporary file renamed into place, so a file that fails leaves nothing half-written; the others
// still run. stderr: a progress line per file on a terminal, and a failed file's one-line reason.
// stdout: the summary with each file's layout check, one JSON value with --json or off a terminal.
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Option, type Command } from 'commander';
import { parseTranslateSettings, readEnvironment, SettingsError, TRANSLATE_ENGINES } from '../config/settings.ts';
import type { ParsedDocument } from '../documents/document.ts';
import { parseGlossary, type Glossary } from '../documents/translate/glossary.ts';
import type { PageCheck } from '../documents/translate/overlay/check.ts';
import type { Translator } from '../documents/translate/translator.ts';
import { checkOutFolder, oneLine, plural, ProgressLine, readFailure, readInput, resultName, runEachInput } from './local-files.ts';
import { cellText, formatTable, UsageError, wantsJson } from './output.ts';
import { fail } from './run.ts';

type TranslateOptions = { to: string; from?: string; engine?: string; glossary?: string; out?: string; json?: boolean; remote?: boolean };

/** A file's layout check, added up over its pages (overlay/check.ts says what each number means). */
export type CheckTotals = {
  overlapping_words: number;
  overlap_places: number;
  gutter_words: number;
  words_on_drawings: number;
  below_margin: number;
  runs_below_70_percent: number;
  missing_glyphs: number;
  smallest_size?: number;
  source_smallest_size?: number;
  /** Pages with something to look at, and what. */
  pages_to_look_at: Array<{ page: number; problems: string[] }>;
};

export type TranslateSummary =
  | { input: string; outputs: string[]; from: string; to: string; engine: string; pages: number; seconds: number; check: CheckTotals | { skipped: string }; notes: string[] }
  | { input: string; error: string };
type Translated = Extract<TranslateSummary, { outputs: string[] }>;

const LANGUAGE = /^[a-z]{2,3}(-[A-Za-z]{2,4})?$/;

function checkLanguage(option: string, value: string): string {
  if (!LANGUAGE.test(value)) throw new UsageError(`${option} takes a language code such as en, es or zh (not "${value}")`);
  return value;
}

async function readGlossary(file: string): Promise<Glossary> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new UsageError(`--glossary ${file}: ${readFailure(error)}`);
  }
  try {
    return parseGlossary(text);
  } catch (error) {
    throw new UsageError(`--glossary ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** The engine: --engine, else SIGNET_TRANSLATE_ENGINE, else Apertium; its address, model and key from SIGNET_TRANSLATE_*. */
export async function chooseTranslator(engine: string | undefined): Promise<Translator> {
  const settings = parseTranslateSettings(readEnvironment(process.env, process.cwd()));
  const chosen = (engine ?? settings.engine ?? 'apertium') as (typeof TRANSLATE_ENGINES)[number];
  const { createTranslator } = await import('../documents/translate/create.ts');
  try {
    return createTranslator({ ...settings, engine: chosen });
  } catch (error) {
    throw new UsageError(`--engine ${chosen}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** Writes `data` to `file` through a temporary file beside it, renamed into place. */
async function writeWhole(file: string, data: Uint8Array): Promise<void> {
  const partial = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.partial`);
  try {
    await writeFile(partial, data);
    await rename(partial, file);
  } finally {
    await rm(partial, { force: true });
  }
}

type RunFileOptions = { out?: string; to: string; from?: string; translator: Translator; glossary?: Glossary; signal: AbortSignal };

async function translateFile(input: string, options: RunFileOptions, progress: ProgressLine): Promise<Translated> {
  const began = performance.now();
  const buffer = await readInput(input);
  const data = new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  const { signal } = options;
  progress.show(`${input}: reading`);
  const { extractDocument } = await import('../documents/pdf/extract.ts');
  const { splitColumnSpanningBlocks } = await import('../documents/translate/overlay/columns.ts');
  const extracted = await extractDocument(data, { signal, onProgress: (done, total) => progress.show(`${input}: reading ${done}/${total} pages`) });
  const document = await splitColumnSpanningBlocks(data, extracted, signal).catch((error: unknown) => {
    if (signal.aborted) throw error;
    return extracted;
  });
  const { guessSourceLanguage } = await import('../documents/translate/source-language.ts');
  const from = options.from ?? guessSourceLanguage(document);
  if (from === undefined) throw new Error('the language of its text could not be told (too little text, or a language not guessed); give it with --from');
  if (from === options.to) throw new Error(`it is written in ${from} already (--to ${options.to}); give --from if that guess is wrong`);
  const { translateDocument } = await import('../documents/translate/translate-document.ts');
  const translated = await translateDocument(document, options.translator, { source: from, target: options.to }, {
    signal,
    ...(options.glossary ? { glossary: options.glossary } : {}),
    onProgress: (done, total) => progress.show(`${input}: translating ${done}/${total} pages`),
  });
  progress.show(`${input}: setting the translation on the pages`);
  const { renderOverlayPdf } = await import('../documents/translate/overlay/draw.ts');
  const { renderBilingualPdf } = await import('../documents/translate/bilingual.ts');
  const translatedPdf = await renderOverlayPdf(data, document, translated, { signal });
  const bilingual = await renderBilingualPdf(data, translatedPdf);
  progress.show(`${input}: checking the layout`);
  const check = await layoutCheck(data, translatedPdf, document, translated, signal);
  const outDir = options.out ?? path.dirname(input);
  await mkdir(outDir, { recursive: true }).catch((error: unknown) => {
    throw new Error(`cannot create the output folder ${outDir} (${readFailure(error)}); choose another --out`);
  });
  const name = resultName(input);
  const outputs = [path.join(outDir, `${name}.${options.to}.pdf`), path.join(outDir, `${name}.${options.to}.bilingual.pdf`)];
  await writeWhole(outputs[0]!, translatedPdf);
  await writeWhole(outputs[1]!, bilingual);
  const { missingGlyphsNote } = await import('../documents/translate/overlay/coverage.ts');
  const glyphs = missingGlyphsNote(translated);
  const notes = [...(extracted.notes ?? []), ...(translated.notes ?? []), ...(glyphs ? [glyphs] : [])];
  const seconds = Math.round((performance.now() - began) / 100) / 10;
  return { input, outputs, from, to: options.to, engine: options.translator.engine, pages: document.pages.length, seconds, check, notes };
}

/** The reader's check of translated.pdf (overlay/check.ts), added up; without poppler it is skipped, saying so. */
async function layoutCheck(source: Uint8Array, translatedPdf: Uint8Array, document: ParsedDocument, translated: ParsedDocument, signal: AbortSignal): Promise<CheckTotals | { skipped: string }> {
  const { checkTranslatedPdf } = await import('../documents/translate/overlay/check-pdf.ts');
  const { drawnPages } = await import('../documents/translate/overlay/check-drawn.ts');
  const { describePage } = await import('../documents/translate/overlay/check.ts');
  let checks: PageCheck[];
  try {
    const drawn = { source: await drawnPages(source), translated: await drawnPages(translatedPdf) };
    checks = await checkTranslatedPdf(source, translatedPdf, { document, translated, drawn, signal });
  } catch (error) {
    if (signal.aborted) throw error;
    const missing = (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
    return { skipped: missing ? 'pdftotext is not installed (Debian: apt install poppler-utils)' : oneLine(error instanceof Error ? error.message : String(error)) };
  }
  const sum = (f: (c: PageCheck) => number) => checks.reduce((n, c) => n + f(c), 0);
  const sizes = (f: (c: PageCheck) => number | undefined) => checks.map(f).filter((s): s is number => s !== undefined);
  const smallest = sizes((c) => c.smallestSize);
  const sourceSmallest = sizes((c) => c.sourceSmallestSize);
  return {
    overlapping_words: sum((c) => c.overlappingWords),
    overlap_places: sum((c) => c.overlapPlaces),
    gutter_words: sum((c) => c.gutterCrossings),
    words_on_drawings: sum((c) => c.intoDrawings),
    below_margin: sum((c) => c.belowMargin),
    runs_below_70_percent: sum((c) => c.belowFloor),
    missing_glyphs: sum((c) => c.missingGlyphs),
    ...(smallest.length > 0 ? { smallest_size: Math.round(Math.min(...smallest) * 10) / 10 } : {}),
    ...(sourceSmallest.length > 0 ? { source_smallest_size: Math.round(Math.min(...sourceSmallest) * 10) / 10 } : {}),
    pages_to_look_at: checks
      .map((c) => ({ page: c.pageNo, problems: [...describePage(c), ...(c.belowFloor > 0 ? [plural(c.belowFloor, 'run') + ' below 70 % of the source size'] : []), ...(c.missingGlyphs > 0 ? [plural(c.missingGlyphs, 'missing glyph')] : [])] }))
      .filter((p) => p.problems.length > 0),
  };
}

/** The layout check in one cell of the terminal's table. */
function checkText(check: Translated['check']): string {
  if ('skipped' in check) return `not checked: ${check.skipped}`;
  const problems = [
    check.overlapping_words > 0 ? `${plural(check.overlapping_words, 'word')} over text` : '',
    check.gutter_words > 0 ? `${plural(check.gutter_words, 'word')} in a gutter` : '',
    check.words_on_drawings > 0 ? `${plural(check.words_on_drawings, 'word')} on drawings` : '',
    check.below_margin > 0 ? `${plural(check.below_margin, 'word')} below the margin` : '',
    check.runs_below_70_percent > 0 ? `${plural(check.runs_below_70_percent, 'run')} below 70 %` : '',
    check.missing_glyphs > 0 ? plural(check.missing_glyphs, 'missing glyph') : '',
  ].filter(Boolean);
  return problems.length === 0 ? 'clean' : `${problems.join(', ')} (pages ${check.pages_to_look_at.map((p) => p.page).join(', ')})`;
}

async function translateCommand(inputs: string[], o: TranslateOptions): Promise<void> {
  let translator: Translator;
  let glossary: Glossary | undefined;
  let to: string;
  let from: string | undefined;
  try {
    to = checkLanguage('--to', o.to);
    from = o.from === undefined ? undefined : checkLanguage('--from', o.from);
    if (o.out !== undefined) await checkOutFolder(o.out);
    if (o.glossary !== undefined) glossary = await readGlossary(o.glossary);
    if (o.remote && o.engine !== undefined) throw new UsageError('--engine chooses the engine on this machine; the server uses its own with --remote');
    if (!o.remote) translator = await chooseTranslator(o.engine);
  } catch (error) {
    // A wrong argument or setting: nothing read or written.
    fail(error instanceof Error ? error.message : String(error), error instanceof SettingsError ? 78 : 2);
  }
  // issue 43: --remote — a translation task on the server of `signet login`, its files written here.
  const { translateRemoteFiles } = o.remote ? await import('./remote/translate-remote.ts') : { translateRemoteFiles: undefined };
  const results: TranslateSummary[] = translateRemoteFiles
    ? await translateRemoteFiles(inputs, { out: o.out, to, ...(from === undefined ? {} : { from }), ...(glossary === undefined ? {} : { glossary: JSON.stringify(glossary) }) })
    : await runEachInput(
    inputs,
    { out: o.out, verb: 'translate', past: 'translated' },
    (input, signal, progress) => translateFile(input, { out: o.out, to, from, translator: translator!, glossary, signal }, progress),
    (result) => `${result.input}: ${plural(result.pages, 'page')} ${result.from}→${result.to} in ${result.seconds.toFixed(1)} s`,
  );
  const failed = results.filter((r) => 'error' in r).length;
  const summary = { files: results, translated: results.length - failed, failed };
  if (wantsJson(o)) process.stdout.write(`${JSON.stringify(summary)}\n`);
  else {
    process.stdout.write(`${formatTable(results.map((r) => ({ ...r })), [
      { header: 'input', value: (row) => row.input },
      { header: 'pages', value: (row) => row.pages },
      { header: 'result', value: (row) => ('error' in row ? `failed: ${String(row.error)}` : cellText(row.outputs)) },
      { header: 'layout check', value: (row) => ('check' in row ? checkText(row.check as Translated['check']) : undefined) },
    ])}\n`);
  }
  process.exitCode = failed > 0 ? 1 : 0;
}

export function registerTranslateCommand(program: Command): void {
  program
    .command('translate')
    .description('translate PDF files on this machine, keeping their layout (no server, no database)')
    .argument('<files...>', 'the PDF files')
    .requiredOption('--to <lang>', 'the language to translate into (en, es, zh, …)')
    .option('--from <lang>', 'the language the files are written in (default: told from their text)')
    .addOption(new Option('--engine <engine>', 'the translation engine (default: SIGNET_TRANSLATE_ENGINE, else apertium); libretranslate and openai take SIGNET_TRANSLATE_URL, openai SIGNET_TRANSLATE_MODEL').choices([...TRANSLATE_ENGINES]))
    .option('--glossary <file>', 'a JSON file of "term": "translation" pairs kept in every translation')
    .option('--out <dir>', 'where NAME.LANG.pdf and NAME.LANG.bilingual.pdf go; created when missing (default: beside each input)')
    .option('--remote', 'translate on the server of signet login (a translation task, as the signed-in person); results written here as usual')
    .option('--json', 'print the summary as JSON')
    .addHelpText('after', `\nExample:\n  $ npx signet translate report.pdf --to es --engine apertium --out translated/    # translated/report.es.pdf, translated/report.es.bilingual.pdf`)
    .action((files: string[], o: TranslateOptions) => translateCommand(files, o));
}
