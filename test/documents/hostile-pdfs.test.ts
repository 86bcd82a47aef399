// Hostile and broken PDFs (issue 17, item 9): each fails its page or its task with a message a
// person understands, never a stuck, crashed or swapping worker — and the memory comes back.
// The files are built here from their description (a 1.5 MB stream inflating to 1.5 GB …).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { UnreadablePdfError } from '../../src/documents/pdf/errors.ts';
import { extractDocument } from '../../src/documents/pdf/extract.ts';
import { spareReaderPids } from '../../src/documents/pdf/reader-client.ts';
import { LimitedProgramError, runLimited } from '../../src/documents/limited.ts';
import { skipUnlessAvailable } from '../helpers/services.ts';
import { passwordPdf, samplePdf } from '../helpers/pdfs.ts';
import { deflatedZeros, longDocumentPdf, manyPagesPdf, pdfWithContent, rawPdf, scanToolsMissing, tesseractMissing } from '../helpers/scans.ts';

const MB = 2 ** 20;
const ocrSkip = skipUnlessAvailable('poppler (pdftoppm)', scanToolsMissing()) || skipUnlessAvailable('tesseract (eng)', tesseractMissing());

/** Reader processes (pdf.js children) this test process still has, besides the idle spares. */
function readerChildren(): number[] {
  const spares = spareReaderPids();
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        return ppid === process.pid && !spares.includes(Number(pid)) && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('reader-process');
      } catch {
        return false;
      }
    })
    .map(Number);
}

async function rejectsWith(promise: Promise<unknown>, pattern: RegExp): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof UnreadablePdfError, `an UnreadablePdfError (a content failure, not retried), got ${String(error)}`);
    assert.match(error.message, pattern);
    return true;
  });
}

