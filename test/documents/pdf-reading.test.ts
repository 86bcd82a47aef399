// Reading PDFs (issue 17): scanned pages read by OCR, mixed documents keep their text layer,
// pictures cut out as PNG result files, what a page without text says when no OCR engine exists,
// and the style fields of text runs. Real poppler, real tesseract, real object storage.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import PDFKit from 'pdfkit';
import type { ParsedDocument } from '../../src/documents/document.ts';
import { wordsToRuns } from '../../src/documents/ocr/ocr.ts';
import { parseHocr } from '../../src/documents/ocr/tesseract.ts';
import { parsePgm, rulesInImage } from '../../src/documents/ocr/image-rules.ts';
import { runDocparse } from '../../src/documents/parse.ts';
import { extractDocument } from '../../src/documents/pdf/extract.ts';
import { PdfReader } from '../../src/documents/pdf/reader-client.ts';
import { discardResults, runTask } from '../../src/tasks/run-task.ts';
import type { TaskRow } from '../../src/tasks/tasks.store.ts';
import { sourceKey } from '../../src/tasks/tasks.ts';
import { openObjectStore, parseStorageUrl } from '../../src/storage/open.ts';
import { skipUnlessAvailable } from '../helpers/services.ts';
import { joinPdfs, pngMeanGray, prosePdf, scanPdf, scanToolsMissing, sidewaysScanPdf, solidPng, tesseractMissing } from '../helpers/scans.ts';
import { SAMPLE, samplePdf } from '../helpers/pdfs.ts';
import { OCR_LANGUAGES } from '../../src/tasks/tasks.ts';
import { degrees, PDFDocument } from 'pdf-lib';

/** Why Chinese OCR cannot run here (no chi_sim data), or undefined. */
function chineseMissing(): string | undefined {
  try {
    return /^chi_sim$/m.test(execFileSync('tesseract', ['--list-langs'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })) ? undefined : 'no chi_sim data (apt-get install tesseract-ocr-chi-sim)';
  } catch {
    return 'tesseract is not installed';
  }
}

const popplerSkip = skipUnlessAvailable('poppler (pdftoppm)', scanToolsMissing());
const ocrSkip = popplerSkip || skipUnlessAvailable('tesseract (eng)', tesseractMissing());

const HEADING = 'Quarterly Review Summary';
const PROSE = [
  'The committee reviewed forty two quarterly reports and found the figures consistent with the audited accounts of the previous year.',
  'Optical character recognition turns the pixels of a scanned page back into words with boxes, so that layout can still find paragraphs and headings.',
];
const words = (text: string) => text.toLowerCase().match(/[a-z0-9]+/g) ?? [];
const docText = (doc: ParsedDocument, pageNo: number) => (doc.pages[pageNo - 1]?.blocks ?? []).map((b) => b.text).join('\n');

/** Share of the source's words found (as a multiset) in the read text. */
function wordRecall(source: string, read: string): number {
  const pool = new Map<string, number>();
  for (const w of words(read)) pool.set(w, (pool.get(w) ?? 0) + 1);
  const expected = words(source);
  let found = 0;
  for (const w of expected) {
    const n = pool.get(w) ?? 0;
    if (n > 0) {
      found += 1;
      pool.set(w, n - 1);
    }
  }
  return found / expected.length;
}

