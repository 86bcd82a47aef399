// Real PDFs for the document-parsing tests, drawn with pdfkit so every test reads the same bytes a
// user would upload: text positioned by a layout engine, drawn table rules, an embedded CJK font.
import PDFDocument from 'pdfkit';
import { fontPaths } from '../../src/documents/fonts.ts';

const A4 = { width: 595.28, height: 841.89 };
const LEFT = 56;
const CONTENT_WIDTH = A4.width - 2 * LEFT;

/** What the sample PDF says, so tests compare against the source rather than retyped strings. */
export const SAMPLE = {
  header: 'Signet test document',
  footer: (pageNo: number) => `Page ${pageNo}`,
  title: 'Signet Parsing Sample',
  intro:
    'This document exercises the parsing engine: headings in two sizes, a bulleted list, two columns, a ruled table and a page of Simplified Chinese text.',
  listHeading: 'Checklist',
  listItems: [
    'Every page keeps its text.',
    'Headings become Markdown headings, and this item is long enough to wrap onto a second line below its bullet.',
    'Tables become pipe tables.',
  ],
  notesHeading: 'Notes',
  notes: 'The page header and footer repeat on every page and stay out of the Markdown body.',
  columnsHeading: 'Two columns',
  // Each column has two paragraphs whose gaps fall at the same height, the case that makes naive
  // line-by-line (or top-down band) reading interleave the columns.
  leftColumn: [
    'A1 alpha begins the left column. A2 alpha keeps going with more words. A3 alpha is still on the left. A4 alpha ends the first paragraph.',
    'A5 alpha opens the second left paragraph. A6 alpha continues it here. A7 alpha nearly done. A8 alpha ends the left column.',
  ],
  rightColumn: [
    'B1 beta begins the right column. B2 beta keeps going with more words. B3 beta is still on the right. B4 beta ends the first paragraph.',
    'B5 beta opens the second right paragraph. B6 beta continues it here. B7 beta nearly done. B8 beta ends the right column.',
  ],
  closing: 'This closing paragraph spans the whole width below both columns and is read after them.',
  tableHeading: 'Results table',
  tableIntro: 'The table below is drawn with ruled lines.',
  table: [
    ['Name', 'Score', 'Grade'],
    ['Alice', '91', 'A'],
    ['Bob', '78', 'C'],
  ],
  steps: ['Open the file.', 'Read the table.'],
  afterTable: 'This paragraph follows the table.',
  chineseHeading: '文档解析测试',
  chinese: '这是一个用于验证中文文本提取的段落。文档解析引擎应当按照阅读顺序输出每一页的文字，并保留标点符号。',
} as const;

type Doc = PDFKit.PDFDocument;

function collect(doc: Doc): Promise<Buffer> {
  const chunks: Buffer[] = [];
  doc.on('data', (chunk: Buffer) => chunks.push(chunk));
  return new Promise((resolve, reject) => {
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });
}

/** The repeated running header and the page-numbered footer, in the top and bottom 8% of the page. */
function furniture(doc: Doc, pageNo: number): void {
  doc.font('Helvetica').fontSize(9).fillColor('#555555');
  doc.text(SAMPLE.header, LEFT, 30, { lineBreak: false });
  doc.text(SAMPLE.footer(pageNo), A4.width / 2 - 15, A4.height - 40, { lineBreak: false });
  doc.fillColor('black');
}

function heading(doc: Doc, text: string, size: number, y?: number): void {
  doc.font('Helvetica-Bold').fontSize(size).text(text, LEFT, y ?? doc.y, { width: CONTENT_WIDTH });
  doc.moveDown(0.4);
}

function paragraph(doc: Doc, text: string, x = LEFT, width = CONTENT_WIDTH, y?: number): void {
  doc.font('Helvetica').fontSize(11).text(text, x, y ?? doc.y, { width });
  doc.moveDown(0.6);
}

/** A list item as a text marker followed by its text, wrapped lines indented under the text. */
function listItem(doc: Doc, marker: string, text: string): void {
  const y = doc.y;
  doc.font('Helvetica').fontSize(11).text(marker, LEFT + 4, y, { lineBreak: false });
  doc.text(text, LEFT + 18, y, { width: CONTENT_WIDTH - 18 });
  doc.moveDown(0.2);
}

