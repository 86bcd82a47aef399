// PDFs for the table and text-role rules of issue 17, drawn with pdfkit so their structure is known
// by construction: each function returns the bytes and the truth the parser must find.
import PDFDocument from 'pdfkit';
import { solidPng } from './scans.ts';

type Doc = PDFKit.PDFDocument;
const LEFT = 72;

function collect(doc: Doc): Promise<Buffer> {
  const chunks: Buffer[] = [];
  doc.on('data', (chunk: Buffer) => chunks.push(chunk));
  return new Promise((resolve, reject) => {
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });
}

const newDoc = () => new PDFDocument({ size: 'A4', margins: { top: 72, bottom: 40, left: LEFT, right: LEFT }, autoFirstPage: false });

function paragraph(doc: Doc, text: string, x = LEFT, width = 451, size = 11): void {
  doc.font('Times-Roman').fontSize(size).text(text, x, doc.y, { width, align: 'justify' });
  doc.moveDown(0.8);
}

const PROSE =
  'Typeset documents carry their structure in the way text is placed on the page. A reader sees columns, rules and headings at a glance, and a parser has to recover the same structure from positioned glyphs alone, without the help of the markup that produced them.';

/** Cells of each row placed at fixed column x positions, the numbers right-aligned at their column's right edge. */
function rowsAt(doc: Doc, rows: readonly (readonly string[])[], xs: readonly number[], rightAligned: readonly boolean[], top: number, pitch: number, widths: readonly number[]): number {
  let y = top;
  for (const row of rows) {
    row.forEach((cell, c) => {
      if (cell === '') return;
      const x = xs[c] ?? LEFT;
      const w = widths[c] ?? 80;
      const width = doc.widthOfString(cell);
      doc.text(cell, rightAligned[c] ? x + w - width : x, y, { lineBreak: false });
    });
    y += pitch;
  }
  return y;
}

export const BOOKTABS = {
  group: 'Item',
  header: ['Animal', 'Description', 'Price ($)'],
  body: [
    ['Gnat', 'per gram', '13.65'],
    ['', 'each', '0.01'],
    ['Gnu', 'stuffed', '92.50'],
    ['Emu', 'stuffed', '33.33'],
    ['Armadillo', 'frozen', '8.99'],
  ],
  caption: 'Table 1: Prices of stuffed animals.',
};

/** A booktabs table: top, mid and bottom rules, a partial rule under the group heading "Item" over two columns, a caption above. */
export async function ruleOnlyTablePdf(): Promise<Buffer> {
  const doc = newDoc();
  const done = collect(doc);
  doc.addPage();
  paragraph(doc, PROSE);
  doc.font('Times-Roman').fontSize(10).text(BOOKTABS.caption, 200, doc.y, { lineBreak: false });
  const xs = [200, 270, 350];
  const widths = [60, 70, 60];
  const left = 196;
  const right = 414;
  let y = doc.y + 18;
  doc.lineWidth(0.8).moveTo(left, y).lineTo(right, y).stroke();
  doc.font('Times-Roman').fontSize(10);
  doc.text(BOOKTABS.group, 252, y + 5, { lineBreak: false });
  doc.lineWidth(0.3).moveTo(left, y + 17).lineTo(340, y + 17).stroke();
  y = rowsAt(doc, [BOOKTABS.header], xs, [false, false, true], y + 21, 14, widths);
  doc.lineWidth(0.5).moveTo(left, y).lineTo(right, y).stroke();
  y = rowsAt(doc, BOOKTABS.body, xs, [false, false, true], y + 5, 13, widths);
  doc.lineWidth(0.8).moveTo(left, y + 2).lineTo(right, y + 2).stroke();
  doc.y = y + 20;
  paragraph(doc, PROSE);
  doc.end();
  return done;
}