describe('scanned pages', { skip: ocrSkip }, () => {
  let prose: Buffer;
  let scan: Buffer;
  before(async () => {
    prose = await prosePdf(HEADING, PROSE);
    scan = await scanPdf(prose, 300);
  });

  test('issue 17: "scanned page read" — a page without a text layer is rendered and read by OCR, with its words, heading and paragraphs', async () => {
    const doc = await extractDocument(scan);
    const page = doc.pages[0];
    assert.equal(page?.textSource, 'ocr');
    const recall = wordRecall([HEADING, ...PROSE].join(' '), docText(doc, 1));
    assert.ok(recall >= 0.9, `OCR word recall ${recall.toFixed(3)} on a clean 300-dpi scan`);
    // Words keep their boxes: the heading is its own block above the paragraphs, in reading order.
    const blocks = page?.blocks ?? [];
    const headingAt = blocks.findIndex((b) => b.text.includes('Quarterly Review'));
    const firstParagraph = blocks.findIndex((b) => b.text.includes('committee reviewed'));
    assert.ok(headingAt >= 0 && firstParagraph > headingAt, JSON.stringify(blocks.map((b) => b.text)));
    assert.ok((blocks[headingAt]?.fontSize ?? 0) > (blocks[firstParagraph]?.fontSize ?? 0), 'the 20 pt heading reads larger than 12 pt text');
    // The scan itself is the page, not a picture on it.
    assert.equal((page?.pictures ?? []).length, 0);
  });

  test('a scan stored sideways (/Rotate 90) is read as shown: upright words, the size of the page as shown', async () => {
    const doc = await extractDocument(await sidewaysScanPdf(prose));
    const page = doc.pages[0];
    assert.equal(page?.textSource, 'ocr');
    assert.deepEqual([Math.round(page?.width ?? 0), Math.round(page?.height ?? 0)], [595, 842]);
    assert.ok(wordRecall([HEADING, ...PROSE].join(' '), docText(doc, 1)) >= 0.9, docText(doc, 1));
    const heading = page?.blocks.find((b) => b.text.includes('Quarterly'));
    assert.ok((heading?.bbox.t ?? 0) > 700, 'the heading is at the top of the page as shown');
  });

  test('issue 17: "tables work on scans too" — a ruled table on a scanned page keeps its grid (rules found in the image)', async () => {
    const sample = await PDFDocument.load(await samplePdf());
    const one = await PDFDocument.create();
    const [tablePage] = await one.copyPages(sample, [2]);
    if (tablePage) one.addPage(tablePage);
    const { markdown } = await runDocparse(await scanPdf(await one.save(), 300), {});
    assert.ok(markdown.includes('| Name | Score | Grade |\n| --- | --- | --- |\n| Alice | 91 | A |\n| Bob | 78 | C |'), markdown);
  });

  test('issue 17: "mixed document" — text-layer pages keep their real text, only the scanned page is read by OCR', async () => {
    const doc = await extractDocument(await joinPdfs(prose, scan, prose));
    assert.deepEqual(doc.pages.map((p) => p.textSource), ['text-layer', 'ocr', 'text-layer']);
    assert.ok(docText(doc, 1).includes(PROSE[0] ?? ''), 'page 1 is its text layer, verbatim');
    assert.ok(wordRecall(PROSE.join(' '), docText(doc, 2)) >= 0.9);
    assert.ok(docText(doc, 3).includes(PROSE[1] ?? ''));
  });
});

test('rules in a scanned image: a thin long dark band is a rule; letters, short dashes and a thick block are not', () => {
  const [width, height] = [600, 400];
  const pixels = new Uint8Array(width * height).fill(255);
  const paint = (x0: number, y0: number, x1: number, y1: number) => {
    for (let y = y0; y < y1; y += 1) for (let x = x0; x < x1; x += 1) pixels[y * width + x] = 0;
  };
  paint(50, 100, 550, 103); // a horizontal rule, 3 px thick, 500 px long
  paint(300, 150, 302, 390); // a vertical rule, 240 px long
  paint(50, 200, 120, 202); // a dash shorter than half an inch (150 px at 300 dpi)
  paint(350, 200, 550, 300); // a thick block (a photo, shading)
  const header = Buffer.from(`P5\n${width} ${height}\n255\n`, 'latin1');
  const image = parsePgm(Buffer.concat([header, pixels]));
  assert.ok(image);
  const rules = rulesInImage(image, 300, (height * 72) / 300);
  const round = (n: number) => Math.round(n * 10) / 10;
  assert.deepEqual(rules.map((r) => [r.x1, r.y1, r.x2, r.y2].map(round)), [
    [12, round(96 - 101.5 * 0.24), 132, round(96 - 101.5 * 0.24)],
    [72.2, round(96 - 390 * 0.24), 72.2, round(96 - 150 * 0.24)],
  ]);
});

describe('scanned Chinese', { skip: ocrSkip || skipUnlessAvailable('tesseract (chi_sim)', chineseMissing()) }, () => {
  test('issue 17: OCR reads Simplified Chinese — with source_lang zh (chi_sim+eng) and with auto (English reads poorly, so Chinese is tried and kept)', async () => {
    const sample = await samplePdf();
    const source = await PDFDocument.load(sample);
    const one = await PDFDocument.create();
    const [page] = await one.copyPages(source, [3]);
    if (page) one.addPage(page);
    const scan = await scanPdf(await one.save(), 300);
    const han = (text: string) => text.match(/\p{Script=Han}/gu) ?? [];
    const truth = han(SAMPLE.chinese + SAMPLE.chineseHeading);
    for (const languages of [OCR_LANGUAGES.zh ?? [], 'auto' as const]) {
      const doc = await extractDocument(scan, { ocrLanguages: languages });
      const read = new Set(han(docText(doc, 1)));
      const recall = truth.filter((c) => read.has(c)).length / truth.length;
      assert.ok(recall >= 0.9, `${String(languages)}: recall ${recall.toFixed(3)} of ${docText(doc, 1)}`);
      assert.ok(docText(doc, 1).includes('文档解析'), 'Chinese words are not split by spaces');
    }
  });
});

