// Page images for the result view (issue 17 item 6, issue 18 item 5): a page of the task's source
// PDF or of its translated.pdf, drawn by PDFium in a reader process (its time and memory limits;
// issue 31: a third of pdftoppm's CPU for these images, docs/documents/pdf-reader.md) on first
// request, and kept in object storage beside the task's files (`tasks/<id>/pages/…`), so every
// later view of that page is one read. The cache goes with the task (deleteTaskRecord, account deletion).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { TaskKind } from '../db/schema.ts';
import { ObjectNotFoundError } from '../storage/object-store.ts';
import { UnreadablePdfError } from '../documents/pdf/errors.ts';
import { pageImagePrefix, resultFile, TaskError, type TaskContext } from './tasks.ts';

export type PageImageSource = 'source' | 'translated';

/** The longest side of a page image, in pixels: sharp on a laptop screen, small enough to cache. */
const LONGEST_SIDE = 1400;

const pageImageKey = (taskId: string, source: PageImageSource, pageNo: number) => `${pageImagePrefix(taskId)}${source}-${pageNo}.png`;

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * Page `pageNo` (from 1) of the caller's task as a PNG. Another person's task, a page the PDF does
 * not have, or a translation not finished yet are 404, never a render.
 */
export async function pageImage(ctx: TaskContext, sub: string, kind: TaskKind, id: string, source: PageImageSource, pageNo: number): Promise<Buffer> {
  if (source === 'translated' && kind !== 'translate') throw new TaskError(404, 'not_found', 'Only a translation has translated pages.');
  const { key: pdfKey, task } = await resultFile(ctx, sub, kind, id, source === 'source' ? 'source.pdf' : 'translated.pdf');
  if (!Number.isInteger(pageNo) || pageNo < 1 || pageNo > task.source_pages) throw new TaskError(404, 'not_found', `The document has pages 1 to ${task.source_pages}.`);
  const key = pageImageKey(id, source, pageNo);
  try {
    return await readAll((await ctx.objects.get(key)).body);
  } catch (error) {
    if (!(error instanceof ObjectNotFoundError)) throw error;
  }
  const pdf = await readAll((await ctx.objects.get(pdfKey)).body);
  const png = await renderPng(pdf, pageNo);
  await ctx.objects.put(key, png, { contentType: 'image/png' });
  return png;
}

async function renderPng(pdf: Buffer, pageNo: number): Promise<Buffer> {
  const dir = await mkdtemp(path.join(tmpdir(), 'signet-page-'));
  try {
    const input = path.join(dir, 'in.pdf');
    await writeFile(input, pdf, { mode: 0o600 });
    const { PdfReader } = await import('../documents/pdf/reader-client.ts');
    const reader = await PdfReader.open(input);
    try {
      const { data } = await reader.render({ pageNo, dpi: 72, longestSide: LONGEST_SIDE, format: 'png' });
      return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    } finally {
      reader.close();
    }
  } catch (error) {
    if (error instanceof UnreadablePdfError) throw new TaskError(422, 'page_not_rendered', `Page ${pageNo} could not be drawn: ${error.message}`);
    throw error;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
