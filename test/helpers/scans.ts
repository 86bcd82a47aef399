// Scanned and hostile PDFs for the reading tests, built from real parts: pages drawn with pdfkit,
// rendered to 300-dpi gray images by poppler's pdftoppm and embedded back into an image-only PDF
// with pdf-lib (what a scanner produces); hostile files written byte by byte with a correct xref.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createDeflate, inflateSync } from 'node:zlib';
import { degrees, PDFDocument } from 'pdf-lib';
import PDFKit from 'pdfkit';
import { encodePng } from '../../src/documents/pdf/png.ts';

/** Why scanning cannot be done here (poppler missing), or undefined. */
export function scanToolsMissing(): string | undefined {
  try {
    execFileSync('pdftoppm', ['-v'], { stdio: 'ignore' });
    return undefined;
  } catch {
    return 'poppler-utils (pdftoppm) is not installed';
  }
}

/** Why OCR cannot run here (tesseract or its eng data missing), or undefined. */
export function tesseractMissing(): string | undefined {
  try {
    const langs = execFileSync('tesseract', ['--list-langs'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    return /^eng$/m.test(langs) ? undefined : 'tesseract has no eng language data (apt-get install tesseract-ocr-eng)';
  } catch {
    return 'tesseract is not installed (apt-get install tesseract-ocr tesseract-ocr-eng tesseract-ocr-chi-sim)';
  }
}

/** The PDF with every page replaced by a gray image of it at `dpi` (no text layer left). */
export async function scanPdf(pdf: Uint8Array, dpi = 300): Promise<Buffer> {
  const dir = mkdtempSync(path.join(tmpdir(), 'signet-scan-'));
  try {
    writeFileSync(path.join(dir, 'in.pdf'), pdf);
    execFileSync('pdftoppm', ['-r', String(dpi), '-gray', '-png', path.join(dir, 'in.pdf'), path.join(dir, 'page')], { timeout: 120_000 });
    const source = await PDFDocument.load(pdf);
    const out = await PDFDocument.create();
    const images = readdirSync(dir).filter((f) => f.startsWith('page') && f.endsWith('.png')).sort();
    for (const [i, name] of images.entries()) {
      const { width, height } = source.getPage(i).getSize();
      const png = await out.embedPng(readFileSync(path.join(dir, name)));
      out.addPage([width, height]).drawImage(png, { x: 0, y: 0, width, height });
    }
    return Buffer.from(await out.save());
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Pages of a pdf (in this order) copied into one document: for mixed text-layer and scanned files. */
export async function joinPdfs(...pdfs: Uint8Array[]): Promise<Buffer> {
  const out = await PDFDocument.create();
  for (const pdf of pdfs) {
    const source = await PDFDocument.load(pdf);
    for (const page of await out.copyPages(source, source.getPageIndices())) out.addPage(page);
  }
  return Buffer.from(await out.save());
}

/** One A4 page of prose drawn with pdfkit: a heading and paragraphs (Helvetica). */
export function prosePdf(heading: string, paragraphs: string[]): Promise<Buffer> {
  const doc = new PDFKit({ size: 'A4', margin: 56 });
  const chunks: Buffer[] = [];
  doc.on('data', (c: Buffer) => chunks.push(c));
  const done = new Promise<Buffer>((resolve) => doc.on('end', () => resolve(Buffer.concat(chunks))));
  doc.font('Helvetica-Bold').fontSize(20).text(heading);
  doc.moveDown(0.5);
  for (const text of paragraphs) doc.font('Helvetica').fontSize(12).text(text, { align: 'left' }).moveDown(0.6);
  doc.end();
  return done;
}

/** A PDF from raw objects (bodies without `n 0 obj`), with a correct xref table; object 1 is the catalog. */
export function rawPdf(objects: Array<string | Buffer>): Buffer {
  const parts: Buffer[] = [Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n', 'latin1')];
  let offset = parts[0]?.length ?? 0;
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(offset);
    const chunk = Buffer.concat([Buffer.from(`${i + 1} 0 obj\n`), typeof body === 'string' ? Buffer.from(body, 'latin1') : body, Buffer.from('\nendobj\n')]);
    parts.push(chunk);
    offset += chunk.length;
  });
  const xref = [`xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`, ...offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`)].join('');
  parts.push(Buffer.from(`${xref}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${offset}\n%%EOF\n`));
  return Buffer.concat(parts);
}

/** `size` bytes of zeros deflated as a stream, without ever holding them (≈ 1 MB per GB inflated). */
export async function deflatedZeros(size: number): Promise<Buffer> {
  const deflate = createDeflate({ level: 9 });
  const chunks: Buffer[] = [];
  deflate.on('data', (c: Buffer) => chunks.push(c));
  const ended = new Promise<void>((resolve, reject) => deflate.on('end', resolve).on('error', reject));
  const block = Buffer.alloc(16 * 2 ** 20);
  for (let written = 0; written < size; written += block.length) {
    const piece = written + block.length <= size ? block : block.subarray(0, size - written);
    if (!deflate.write(piece)) await new Promise((r) => deflate.once('drain', r));
  }
  deflate.end();
  await ended;
  return Buffer.concat(chunks);
}

/** A one-page PDF whose content stream is `deflated` (FlateDecode). */
export function pdfWithContent(deflated: Buffer, mediaBox = [0, 0, 595, 842]): Buffer {
  return rawPdf([
    '<< /Type /Catalog /Pages 2 0 R >>',
    `<< /Type /Pages /Kids [3 0 R] /Count 1 >>`,
    `<< /Type /Page /Parent 2 0 R /MediaBox [${mediaBox.join(' ')}] /Contents 4 0 R /Resources << >> >>`,
    Buffer.concat([Buffer.from(`<< /Length ${deflated.length} /Filter /FlateDecode >>\nstream\n`), deflated, Buffer.from('\nendstream')]),
  ]);
}

/** `pages` pages, each with one line of text — for a document of thousands of pages. */
export function manyPagesPdf(pages: number, text = (n: number) => `This is page ${n} of a long document.`): Buffer {
  const objects: string[] = ['<< /Type /Catalog /Pages 2 0 R >>', '', '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>'];
  const kids: string[] = [];
  for (let n = 1; n <= pages; n += 1) {
    const content = `BT /F1 12 Tf 72 720 Td (${text(n)}) Tj ET`;
    objects.push(`<< /Length ${content.length} >>\nstream\n${content}\nendstream`);
    objects.push(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents ${objects.length} 0 R /Resources << /Font << /F1 3 0 R >> >> >>`);
    kids.push(`${objects.length} 0 R`);
  }
  objects[1] = `<< /Type /Pages /Kids [${kids.join(' ')}] /Count ${pages} >>`;
  return rawPdf(objects);
}

/** A typical long document: `pages` A4 pages of headings and justified paragraphs, drawn by pdfkit. */
export function longDocumentPdf(pages: number): Promise<Buffer> {
  const doc = new PDFKit({ size: 'A4', margin: 56, autoFirstPage: false });
  const chunks: Buffer[] = [];
  doc.on('data', (c: Buffer) => chunks.push(c));
  const done = new Promise<Buffer>((resolve) => doc.on('end', () => resolve(Buffer.concat(chunks))));
  const sentence = (n: number, k: number) => `Sentence ${k} of page ${n} reports measured values, names the method and cites the table that holds them.`;
  for (let n = 1; n <= pages; n += 1) {
    doc.addPage();
    doc.font('Helvetica').fontSize(9).text(`Long document — page ${n}`, 56, 30);
    doc.font('Helvetica-Bold').fontSize(14).text(`${n}. Section ${n}`, 56, 70);
    doc.moveDown(0.4);
    for (let p = 0; p < 4; p += 1) {
      doc.font('Helvetica').fontSize(10).text(Array.from({ length: 6 }, (_, k) => sentence(n, p * 6 + k)).join(' '), { align: 'justify' });
      doc.moveDown(0.5);
    }
  }
  doc.end();
  return done;
}

/** A PNG of `width` × `height` gray pixels, all `value` (0 black … 255 white). */
export function solidPng(width: number, height: number, value: number): Buffer {
  return encodePng(Buffer.alloc(width * height, value), width, height, 1);
}

/** The mean gray level (0–255) of an 8-bit gray or RGB PNG without interlace (what pdftoppm writes). */
export function pngMeanGray(png: Buffer): number {
  const width = png.readUInt32BE(16);
  const height = png.readUInt32BE(20);
  const channels = ({ 0: 1, 2: 3, 4: 2, 6: 4 } as Record<number, number>)[png[25] ?? 0] ?? 1;
  const idat: Buffer[] = [];
  for (let at = 8; at < png.length; ) {
    const length = png.readUInt32BE(at);
    if (png.toString('latin1', at + 4, at + 8) === 'IDAT') idat.push(png.subarray(at + 8, at + 8 + length));
    at += length + 12;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  let previous = Buffer.alloc(stride);
  let sum = 0;
  for (let y = 0; y < height; y += 1) {
    const filter = raw[y * (stride + 1)];
    const line = Buffer.from(raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1)));
    for (let i = 0; i < stride; i += 1) {
      const a = i >= channels ? (line[i - channels] ?? 0) : 0;
      const b = previous[i] ?? 0;
      const c = i >= channels ? (previous[i - channels] ?? 0) : 0;
      const p = a + b - c;
      const paeth = Math.abs(p - a) <= Math.abs(p - b) && Math.abs(p - a) <= Math.abs(p - c) ? a : Math.abs(p - b) <= Math.abs(p - c) ? b : c;
      const add = filter === 1 ? a : filter === 2 ? b : filter === 3 ? (a + b) >> 1 : filter === 4 ? paeth : 0;
      line[i] = ((line[i] ?? 0) + add) & 0xff;
    }
    for (let x = 0; x < width; x += 1) sum += line[x * channels] ?? 0;
    previous = line;
  }
  return sum / (width * height);
}

/** A scanned page stored sideways: the image is drawn turned a quarter left on a landscape page with /Rotate 90, so viewers (and pdftoppm) show it upright. */
export async function sidewaysScanPdf(pdf: Uint8Array, dpi = 300): Promise<Buffer> {
  const dir = mkdtempSync(path.join(tmpdir(), 'signet-sideways-'));
  try {
    writeFileSync(path.join(dir, 'in.pdf'), pdf);
    execFileSync('pdftoppm', ['-r', String(dpi), '-gray', '-png', '-singlefile', '-f', '1', '-l', '1', path.join(dir, 'in.pdf'), path.join(dir, 'page')], { timeout: 120_000 });
    const { width, height } = (await PDFDocument.load(pdf)).getPage(0).getSize();
    const out = await PDFDocument.create();
    const png = await out.embedPng(readFileSync(path.join(dir, 'page.png')));
    const page = out.addPage([height, width]);
    page.drawImage(png, { x: height, y: 0, width, height, rotate: degrees(90) });
    page.setRotation(degrees(90));
    return Buffer.from(await out.save());
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