export const RULED = {
  rows: [
    ['Item', 'Unit', 'Price'],
    ['gnats', 'gram', '$13.65'],
    ['gnu', 'stuffed', '92.50'],
    ['emu', 'frozen', '33.33'],
  ],
};

/** A fully ruled table whose middle column rule separates text that sits close to it on both sides. */
export async function ruledTablePdf(): Promise<Buffer> {
  const doc = newDoc();
  const done = collect(doc);
  doc.addPage();
  paragraph(doc, PROSE);
  const xs = [100, 180, 232, 300];
  const top = doc.y + 10;
  const pitch = 16;
  doc.lineWidth(0.6);
  for (let r = 0; r <= RULED.rows.length; r += 1) doc.moveTo(xs[0] ?? 0, top + r * pitch).lineTo(xs.at(-1) ?? 0, top + r * pitch).stroke();
  for (const x of xs) doc.moveTo(x, top).lineTo(x, top + RULED.rows.length * pitch).stroke();
  doc.font('Times-Roman').fontSize(10);
  RULED.rows.forEach((row, r) => {
    // "gram" ends 2 points before the rule and "$13.65" starts 2 points after it: only the rule separates them.
    doc.text(row[0] ?? '', 104, top + r * pitch + 4, { lineBreak: false });
    const unit = row[1] ?? '';
    doc.text(unit, 230 - doc.widthOfString(unit), top + r * pitch + 4, { lineBreak: false });
    doc.text(row[2] ?? '', 234, top + r * pitch + 4, { lineBreak: false });
  });
  doc.y = top + RULED.rows.length * pitch + 20;
  paragraph(doc, PROSE);
  doc.end();
  return done;
}

export const STREAM = {
  rows: [
    ['Region', 'Units', 'Revenue', 'Growth'],
    ['North', '1,204', '45,310', '3.2%'],
    ['South', '987', '38,002', '-1.4%'],
    ['East', '1,530', '61,245', '7.9%'],
    ['West', '1,112', '40,877', '0.6%'],
  ],
};

/** A table without any rule: four columns lined up by whitespace alone, numbers right-aligned. */
export async function streamTablePdf(): Promise<Buffer> {
  const doc = newDoc();
  const done = collect(doc);
  doc.addPage();
  paragraph(doc, PROSE);
  doc.font('Times-Roman').fontSize(10);
  const y = rowsAt(doc, STREAM.rows, [100, 200, 290, 380], [false, true, true, true], doc.y + 6, 14, [60, 50, 60, 50]);
  doc.y = y + 12;
  paragraph(doc, PROSE);
  doc.end();
  return done;
}

/** Two columns of justified prose side by side: no table. */
export async function twoColumnProsePdf(): Promise<Buffer> {
  const doc = newDoc();
  const done = collect(doc);
  doc.addPage();
  const top = doc.y;
  for (let i = 0; i < 3; i += 1) paragraph(doc, PROSE, LEFT, 215, 10);
  doc.y = top;
  for (let i = 0; i < 3; i += 1) paragraph(doc, PROSE, LEFT + 236, 215, 10);
  doc.end();
  return done;
}

export const TITLED = {
  title: 'Publication quality tables',
  author: 'Ada Lovelace',
  address: '12 Analytical Street, London',
  sections: [
    { text: '1 Introduction', level: 2 },
    { text: '1.1 A note on terminology', level: 3 },
    { text: '2 The layout of formal tables', level: 2 },
  ],
  footnote: 'This file has version number 1.618.',
};

/**
 * Three pages: a title with a raised footnote mark, centred author and address lines, numbered
 * sections in two sizes, a footnote under the body, and a page number in the margin well above
 * the bottom edge on every page.
 */
