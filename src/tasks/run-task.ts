// Running one claimed task: read the source PDF, run its engine, store the results. The worker loop
// (src/worker) owns leases and retries; this file owns what a task produces.
import type { Readable } from 'node:stream';
import type { ObjectStore } from '../storage/object-store.ts';
import { toHtml } from '../documents/export/html.ts';
import { toMarkdown } from '../documents/export/markdown.ts';
import { withoutFurniture } from '../documents/document.ts';
import { runDocparse } from '../documents/parse.ts';
import type { OnProgress, ParsedDocument } from '../documents/document.ts';
import type { OcrEngine } from '../documents/ocr/ocr.ts';
import { extractDocument } from '../documents/pdf/extract.ts';
import type { OcrLanguages, OcrMode } from '../documents/pdf/ocr-page.ts';
import { guessSourceLanguage } from '../documents/translate/source-language.ts';
import { translateDocument } from '../documents/translate/translate-document.ts';
import { renderBilingualPdf } from '../documents/translate/bilingual.ts';
import { missingGlyphsNote } from '../documents/translate/overlay/coverage.ts';
import { checkTranslatedPdf, summarise } from '../documents/translate/overlay/check-pdf.ts';
import { describePage } from '../documents/translate/overlay/check.ts';
import { splitColumnSpanningBlocks } from '../documents/translate/overlay/columns.ts';
import { renderOverlayPdf } from '../documents/translate/overlay/draw.ts';
import { TextRemovalError } from '../documents/translate/overlay/remove-text.ts';
import type { Translator } from '../documents/translate/translator.ts';
import { LAYOUT_CHECK, NO_ENGINE_MESSAGE, OCR_LANGUAGES, resultKey, sourceKey, type ResultFile } from './tasks.ts';
import type { TaskRow } from './tasks.store.ts';

/** A failure that retrying cannot fix: the task fails with this message (it is shown to the owner). */
export class TaskFailure extends Error {
  override name = 'TaskFailure';
}

async function readAll(stream: Readable): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  const data = Buffer.concat(chunks);
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

type Output = { name: string; contentType: string; data: string | Uint8Array };

/** What a run produced: its result files, and sentences about what the result lacks and why. */
export type TaskResult = {
  files: ResultFile[];
  notes: string[];
  stages: { readMs: number; engineMs: number; storeMs: number };
  /** a translation's source language: the task's, or the one told from its text when it had none */
  sourceLang?: string;
};