describe('the OCR time limit', { skip: ocrSkip }, () => {
  test('issue 17: "a per-page time limit keeps one bad page from holding the worker" — a page whose OCR runs past it is left without text, with a note, and the document finishes', async () => {
    const prose = await prosePdf(HEADING, PROSE);
    const doc = await extractDocument(await joinPdfs(prose, await scanPdf(prose, 300)), { limits: { program: { timeoutMs: 250, memoryBytes: 1536 * 2 ** 20 } } });
    assert.equal(doc.pages[0]?.textSource, 'text-layer');
    assert.equal(doc.pages[1]?.textSource, 'none');
    assert.match(doc.notes?.[0] ?? '', /^Page 2 has no text layer .* reading it by OCR failed \((pdftoppm|tesseract) took longer than 0\.3 s and was stopped\)/);
  });
});

test('issue 17: "if no OCR engine is installed, the task still finishes" and says which pages had no text and why', { skip: popplerSkip }, async () => {
  const prose = await prosePdf(HEADING, PROSE);
  const doc = await extractDocument(await joinPdfs(prose, await scanPdf(prose, 100)), { ocr: null });
  assert.equal(doc.pages[1]?.textSource, 'none');
  assert.equal(doc.pages[0]?.textSource, 'text-layer');
  assert.equal(doc.notes?.length, 1);
  assert.match(doc.notes?.[0] ?? '', /^Page 2 has no text layer .* no OCR engine is installed .*tesseract-ocr/);
  assert.deepEqual(doc.pages[1]?.notes, doc.notes);
});

test('OCR words become TextRuns in page points: a line shares its measured baseline and size, boxes scale by 72/dpi, a misread bullet is a bullet', () => {
  const hocr = `<div class='ocr_page' id='page_1' title='image "x"; bbox 0 0 2481 3508'>
     <span class='ocr_line' id='line_1_1' title="bbox 300 590 790 650; baseline 0 -10; x_size 47; x_descenders 10; x_ascenders 9">
      <span class='ocrx_word' id='word_1_1' title='bbox 300 600 500 650; x_wconf 96'>Hello</span>
      <span class='ocrx_word' id='word_1_2' title='bbox 540 590 790 650; x_wconf 95'>w&amp;rld</span>
     </span>
     <span class='ocr_header' id='line_1_2' title="bbox 300 700 900 760; baseline 0 -12; x_size 78">
      <span class='ocrx_word' id='word_1_3' title='bbox 300 700 330 740; x_wconf 60'>«</span>
      <span class='ocrx_word' id='word_1_4' title='bbox 360 700 900 760; x_wconf 91'>Item</span>
     </span></div>`;
  const words = parseHocr(hocr);
  assert.deepEqual(words.map((w) => w.text), ['Hello', 'w&rld', '«', 'Item']);
  const runs = wordsToRuns(words, 300, 842);
  assert.deepEqual(runs.map((r) => r.text), ['Hello ', 'w&rld', '• ', 'Item']);
  assert.equal(runs[0]?.y, runs[1]?.y);
  assert.ok(Math.abs((runs[0]?.y ?? 0) - (842 - 640 * 0.24)) < 1e-9, 'baseline: the line box bottom 650 less 10 pixels');
  assert.ok(Math.abs((runs[0]?.size ?? 0) - 47 * 0.24 * 1.065) < 1e-9, 'size from x_size');
  assert.ok((runs[2]?.size ?? 0) > (runs[0]?.size ?? 0) * 1.5, 'a larger line keeps its larger size');
  assert.equal(runs[0]?.x, 72);
  assert.equal(runs[1]?.width, 60);
  assert.equal(runs[1]?.hasEOL, true);
});

const CAPTION = 'Figure 1. A page drawn as an image.';