export async function titledPdf(): Promise<Buffer> {
  const doc = newDoc();
  const done = collect(doc);
  for (let page = 1; page <= 3; page += 1) {
    doc.addPage();
    if (page === 1) {
      doc.font('Times-Roman').fontSize(17);
      const titleWidth = doc.widthOfString(TITLED.title);
      const x = 297.6 - titleWidth / 2;
      doc.text(TITLED.title, x, 110, { lineBreak: false });
      doc.fontSize(8).text('*', x + titleWidth + 1, 108, { lineBreak: false });
      doc.fontSize(12).text(TITLED.author, 72, 150, { width: 451, align: 'center' });
      doc.text(TITLED.address, 72, 166, { width: 451, align: 'center' });
      doc.y = 210;
    }
    const section = TITLED.sections[page - 1];
    if (section) {
      doc.font('Times-Bold').fontSize(section.level === 2 ? 14 : 12).text(section.text, LEFT, doc.y < 100 ? 90 : doc.y);
      doc.moveDown(0.5);
    }
    paragraph(doc, PROSE);
    paragraph(doc, PROSE);
    if (page === 1) {
      doc.lineWidth(0.4).moveTo(LEFT, 660).lineTo(LEFT + 140, 660).stroke();
      doc.font('Times-Roman').fontSize(6).text('*', LEFT, 664, { lineBreak: false });
      doc.fontSize(8).text(TITLED.footnote, LEFT + 4, 666, { lineBreak: false });
    }
    // LaTeX puts the page number well inside the bottom margin, above the 8 % edge zone.
    doc.font('Times-Roman').fontSize(10).text(String(page), 294, 700, { lineBreak: false });
  }
  doc.end();
  return done;
}

export const FIGURE_COLUMNS = {
  title: 'Reading Order on Multi-Column Pages',
  headings: ['1 Columns', '2 Figures'],
  /** In reading order: the upper band's left column, its right column, then the lower band's. */
  upper: [
    'Multi-column pages are read column by column, the left column before the right one.',
    'The left column continues with a second paragraph before the right column starts.',
    'The right column starts at the same height as the left one and follows it in the reading order.',
    'Its second paragraph ends the upper band of the page, just above the figure.',
  ],
  caption: 'Figure 1: A picture as wide as both columns, between two bands of text.',
  lower: ['The lower band holds one more paragraph on the left, read after the figure.', 'The right column of the lower band ends the page and is read last of all.'],
};

/**
 * A centred title over two columns that each start with a short heading (so the title leaves a
 * gap beside the left heading), a picture as wide as both columns with its caption below, and two
 * more columns under it.
 */
export async function columnsWithFigurePdf(): Promise<Buffer> {
  const doc = newDoc();
  const done = collect(doc);
  doc.addPage();
  doc.font('Times-Bold').fontSize(18).text(FIGURE_COLUMNS.title, LEFT, 80, { width: 451, align: 'center' });
  const top = doc.y + 10;
  const width = 215;
  const columns: Array<[number, string, string[]]> = [
    [LEFT, FIGURE_COLUMNS.headings[0] ?? '', FIGURE_COLUMNS.upper.slice(0, 2)],
    [LEFT + 236, FIGURE_COLUMNS.headings[1] ?? '', FIGURE_COLUMNS.upper.slice(2)],
  ];
  let bottom = top;
  for (const [x, heading, texts] of columns) {
    doc.font('Times-Bold').fontSize(14).text(heading, x, top, { width });
    doc.moveDown(0.3);
    for (const text of texts) paragraph(doc, text, x, width, 10);
    bottom = Math.max(bottom, doc.y);
  }
  doc.image(solidPng(371, 110, 170), LEFT + 40, bottom + 6, { width: 371, height: 110 });
  doc.font('Times-Roman').fontSize(10).text(FIGURE_COLUMNS.caption, LEFT, bottom + 124, { width: 451, align: 'center' });
  const lower = doc.y + 12;
  FIGURE_COLUMNS.lower.forEach((text, i) => {
    doc.y = lower;
    paragraph(doc, text, LEFT + i * 236, width, 10);
  });
  doc.end();
  return done;
}
