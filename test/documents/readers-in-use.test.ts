// `signet parse` on a batch caps the reader processes in use at its --threads (src/documents/pdf/reader-client.ts,
// limitReadersInUse): a file waits for the reader another file gave back instead of starting a process, and a
// document with no pictures to cut gives its reader back once its last page is read (pdf/extract.ts). Its own
// test file: the cap is the process's, and node --test runs each file in a process of its own.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, test } from 'node:test';
import { extractDocument } from '../../src/documents/pdf/extract.ts';
import { killSpareReader, limitReadersInUse, PdfReader, readersFree, spareReaderPids } from '../../src/documents/pdf/reader-client.ts';

const PUBLIC = path.join(import.meta.dirname, '..', '..', 'bench', 'docparse', 'public');
const TWO_TABLES = path.join(PUBLIC, 'camelot', 'twotables_2.pdf');
const HANDBOOK = path.join(PUBLIC, 'docling', 'amt_handbook_sample.pdf');

after(() => killSpareReader());

const settled = async (promise: Promise<unknown>, ms = 300) => Promise.race([promise.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms))]);

test('a batch capped at one reader: "a file waits for a reader another file gave back instead of starting one more process"', async () => {
  limitReadersInUse(1);
  const first = await PdfReader.open(TWO_TABLES);
  assert.equal(readersFree(), 0);
  const second = PdfReader.open(HANDBOOK);
  assert.equal(await settled(second), false, 'the second file waits while the first holds the only reader');
  first.close();
  const [reused] = spareReaderPids();
  assert.ok(reused !== undefined, 'the first file\'s reader is kept for the next');
  const reader = await second;
  assert.deepEqual(spareReaderPids(), [], 'the waiting file took the reader the first gave back');
  assert.ok(reader.pages > 0);
  reader.close();
  assert.deepEqual(spareReaderPids(), [reused], 'one reader process read both files');
});

test('a document with no pictures to cut gives its reader back once its last page is read, and its pages are those of an uncapped read', async () => {
  limitReadersInUse(1);
  const data = new Uint8Array(await (await import('node:fs/promises')).readFile(HANDBOOK));
  const text = (doc: Awaited<ReturnType<typeof extractDocument>>) => doc.pages.map((page) => page.blocks.map((block) => block.text).join('\n'));
  // The last page's progress is told after its layout: by then the reader is back.
  const freeAtLastPage: number[] = [];
  await extractDocument(data, { ocr: null, onProgress: (done, total) => void (done === total && freeAtLastPage.push(readersFree())) });
  assert.deepEqual(freeAtLastPage, [1]);
  // Two documents at once through one reader: each read whole, in its own order.
  const [a, b] = await Promise.all([extractDocument(data, { ocr: null }), extractDocument(data, { ocr: null })]);
  assert.equal(readersFree(), 1);
  limitReadersInUse(Infinity);
  const alone = await extractDocument(data, { ocr: null });
  assert.deepEqual(text(a), text(alone));
  assert.deepEqual(text(b), text(alone));
});
