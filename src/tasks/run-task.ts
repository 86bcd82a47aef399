// Running one claimed task: read the source PDF, run its engine, store the results. The worker loop
// (src/worker) owns leases and retries; this file owns what a task produces.
import type { Readable } from 'node:stream';
import type { ObjectStore } from '../storage/object-store.ts';
import { toMarkdown, runDocparse } from './engines/docparse.ts';
import type { OnProgress } from './engines/document.ts';
import type { OcrEngine } from './engines/ocr/ocr.ts';
import { extractDocument } from './engines/pdf/extract.ts';
import { translateDocument } from './engines/translate/translate-document.ts';
import { renderTranslatedPdf } from './engines/translate/translated-pdf.ts';
import type { Translator } from './engines/translate/translator.ts';
import { NO_ENGINE_MESSAGE, OCR_LANGUAGES, resultKey, sourceKey, type ResultFile } from './tasks.ts';
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
export type TaskResult = { files: ResultFile[]; notes: string[] };

/** Runs the task's engine and stores its results; returns the result files and the document's notes. */
export async function runTask(
  task: TaskRow,
  deps: { objects: ObjectStore; translator: Translator | undefined; ocr?: OcrEngine | null },
  options: { signal: AbortSignal; onProgress: OnProgress },
): Promise<TaskResult> {
  const { body } = await deps.objects.get(sourceKey(task.id));
  const pdf = await readAll(body);
  options.signal.throwIfAborted();
  const outputs: Output[] = [];
  const files: ResultFile[] = [];
  let notes: string[] = [];
  if (task.kind === 'docparse') {
    // Pictures go to storage as they are cut (one PNG in memory at a time), listed with the results.
    const onPicture = async (name: string, png: Uint8Array) => {
      const { size } = await deps.objects.put(resultKey(task.id, name), png, { contentType: 'image/png', signal: options.signal });
      files.push({ name, size, content_type: 'image/png' });
    };
    const ocrLanguages = (task.source_lang && OCR_LANGUAGES[task.source_lang]) || 'auto';
    const engineOptions = { ...options, onPicture, ocrLanguages, ...(deps.ocr !== undefined ? { ocr: deps.ocr } : {}) };
    const { markdown, json, document } = await runDocparse(pdf, engineOptions);
    notes = document.notes ?? [];
    outputs.push({ name: 'document.md', contentType: 'text/markdown; charset=utf-8', data: markdown }, { name: 'document.json', contentType: 'application/json', data: json });
  } else {
    if (!deps.translator) throw new TaskFailure(NO_ENGINE_MESSAGE);
    const pair = { source: task.source_lang ?? '', target: task.target_lang ?? '' };
    const document = await extractDocument(pdf, { signal: options.signal });
    const translated = await translateDocument(document, deps.translator, pair, { signal: options.signal, onProgress: options.onProgress });
    const pdfOut = await renderTranslatedPdf(translated, { title: task.source_name, signal: options.signal });
    outputs.push({ name: 'translated.md', contentType: 'text/markdown; charset=utf-8', data: toMarkdown(translated) }, { name: 'translated.pdf', contentType: 'application/pdf', data: pdfOut });
  }
  for (const output of outputs) {
    options.signal.throwIfAborted();
    const data = typeof output.data === 'string' ? Buffer.from(output.data, 'utf8') : output.data;
    const { size } = await deps.objects.put(resultKey(task.id, output.name), data, { contentType: output.contentType, signal: options.signal });
    files.push({ name: output.name, size, content_type: output.contentType });
  }
  return { files, notes };
}

/** Removes whatever a run stored, for a run that was cancelled or taken away — pictures included. */
export async function discardResults(objects: ObjectStore, taskId: string): Promise<void> {
  const pictures = await objects.list(resultKey(taskId, 'pictures/'));
  await objects.deleteMany([...['translated.md', 'translated.pdf', 'document.md', 'document.json'].map((name) => resultKey(taskId, name)), ...pictures]);
}