/** A page with a photo-like image (a render of another page) and its caption below it. */
async function picturePdf(): Promise<{ pdf: Buffer; box: { l: number; t: number; r: number } }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'signet-picture-'));
  try {
    const source = await prosePdf('Inside the picture', ['Some text that becomes pixels.']);
    execFileSync('pdftoppm', ['-r', '30', '-png', '-singlefile', '-', path.join(dir, 'img')], { input: source });
    const png = readFileSync(path.join(dir, 'img.png'));
    const doc = new PDFKit({ size: 'A4', margin: 56 });
    const chunks: Buffer[] = [];
    doc.on('data', (c: Buffer) => chunks.push(c));
    const done = new Promise<Buffer>((resolve) => doc.on('end', () => resolve(Buffer.concat(chunks))));
    doc.font('Helvetica').fontSize(12).text('A page with one figure and its caption.', 56, 80);
    doc.image(png, 100, 200, { width: 200 });
    doc.font('Helvetica').fontSize(10).text(CAPTION, 100, 500);
    doc.font('Helvetica').fontSize(12).text('The text goes on below the figure, as it does in a report. '.repeat(4), 56, 540, { width: 480 });
    doc.end();
    return { pdf: await done, box: { l: 100, t: 842 - 200, r: 300 } };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('pictures', { skip: popplerSkip }, () => {
  const storeDir = mkdtempSync(path.join(tmpdir(), 'signet-picture-objects-'));
  const objects = openObjectStore(parseStorageUrl(`file:${storeDir}`));
  after(() => rmSync(storeDir, { recursive: true, force: true }));

  test('issue 17: "picture exported with caption" — an embedded image becomes pictures/page-1-1.png, stored as a result file with its box, referenced with its caption, and discarded with the run', async () => {
    const { pdf, box } = await picturePdf();
    const id = 'picture-task';
    await objects.put(sourceKey(id), pdf);
    const task = { id, kind: 'docparse', source_name: 'figure.pdf', source_pages: 1 } as TaskRow;
    const { files } = await runTask(task, { objects, translator: undefined }, { signal: new AbortController().signal, onProgress: () => {} });
    const picture = files.find((f) => f.name === 'pictures/page-1-1.png');
    assert.ok(picture, JSON.stringify(files));
    assert.equal(picture.content_type, 'image/png');
    const { body } = await objects.get(`tasks/${id}/pictures/page-1-1.png`);
    const chunks: Buffer[] = [];
    for await (const chunk of body) chunks.push(chunk as Buffer);
    const png = Buffer.concat(chunks);
    assert.equal(png.subarray(1, 4).toString('latin1'), 'PNG');
    // 200 points wide at 150 dpi ≈ 417 pixels (IHDR width at byte 16).
    assert.ok(Math.abs(png.readUInt32BE(16) - (200 * 150) / 72) <= 2, `width ${png.readUInt32BE(16)}`);
    const stored = async (name: string) => {
      const chunks: Buffer[] = [];
      for await (const chunk of (await objects.get(`tasks/${id}/${name}`)).body) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    };
    assert.ok((await stored('document.md')).includes(`![${CAPTION}](pictures/page-1-1.png)`), await stored('document.md'));
    const json = JSON.parse(await stored('document.json')) as { pictures: Array<{ image?: { uri: string }; captions: Array<{ $ref: string }> }>; texts: Array<{ self_ref: string; text: string }> };
    assert.equal(json.pictures[0]?.image?.uri, 'pictures/page-1-1.png');
    const captionRef = json.pictures[0]?.captions[0]?.$ref;
    assert.equal(json.texts.find((t) => t.self_ref === captionRef)?.text, CAPTION);
    await discardResults(objects, id);
    assert.deepEqual(await objects.list(`tasks/${id}/`), [sourceKey(id)]);
    // The picture's box is where it was drawn.
    const doc = await extractDocument(pdf, { onPicture: async () => {} });
    const found = doc.pages[0]?.pictures?.[0];
    assert.equal(found?.file, 'pictures/page-1-1.png');
    assert.ok(found && Math.abs(found.bbox.l - box.l) < 0.5 && Math.abs(found.bbox.t - box.t) < 0.5 && Math.abs(found.bbox.r - box.r) < 0.5, JSON.stringify(found?.bbox));
  });
});

test('a picture on a page turned by /Rotate is cut where it is shown', { skip: popplerSkip }, async () => {
  const pdf = await PDFDocument.create();
  const page = pdf.addPage([842, 595]);
  page.drawImage(await pdf.embedPng(solidPng(8, 8, 0)), { x: 100, y: 100, width: 200, height: 100 });
  page.setRotation(degrees(90));
  const pictures: Array<{ name: string; png: Buffer }> = [];
  const doc = await extractDocument(await pdf.save(), { onPicture: async (name, png) => void pictures.push({ name, png: Buffer.from(png) }) });
  assert.equal(pictures.length, 1);
  const png = pictures[0]?.png ?? Buffer.alloc(0);
  // Turned a quarter clockwise, the 200 × 100 box shows 100 wide and 200 tall (150 dpi).
  assert.deepEqual([png.readUInt32BE(16), png.readUInt32BE(20)], [Math.ceil((100 * 150) / 72), Math.ceil((200 * 150) / 72)]);
  assert.ok(pngMeanGray(png) < 20, `the crop is the black picture, mean gray ${pngMeanGray(png)}`);
  assert.equal(doc.pages[0]?.pictures?.[0]?.file, 'pictures/page-1-1.png');
});

test('text runs carry the style of their font: mono (Courier), italic (Oblique), bold, and a height', async () => {
  const doc = new PDFKit({ size: 'A4', margin: 56 });
  const chunks: Buffer[] = [];
  doc.on('data', (c: Buffer) => chunks.push(c));
  const done = new Promise<Buffer>((resolve) => doc.on('end', () => resolve(Buffer.concat(chunks))));
  doc.font('Courier').fontSize(10).text('const answer = 42;', 56, 80);
  doc.font('Helvetica-Oblique').fontSize(12).text('An emphasised line.', 56, 120);
  doc.font('Helvetica-Bold').fontSize(12).text('A bold line.', 56, 160);
  doc.end();
  const dir = mkdtempSync(path.join(tmpdir(), 'signet-style-'));
  try {
    const file = path.join(dir, 'style.pdf');
    (await import('node:fs')).writeFileSync(file, await done);
    const reader = await PdfReader.open(file);
    try {
      const { runs } = await reader.page(1);
      const run = (text: string) => runs.find((r) => r.text.includes(text));
      assert.equal(run('answer')?.mono, true);
      assert.equal(run('answer')?.italic, false);
      assert.equal(run('emphasised')?.italic, true);
      assert.equal(run('emphasised')?.mono, false);
      assert.equal(run('bold line')?.bold, true);
      assert.ok((run('answer')?.height ?? 0) > 5);
    } finally {
      reader.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('issue 17: "figures drawn with vectors" — a line chart is a picture region with its axes; a framed box of text and a ruled table are not', async () => {
  const doc = new PDFKit({ size: 'A4', margin: 56 });
  const chunks: Buffer[] = [];
  doc.on('data', (c: Buffer) => chunks.push(c));
  const done = new Promise<Buffer>((resolve) => doc.on('end', () => resolve(Buffer.concat(chunks))));
  doc.font('Helvetica').fontSize(12).text('A chart follows.', 56, 80);
  doc.moveTo(100, 400).lineTo(100, 200).stroke();
  doc.moveTo(100, 400).lineTo(400, 400).stroke();
  doc.moveTo(100, 380);
  for (let i = 1; i <= 12; i += 1) doc.lineTo(100 + i * 25, 380 - Math.sin(i / 2) * 80 - i * 8);
  doc.stroke();
  doc.circle(350, 250, 30).fill('#888');
  doc.fillColor('black').fontSize(10).text('Figure 2. A line chart.', 100, 410);
  doc.roundedRect(56, 500, 480, 120, 10).stroke();
  doc.fontSize(11).text('Lorem ipsum dolor sit amet, '.repeat(20), 66, 510, { width: 460 });
  for (let r = 0; r <= 3; r += 1) doc.moveTo(56, 650 + r * 20).lineTo(400, 650 + r * 20).stroke();
  for (let c = 0; c <= 3; c += 1) doc.moveTo(56 + c * 114, 650).lineTo(56 + c * 114, 710).stroke();
  doc.end();
  const dir = mkdtempSync(path.join(tmpdir(), 'signet-figure-'));
  try {
    const file = path.join(dir, 'figure.pdf');
    (await import('node:fs')).writeFileSync(file, await done);
    const reader = await PdfReader.open(file);
    try {
      const { images = [] } = await reader.page(1);
      assert.equal(images.length, 1, JSON.stringify(images));
      const box = images[0]?.bbox;
      // Drawn from (100, 200) to (400, 400) in pdfkit's top-down points on an 842-point page.
      assert.deepEqual([box?.l, box?.b, box?.r, box?.t].map((n) => Math.round(n ?? 0)), [100, 442, 400, 642]);
    } finally {
      reader.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('issue 31: "pages in parallel" — a long document read by three readers gives the pages one reader gives, in order', async () => {
  const { longDocumentPdf } = await import('../helpers/scans.ts');
  const pdf = await longDocumentPdf(14);
  const text = (doc: ParsedDocument) => doc.pages.map((page) => page.blocks.map((block) => block.text).join('\n'));
  const [one, three] = [await extractDocument(pdf, { threads: 1 }), await extractDocument(pdf, { threads: 3 })];
  assert.equal(three.pages.length, 14);
  assert.deepEqual(text(three), text(one));
  assert.match(text(three)[13] ?? '', /14\. Section 14/);
});
