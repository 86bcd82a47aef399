// Typeset-looking PDFs for the layout-keeping translation tests (issue 18), drawn with pdfkit so the
// truth is known by construction: a coloured panel, a vector figure, an embedded image, a ruled table
// with numbers, a code block, a formula, a URL and page numbers. `scannedPdf` turns any PDF into an
// image-only one (pdftoppm → PNG → pdf-lib), the way a scanner would deliver it.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { PDFDocument as PdfLib } from 'pdf-lib';
import PDFDocument from 'pdfkit';
import type { BoundingBox, Table } from '../../src/documents/document.ts';

const run = promisify(execFile);
export const PAGE = { width: 595.28, height: 841.89 };
const LEFT = 60;

export const MANUAL = {
  title: 'Garden Manual',
  intro: 'This manual explains how the small garden is planted. Water the plants in the morning and check the soil every week.',
  panel: 'The blue panel holds an important note: the water must be clean.',
  figureCaption: 'The picture shows the house and the garden.',
  figureLabel: 'Door',
  url: 'https://example.org/garden',
  tableHeading: 'Prices',
  table: [
    ['Plant', 'Price', 'Stock'],
    ['Tree', '13.65', '92'],
    ['Flower', '0.01', '8'],
  ],
  code: ['let water = 5;', 'plant(tree, water);'],
  formula: 'x = y + 2z',
  after: 'The house is near the river.',
} as const;

/** Where things were drawn (PDF points, top-down as pdfkit draws). */
const TABLE = { top: 160, rowHeight: 24, widths: [150, 100, 100] };
const CODE_TOP = 260;
const FORMULA_TOP = 310;

function collect(doc: PDFKit.PDFDocument): Promise<Buffer> {
  const chunks: Buffer[] = [];
  doc.on('data', (chunk: Buffer) => chunks.push(chunk));
  return new Promise((resolve, reject) => {
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });
}

function imageFile(): string {
  const root = path.dirname(createRequire(import.meta.url).resolve('@expo-google-fonts/noto-sans-sc/package.json'));
  return path.join(root, '400Regular/NotoSansSC_400Regular.ttf.png');
}

/** A two-page manual: page 1 prose, panel, figure, image, URL; page 2 table, code, formula. `pages` repeats the pair. */
export async function manualPdf(pairs = 1): Promise<Buffer> {
  const doc = new PDFDocument({ size: [PAGE.width, PAGE.height], margin: 0, autoFirstPage: false });
  const done = collect(doc);
  for (let pair = 0; pair < pairs; pair++) {
    doc.addPage();
    doc.font('Helvetica-Bold').fontSize(20).text(MANUAL.title, LEFT, 70, { lineBreak: false });
    doc.font('Helvetica').fontSize(11).text(MANUAL.intro, LEFT, 110, { width: 300 });
    doc.rect(LEFT - 6, 180, 320, 44).fill('#cfe3ff');
    doc.fillColor('black').font('Helvetica').fontSize(11).text(MANUAL.panel, LEFT, 188, { width: 300 });
    // The figure: a house of vector paths, and an embedded image beside it.
    doc.lineWidth(2).strokeColor('#aa3300').rect(LEFT, 260, 120, 80).stroke();
    doc.moveTo(LEFT, 260).lineTo(LEFT + 60, 220).lineTo(LEFT + 120, 260).fillAndStroke('#ffcc00', '#aa3300');
    doc.circle(LEFT + 200, 290, 30).fill('#33aa55');
    // A label drawn as text inside the figure: text in a picture, which stays as drawn.
    doc.fillColor('black').font('Helvetica').fontSize(10).text(MANUAL.figureLabel, LEFT + 45, 300, { lineBreak: false });
    doc.image(imageFile(), 400, 230, { width: 120 });
    doc.fillColor('black').font('Helvetica-Oblique').fontSize(10).text(MANUAL.figureCaption, LEFT, 360, { lineBreak: false });
    doc.font('Helvetica').fontSize(11).text(MANUAL.url, LEFT, 400, { lineBreak: false });
    doc.font('Helvetica').fontSize(9).text(String(2 * pair + 1), PAGE.width / 2, PAGE.height - 40, { lineBreak: false });

    doc.addPage();
    doc.font('Helvetica-Bold').fontSize(15).text(MANUAL.tableHeading, LEFT, 120, { lineBreak: false });
    ruledTable(doc);
    doc.font('Courier').fontSize(10);
    MANUAL.code.forEach((line, i) => doc.text(line, LEFT, CODE_TOP + i * 13, { lineBreak: false }));
    doc.font('Times-Italic').fontSize(12).text(MANUAL.formula, LEFT + 100, FORMULA_TOP, { lineBreak: false });
    doc.font('Helvetica').fontSize(11).text(MANUAL.after, LEFT, 350, { lineBreak: false });
    doc.font('Helvetica').fontSize(9).text(String(2 * pair + 2), PAGE.width / 2, PAGE.height - 40, { lineBreak: false });
  }
  doc.end();
  return done;
}