/** Runs the task's engine and stores its results; returns the result files and the document's notes. */
export async function runTask(
  task: TaskRow,
  deps: { objects: ObjectStore; translator: Translator | undefined; ocr?: OcrEngine | null },
  options: {
    signal: AbortSignal;
    onProgress: OnProgress;
    /** reader processes for one document's pages (SIGNET_PARSE_THREADS) */
    threads?: number;
    /** which pages of a parse are read by OCR (default auto: those without a text layer); `signet mcp`'s parse_pdf sets it */
    ocrMode?: OcrMode;
  },
): Promise<TaskResult> {
  const began = performance.now();
  const { body } = await deps.objects.get(sourceKey(task.id));
  const pdf = await readAll(body);
  options.signal.throwIfAborted();
  const read = performance.now();
  const outputs: Output[] = [];
  const files: ResultFile[] = [];
  let notes: string[] = [];
  let sourceLang: string | undefined;
  if (task.kind === 'docparse') {
    // Pictures go to storage as they are cut (one PNG in memory at a time), listed with the results.
    const onPicture = async (name: string, png: Uint8Array) => {
      const { size } = await deps.objects.put(resultKey(task.id, name), png, { contentType: 'image/png', signal: options.signal });
      files.push({ name, size, content_type: 'image/png' });
    };
    const ocrLanguages: OcrLanguages = (task.source_lang ? OCR_LANGUAGES[task.source_lang] : undefined) ?? 'auto';
    // The HTML's title when the PDF has none is the upload's name; its language the one chosen for OCR, if any.
    const engineOptions = { ...options, onPicture, ocrLanguages, title: task.source_name.replace(/\.pdf$/i, ''), ...(task.source_lang ? { lang: task.source_lang } : {}), ...(deps.ocr !== undefined ? { ocr: deps.ocr } : {}) };
    const { markdown, json, html, text, document } = await runDocparse(pdf, engineOptions);
    notes = document.notes ?? [];
    outputs.push(
      { name: 'document.md', contentType: 'text/markdown; charset=utf-8', data: markdown },
      { name: 'document.json', contentType: 'application/json', data: json },
      // Pictures linked as pictures/…png, as in document.md (export/html.ts withImageMode makes the other image modes).
      { name: 'document.html', contentType: 'text/html; charset=utf-8', data: html },
      { name: 'document.txt', contentType: 'text/plain; charset=utf-8', data: text },
    );
  } else {
    if (!deps.translator) throw new TaskFailure(NO_ENGINE_MESSAGE);
    // Scanned pages are read by OCR here too, so their blocks can be translated (issue 18).
    const extracted = await extractDocument(pdf, { signal: options.signal, ...(options.threads === undefined ? {} : { threads: options.threads }), ...(deps.ocr !== undefined ? { ocr: deps.ocr } : {}) });
    notes = extracted.notes ?? [];
    // A block the parser joined across two columns is translated and set per column (issue 26).
    const document = await splitColumnSpanningBlocks(pdf, extracted, options.signal).catch((error: unknown) => {
      if (options.signal.aborted) throw error;
      return extracted;
    });
    const pair = { source: task.source_lang ?? guessedLanguage(document, task.target_lang ?? ''), target: task.target_lang ?? '' };
    sourceLang = pair.source;
    if (task.source_lang === null) notes = [...notes, `The text was taken to be in ${pair.source} (no source language was given).`];
    const glossary = task.glossary ? (JSON.parse(task.glossary) as Record<string, string>) : undefined;
    const translated = await translateDocument(document, deps.translator, pair, { signal: options.signal, onProgress: options.onProgress, glossary });
    // Page furniture is left out of the translated Markdown and HTML as of the parsed ones (spec, issue 41).
    const body = withoutFurniture(translated);
    outputs.push({ name: 'translated.md', contentType: 'text/markdown; charset=utf-8', data: toMarkdown(body) });
    // The translation as HTML too, in the target language (no pictures: a translation cuts none).
    outputs.push({ name: 'translated.html', contentType: 'text/html; charset=utf-8', data: toHtml(body, { title: task.source_name.replace(/\.pdf$/i, ''), ...(task.target_lang ? { lang: task.target_lang } : {}) }) });
    outputs.push(...(await layoutKeepingOutputs(pdf, document, translated, options.signal)));
    const translationNotes = [...(translated.notes ?? [])];
    const glyphs = outputs.some((o) => o.name === 'translated.pdf') ? missingGlyphsNote(translated) : undefined;
    if (glyphs) translationNotes.push(glyphs);
    if (translationNotes.length > 0) appendNotes(outputs, translationNotes);
  }
  const engineDone = performance.now();
  for (const output of outputs) {
    options.signal.throwIfAborted();
    const data = typeof output.data === 'string' ? Buffer.from(output.data, 'utf8') : output.data;
    const { size } = await deps.objects.put(resultKey(task.id, output.name), data, { contentType: output.contentType, signal: options.signal });
    files.push({ name: output.name, size, content_type: output.contentType });
  }
  const ms = (a: number, b: number) => Math.round((b - a) * 10) / 10;
  // Pictures are stored while the engine runs, so their time counts as the engine's.
  return { files, notes, ...(sourceLang === undefined ? {} : { sourceLang }), stages: { readMs: ms(began, read), engineMs: ms(read, engineDone), storeMs: ms(engineDone, performance.now()) } };
}

/**
 * translated.pdf and bilingual.pdf on the source's own pages. Without ghostscript (or when it fails
 * on this file) the task still delivers translated.md, with a note file saying in words which
 * files could not be made and why (issue 18).
 */