/** A table drawn the way most generators do: stroked rules around and between cells. */
function ruledTable(doc: Doc, rows: ReadonlyArray<ReadonlyArray<string>>, top: number): number {
  const widths = [180, 120, 120];
  const rowHeight = 24;
  const xs = widths.reduce<number[]>((edges, w) => [...edges, (edges.at(-1) ?? LEFT) + w], [LEFT]);
  const bottom = top + rows.length * rowHeight;
  doc.lineWidth(0.8);
  for (let r = 0; r <= rows.length; r += 1) doc.moveTo(LEFT, top + r * rowHeight).lineTo(xs.at(-1) ?? LEFT, top + r * rowHeight).stroke();
  for (const x of xs) doc.moveTo(x, top).lineTo(x, bottom).stroke();
  rows.forEach((row, r) => {
    doc.font(r === 0 ? 'Helvetica-Bold' : 'Helvetica').fontSize(11);
    row.forEach((cell, c) => doc.text(cell, (xs[c] ?? LEFT) + 6, top + r * rowHeight + 7, { lineBreak: false }));
  });
  return bottom;
}

/**
 * The sample: four A4 pages with a running header and footer. Page 1: a large bold title, a
 * subheading, a bulleted list. Page 2: two columns under a full-width heading, a full-width closing
 * paragraph. Page 3: a ruled 3×3 table with a header row and a numbered list. Page 4: Chinese text
 * in the embedded Noto Sans SC.
 */
export async function samplePdf(): Promise<Buffer> {
  const fonts = fontPaths();
  const doc = new PDFDocument({ size: 'A4', margins: { top: 72, bottom: 60, left: LEFT, right: LEFT }, autoFirstPage: false });
  const done = collect(doc);
  doc.info.Title = SAMPLE.title;

  doc.addPage();
  furniture(doc, 1);
  heading(doc, SAMPLE.title, 24, 80);
  paragraph(doc, SAMPLE.intro);
  heading(doc, SAMPLE.listHeading, 15);
  for (const item of SAMPLE.listItems) listItem(doc, '•', item);
  doc.moveDown(0.6);
  heading(doc, SAMPLE.notesHeading, 15);
  paragraph(doc, SAMPLE.notes);

  doc.addPage();
  furniture(doc, 2);
  heading(doc, SAMPLE.columnsHeading, 15, 80);
  const columnTop = doc.y;
  const columnWidth = (CONTENT_WIDTH - 20) / 2;
  let leftBottom = columnTop;
  let rightBottom = columnTop;
  for (const [i, text] of SAMPLE.leftColumn.entries()) {
    paragraph(doc, text, LEFT, columnWidth, i === 0 ? columnTop : undefined);
    leftBottom = doc.y;
  }
  for (const [i, text] of SAMPLE.rightColumn.entries()) {
    paragraph(doc, text, LEFT + columnWidth + 20, columnWidth, i === 0 ? columnTop : undefined);
    rightBottom = doc.y;
  }
  paragraph(doc, SAMPLE.closing, LEFT, CONTENT_WIDTH, Math.max(leftBottom, rightBottom) + 10);

  doc.addPage();
  furniture(doc, 3);
  heading(doc, SAMPLE.tableHeading, 15, 80);
  paragraph(doc, SAMPLE.tableIntro);
  const tableBottom = ruledTable(doc, SAMPLE.table, doc.y + 4);
  doc.y = tableBottom + 16;
  SAMPLE.steps.forEach((step, i) => listItem(doc, `${i + 1}.`, step));
  doc.moveDown(0.6);
  paragraph(doc, SAMPLE.afterTable);

  doc.addPage();
  furniture(doc, 4);
  doc.font(fonts.bold).fontSize(15).text(SAMPLE.chineseHeading, LEFT, 80);
  doc.moveDown(0.4);
  doc.font(fonts.regular).fontSize(12).text(SAMPLE.chinese, LEFT, doc.y, { width: 300 });

  doc.end();
  return done;
}

/** A PDF of `pages` plain pages, each saying which page it is: for progress and abort tests. */
export async function plainPdf(pages: number): Promise<Buffer> {
  const doc = new PDFDocument({ size: 'A4', autoFirstPage: false });
  const done = collect(doc);
  for (let n = 1; n <= pages; n += 1) {
    doc.addPage();
    doc.font('Helvetica').fontSize(12).text(`Plain page ${n}.`, LEFT, 100);
  }
  doc.end();
  return done;
}

/** A PDF that opens only with a password. */
export async function passwordPdf(): Promise<Buffer> {
  const doc = new PDFDocument({ size: 'A4', userPassword: 'secret', ownerPassword: 'owner', pdfVersion: '1.7' });
  const done = collect(doc);
  doc.font('Helvetica').fontSize(12).text('Locked.', LEFT, 100);
  doc.end();
  return done;
}

/** Not a PDF at all: the magic bytes of a PNG followed by filler. */
export function notAPdf(): Buffer {
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(64, 7)]);
}

/** Starts like a PDF, then truncated garbage: no objects, no cross-reference table, no trailer. */
export function corruptPdf(): Buffer {
  return Buffer.concat([Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Cat', 'latin1'), Buffer.alloc(200, 0x3f)]);
}