/** Paragraphs set close together at the top of a page, with the rest of the column empty. */
export const TIGHT = [
  'The garden is watered every morning before the sun is high, and again in the evening when it is hot.',
  'Each tree gets one bucket of water and each flower a cup, so that the roots stay wet all day long.',
  'The soil is checked every week with a small stick, and dry places get more water the next morning.',
  'Dry leaves are taken away and put on the heap behind the house, where they turn into good soil.',
  'In winter the plants are covered with old sacks, and the tools are cleaned and put in the shed.',
] as const;

/** One page: TIGHT's paragraphs at 11 pt, 300 pt wide, 6 pt apart, from the top; nothing below them. */
export async function tightPdf(): Promise<Buffer> {
  const doc = new PDFDocument({ size: [PAGE.width, PAGE.height], margin: 0 });
  const done = collect(doc);
  doc.font('Helvetica').fontSize(11);
  let y = 80;
  for (const text of TIGHT) {
    doc.text(text, LEFT, y, { width: 300 });
    y += doc.heightOfString(text, { width: 300 }) + 6;
  }
  doc.end();
  return done;
}

function ruledTable(doc: PDFKit.PDFDocument): void {
  const { top, rowHeight, widths } = TABLE;
  const xs = widths.reduce<number[]>((edges, w) => [...edges, edges.at(-1)! + w], [LEFT]);
  const bottom = top + MANUAL.table.length * rowHeight;
  doc.lineWidth(0.8).strokeColor('black');
  for (let r = 0; r <= MANUAL.table.length; r++) doc.moveTo(LEFT, top + r * rowHeight).lineTo(xs.at(-1)!, top + r * rowHeight).stroke();
  for (const x of xs) doc.moveTo(x, top).lineTo(x, bottom).stroke();
  MANUAL.table.forEach((row, r) => {
    doc.fillColor('black').font(r === 0 ? 'Helvetica-Bold' : 'Helvetica').fontSize(11);
    row.forEach((cell, c) => doc.text(cell, xs[c]! + 6, top + r * rowHeight + 7, { lineBreak: false }));
  });
}

const box = (l: number, top: number, r: number, bottom: number): BoundingBox => ({ l, t: PAGE.height - top, r, b: PAGE.height - bottom });

/** The table grid of page 2 as a parser with cell boxes (DOCMODEL `table`) reports it. */
export function manualTable(): Table {
  const { top, rowHeight, widths } = TABLE;
  const xs = widths.reduce<number[]>((edges, w) => [...edges, edges.at(-1)! + w], [LEFT]);
  return {
    numRows: MANUAL.table.length,
    numCols: widths.length,
    cells: MANUAL.table.flatMap((row, r) =>
      row.map((text, c) => ({ text, bbox: box(xs[c]! + 2, top + r * rowHeight + 2, xs[c + 1]! - 2, top + (r + 1) * rowHeight - 2), row: r, col: c, rowSpan: 1, colSpan: 1, columnHeader: r === 0, rowHeader: false })),
    ),
  };
}

/** The boxes of page 2's code and formula blocks, as a parser that labels them would report. */
export const MANUAL_BOXES = {
  /** Page 1's figure (the house, the tree and the image), as a parser that finds pictures reports it. */
  figure: box(LEFT - 2, 215, 522, 345),
  code: box(LEFT, CODE_TOP - 1, LEFT + 130, CODE_TOP + 26),
  formula: box(LEFT + 100, FORMULA_TOP - 1, LEFT + 170, FORMULA_TOP + 14),
  table: box(LEFT, TABLE.top, LEFT + 350, TABLE.top + 3 * TABLE.rowHeight),
};

/** The same pages as images only, no text layer: each page rendered at `dpi` and placed on a page of its size. */
export async function scannedPdf(source: Uint8Array, dpi = 150): Promise<Uint8Array> {
  const dir = await mkdtemp(path.join(tmpdir(), 'signet-scan-'));
  try {
    await writeFile(path.join(dir, 'in.pdf'), source);
    await run('pdftoppm', ['-png', '-r', String(dpi), path.join(dir, 'in.pdf'), path.join(dir, 'page')], { timeout: 60_000 });
    const original = await PdfLib.load(source);
    const out = await PdfLib.create();
    const files = (await readdir(dir)).filter((f) => f.startsWith('page')).sort();
    for (const [i, file] of files.entries()) {
      const { width, height } = original.getPage(i).getSize();
      const image = await out.embedPng(await readFile(path.join(dir, file)));
      out.addPage([width, height]).drawImage(image, { x: 0, y: 0, width, height });
    }
    return out.save();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