async function layoutKeepingOutputs(pdf: Uint8Array, document: ParsedDocument, translated: ParsedDocument, signal: AbortSignal): Promise<Output[]> {
  try {
    const translatedPdf = await renderOverlayPdf(pdf, document, translated, { signal });
    const bilingual = await renderBilingualPdf(pdf, translatedPdf);
    return [
      { name: 'translated.pdf', contentType: 'application/pdf', data: translatedPdf },
      { name: 'bilingual.pdf', contentType: 'application/pdf', data: bilingual },
      ...(await layoutCheck(pdf, translatedPdf, document, translated, signal)),
    ];
  } catch (error) {
    if (signal.aborted) throw error;
    // The translation itself succeeded: a file the layout-keeping stage cannot rewrite (ghostscript
    // missing or refusing it, a PDF structure pdf-lib cannot load) still gets its translated.md.
    const reason = error instanceof TextRemovalError ? error.message : `the PDF could not be rewritten (${error instanceof Error ? error.message.split('\n', 1)[0]!.slice(0, 200) : String(error)}).`;
    const note = `translated.pdf and bilingual.pdf could not be produced: ${reason} The translation is in translated.md.\n`;
    return [{ name: 'translation-notes.txt', contentType: 'text/plain; charset=utf-8', data: note }];
  }
}

/**
 * The check of translated.pdf as a reader sees it (issue 26), per page: `layout-check.json` for the
 * result view ("3 places where text overlaps" on the pages to look at) and a sentence among the
 * notes. Without poppler the check is left out; the PDFs are still delivered.
 */
async function layoutCheck(pdf: Uint8Array, translatedPdf: Uint8Array, document: ParsedDocument, translated: ParsedDocument, signal: AbortSignal): Promise<Output[]> {
  try {
    const summary = summarise(await checkTranslatedPdf(pdf, translatedPdf, { document, translated, signal }));
    const outputs: Output[] = [{ name: LAYOUT_CHECK, contentType: 'application/json', data: JSON.stringify(summary) }];
    if (summary.length > 0) {
      const pages = summary.slice(0, 10).map((p) => `page ${p.page} (${describePage({ overlapPlaces: p.overlaps, gutterCrossings: p.gutter, intoDrawings: p.drawings, belowMargin: p.belowMargin, missingGlyphs: p.missingGlyphs ?? 0, styleFallbacks: p.styleFallbacks ?? 0 }).join(', ')})`);
      const more = summary.length > 10 ? ` and ${summary.length - 10} more pages` : '';
      outputs.push({ name: 'translation-notes.txt', contentType: 'text/plain; charset=utf-8', data: `Pages of translated.pdf to look at: ${pages.join('; ')}${more}.\n` });
    }
    return outputs;
  } catch (error) {
    if (signal.aborted) throw error;
    return [];
  }
}

/** Sentences for the owner (glossary misses) go into translation-notes.txt, beside any already there. */
function appendNotes(outputs: Output[], notes: string[]): void {
  const existing = outputs.find((o) => o.name === 'translation-notes.txt');
  const text = notes.map((n) => `${n}\n`).join('');
  if (existing) existing.data = `${String(existing.data)}${text}`;
  else outputs.push({ name: 'translation-notes.txt', contentType: 'text/plain; charset=utf-8', data: text });
}

/**
 * A translation asked for without its source language (an agent's translate_pdf may leave it out) is
 * from the language its text is in, as `signet translate` tells it; a text too short to tell, or already
 * in the target language, fails with what to do.
 */
function guessedLanguage(document: ParsedDocument, target: string): string {
  const guessed = guessSourceLanguage(document);
  if (guessed === undefined) throw new TaskFailure('The language of the text could not be told (too little text, or a language not recognised). Translate it again with the source language given.');
  if (guessed === target) throw new TaskFailure(`The text is in ${target} already. If that is wrong, translate it again with the source language given.`);
  return guessed;
}

/** Removes whatever a run stored, for a run that was cancelled or taken away — pictures included. */
export async function discardResults(objects: ObjectStore, taskId: string): Promise<void> {
  const pictures = await objects.list(resultKey(taskId, 'pictures/'));
  const names = ['translated.md', 'translated.html', 'translated.pdf', 'bilingual.pdf', 'translation-notes.txt', LAYOUT_CHECK, 'document.md', 'document.json', 'document.html', 'document.txt'];
  await objects.deleteMany([...names.map((name) => resultKey(taskId, name)), ...pictures]);
}