describe('hostile and broken input', () => {
  test('issue 17: "a decompression bomb" — a 1.5 MB stream inflating to 1.5 GB fails the task on memory; the reader is gone and the memory is back', async () => {
    const deflated = await deflatedZeros(1.5 * 1024 * MB);
    assert.ok(deflated.length < 2 * MB, `the bomb is ${deflated.length} bytes`);
    const before = process.memoryUsage().rss;
    const stats = { readerPeakRss: 0 };
    await rejectsWith(extractDocument(pdfWithContent(deflated), { stats }), /page 1 needed more than 1024 MB of memory/);
    assert.ok(stats.readerPeakRss > 1024 * MB, 'the reader was stopped at its limit, not before');
    assert.deepEqual(readerChildren(), [], 'the reader process was killed');
    assert.ok(process.memoryUsage().rss - before < 200 * MB, 'the worker itself did not grow');
  });

  test('issue 17: "a per-page time limit" — a page that reads longer than the limit fails with the time it took', async () => {
    const slow = pdfWithContent(await deflatedZeros(300 * MB));
    await rejectsWith(extractDocument(slow, { limits: { reader: { memoryBytes: 1024 * MB, pageTimeoutMs: 200 } } }), /reading page 1 took longer than 0\.2 s/);
    assert.deepEqual(readerChildren(), []);
  });

  test('issue 17: "a page of 20,000 × 20,000 points" is rendered for OCR at a resolution that fits, and says so', { skip: ocrSkip }, async () => {
    const image = '<< /Type /XObject /Subtype /Image /Width 2 /Height 2 /ColorSpace /DeviceGray /BitsPerComponent 8 /Length 4 >>\nstream\n\x00\xff\xff\x00\nendstream';
    const content = 'q 20000 0 0 20000 0 0 cm /Im1 Do Q';
    const pdf = rawPdf([
      '<< /Type /Catalog /Pages 2 0 R >>',
      '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
      '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 20000 20000] /Contents 4 0 R /Resources << /XObject << /Im1 5 0 R >> >> >>',
      `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
      image,
    ]);
    const doc = await extractDocument(pdf, { onPicture: async () => {} });
    assert.equal(doc.pages[0]?.width, 20000);
    assert.match(doc.notes?.[0] ?? '', /^Page 1 is very large, so it was read by OCR at \d+ dpi instead of 300/);
    assert.deepEqual(doc.pages[0]?.pictures, [], 'the page-filling image is the scan, not a picture');
  });

  test('issue 17: "an encrypted file" fails with what to do about the password', async () => {
    await rejectsWith(extractDocument(await passwordPdf()), /protected by a password; remove the password/);
  });

  test('issue 17: "a truncated file" fails as damaged, with what to do', async () => {
    const sample = await samplePdf();
    for (const cut of [0.5, 0.1]) await rejectsWith(extractDocument(sample.subarray(0, Math.floor(sample.length * cut))), /damaged and cannot be read .*re-export or repair it/);
    assert.deepEqual(readerChildren(), []);
  });

  test('issue 17: "fails that page" — a page pdf.js throws on is left empty with a note; the other pages are read and the task finishes', async () => {
    const content = 'BT /F1 12 Tf 72 720 Td (Hello from a sound page) Tj ET';
    const page = '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R /Resources << /Font << /F1 6 0 R >> >> >>';
    const pdf = rawPdf([
      '<< /Type /Catalog /Pages 2 0 R >>',
      '<< /Type /Pages /Kids [3 0 R 7 0 R 5 0 R] /Count 3 >>',
      page,
      `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
      '42', // page 3 "is" a number: pdf.js throws on it
      '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
      page,
    ]);
    const doc = await extractDocument(pdf);
    assert.deepEqual(doc.pages.map((p) => p.blocks.map((b) => b.text).join(' ')), ['Hello from a sound page', 'Hello from a sound page', '']);
    assert.match(doc.notes?.[0] ?? '', /^Page 3 is damaged and could not be read \(.+\); it is left empty\.$/);
    assert.deepEqual(readerChildren(), []);
  });

  test('issue 17: "thousands of pages" — a 3,000-page file is read page by page to the end', async () => {
    let calls = 0;
    const doc = await extractDocument(manyPagesPdf(3000), { onProgress: () => void (calls += 1) });
    assert.equal(doc.pages.length, 3000);
    assert.equal(calls, 3000);
    assert.match(doc.pages[2999]?.blocks[0]?.text ?? '', /page 3000 of a long document/);
  });

  test('issue 17: "500-page memory bound" — a 500-page document is read with the reader under 400 MB and the worker growing under 150 MB', async () => {
    const pdf = await longDocumentPdf(500);
    const before = process.memoryUsage().rss;
    let peak = before;
    const stats = { readerPeakRss: 0 };
    const doc = await extractDocument(pdf, { stats, onProgress: () => void (peak = Math.max(peak, process.memoryUsage().rss)) });
    assert.equal(doc.pages.length, 500);
    process.stderr.write(`# 500 pages: reader peak RSS ${Math.round(stats.readerPeakRss / MB)} MB, worker RSS growth ${Math.round((peak - before) / MB)} MB\n`);
    assert.ok(stats.readerPeakRss > 0 && stats.readerPeakRss < 400 * MB, `reader peak ${Math.round(stats.readerPeakRss / MB)} MB`);
    assert.ok(peak - before < 150 * MB, `worker grew ${Math.round((peak - before) / MB)} MB`);
  });

  test('issue 17: "every external program runs with a time limit and a memory limit and without a shell"', async () => {
    await assert.rejects(runLimited('sleep', ['5'], { timeoutMs: 200, memoryBytes: 256 * MB }), (e: unknown) => e instanceof LimitedProgramError && e.reason === 'timeout' && /took longer than 0\.2 s/.test(e.message));
    // The address-space limit reaches the program: pdftoppm cannot even map its libraries in 8 MB.
    await assert.rejects(runLimited('pdftoppm', ['-v'], { timeoutMs: 5000, memoryBytes: 8 * MB }), (e: unknown) => e instanceof LimitedProgramError && e.reason === 'memory' && /needed more than 8 MB/.test(e.message));
    // No shell: metacharacters are plain argument text.
    const out = await runLimited('echo', ['$(id)', ';', 'ls'], { timeoutMs: 5000, memoryBytes: 256 * MB });
    assert.equal(out.toString('utf8'), '$(id) ; ls\n');
  });
});
