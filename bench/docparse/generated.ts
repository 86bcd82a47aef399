// Generated documents whose ground truth is known by construction: every element is drawn with
// pdfkit at a position this code chooses, and the same call writes the element's ground-truth
// Markdown (in reading order, page furniture left out, as opendataloader-bench's ground truth is
// written), its heading (text and Markdown level) and, for tables, its cell grid with spans.
import PDFDocument from 'pdfkit';
import type { GridCell, Heading } from './metrics.ts';
import { solidPng } from '../../test/helpers/scans.ts';

type Doc = PDFKit.PDFDocument;

export type PageTruth = { markdown: string[]; headings: Heading[]; tables: GridCell[][] };
export type CorpusDocument = {
  name: string;
  kind: 'generated' | 'debian' | 'scan';
  pdf: Buffer;
  /** Ground truth, one entry per scored page. */
  pages: PageTruth[];
  /** The 1-based page numbers the truth is for, when not all pages of the PDF (default 1, 2, …). */
  pageNumbers?: number[];
  /** Those pages alone, as a PDF (what is scanned for the OCR path). */
  excerpt?: Buffer;
};

const LEFT = 72;
const WIDTH = 451;
const HEIGHT = 842;

function collect(doc: Doc): Promise<Buffer> {
  const chunks: Buffer[] = [];
  doc.on('data', (chunk: Buffer) => chunks.push(chunk));
  return new Promise((resolve, reject) => {
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });
}

const escapeHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** Draws and records: each method puts something on the current page and writes its truth. */
class Writer {
  readonly doc: Doc = new PDFDocument({ size: 'A4', margins: { top: 20, bottom: 10, left: LEFT, right: LEFT }, autoFirstPage: false });
  readonly done = collect(this.doc);
  readonly pages: PageTruth[] = [];
  private pageNo = 0;

  private readonly runningHead: string;

  constructor(runningHead: string) {
    this.runningHead = runningHead;
  }

  private get page(): PageTruth {
    const page = this.pages.at(-1);
    if (!page) throw new Error('no page yet');
    return page;
  }

  /** A new page with its running head at the top and its number at the bottom (furniture: no truth). */
  newPage(): void {
    this.doc.addPage();
    this.pageNo += 1;
    this.pages.push({ markdown: [], headings: [], tables: [] });
    this.doc.font('Times-Italic').fontSize(9).text(this.runningHead, LEFT, 36, { width: WIDTH, align: 'right', lineBreak: false });
    this.doc.font('Times-Roman').fontSize(10).text(String(this.pageNo), 0, HEIGHT - 50, { width: 595, align: 'center', lineBreak: false });
    this.doc.y = 80;
  }

  title(text: string, size = 20): void {
    this.doc.font('Times-Bold').fontSize(size).text(text, LEFT, this.doc.y, { width: WIDTH, align: 'center' });
    this.doc.moveDown(0.4);
    this.page.markdown.push(`# ${text}`);
    this.page.headings.push({ text, level: 1 });
  }

  /** Centred title-page matter (author, affiliation): text, not headings. */
  byline(text: string): void {
    this.doc.font('Times-Roman').fontSize(12).text(text, LEFT, this.doc.y, { width: WIDTH, align: 'center' });
    this.page.markdown.push(text);
  }

  /** A numbered (or unnumbered) section heading; `level` is the Markdown depth (the title is 1). */
  heading(text: string, level: number, x = LEFT, width = WIDTH): void {
    const size = ({ 2: 14, 3: 12, 4: 11 } as Record<number, number>)[level] ?? 11;
    this.doc.moveDown(0.5);
    this.doc.font('Times-Bold').fontSize(size).text(text, x, this.doc.y, { width });
    this.doc.moveDown(0.3);
    this.page.markdown.push(`${'#'.repeat(level)} ${text}`);
    this.page.headings.push({ text, level });
  }

  paragraph(text: string, x = LEFT, width = WIDTH, size = 11): void {
    this.doc.font('Times-Roman').fontSize(size).text(text, x, this.doc.y, { width, align: 'justify' });
    this.doc.moveDown(0.7);
    this.page.markdown.push(text);
  }

  list(items: readonly string[], numbered: boolean): void {
    this.doc.font('Times-Roman').fontSize(11);
    items.forEach((item, i) => {
      const marker = numbered ? `${i + 1}.` : '•';
      const y = this.doc.y;
      this.doc.text(marker, LEFT + 12, y, { lineBreak: false });
      this.doc.text(item, LEFT + 30, y, { width: WIDTH - 30 });
      this.doc.moveDown(0.25);
    });
    this.doc.moveDown(0.5);
    this.page.markdown.push(items.map((item, i) => (numbered ? `${i + 1}. ${item}` : `- ${item}`)).join('\n'));
  }

  code(lines: readonly string[]): void {
    this.doc.font('Courier').fontSize(9);
    let y = this.doc.y;
    for (const line of lines) {
      this.doc.text(line, LEFT + 18, y, { lineBreak: false });
      y += 11;
    }
    this.doc.y = y + 10;
    this.page.markdown.push(['```', ...lines, '```'].join('\n'));
  }

  caption(text: string, x = LEFT, width = WIDTH): void {
    this.doc.font('Times-Roman').fontSize(10).text(text, x, this.doc.y, { width, align: 'center' });
    this.doc.moveDown(0.5);
    this.page.markdown.push(text);
  }

  /** A footnote at the foot of the page, under a short rule, smaller than the body. */
  footnote(text: string): void {
    const y = HEIGHT - 95;
    this.doc.lineWidth(0.4).moveTo(LEFT, y).lineTo(LEFT + 140, y).stroke();
    this.doc.font('Times-Roman').fontSize(8).text(text, LEFT, y + 5, { width: WIDTH, lineBreak: false });
    this.page.markdown.push(text);
  }

  /** A picture (an embedded image) with its caption below it. */
  figure(caption: string, x: number, width: number, height: number): void {
    const top = this.doc.y + 4;
    this.doc.image(solidPng(Math.round(width), Math.round(height), 170), x, top, { width, height });
    this.doc.y = top + height + 8;
    this.caption(caption, x, width);
  }

  /** A table's truth: Markdown when no cell spans (a pipe table), HTML with colspan otherwise; and its grid. */
  tableTruth(rows: ReadonlyArray<ReadonlyArray<string | { text: string; span: number }>>): void {
    const grid: GridCell[] = [];
    let spans = false;
    rows.forEach((row, r) => {
      let col = 0;
      for (const cell of row) {
        const { text, span } = typeof cell === 'string' ? { text: cell, span: 1 } : cell;
        if (span > 1) spans = true;
        grid.push({ row: r, col, rowSpan: 1, colSpan: span, text });
        col += span;
      }
    });
    this.page.tables.push(grid);
    if (spans) {
      const html = rows.map((row) => `<tr>${row.map((cell) => (typeof cell === 'string' ? `<td>${escapeHtml(cell)}</td>` : `<td colspan="${cell.span}">${escapeHtml(cell.text)}</td>`)).join('')}</tr>`).join('');
      this.page.markdown.push(`<table>${html}</table>`);
    } else {
      const line = (row: ReadonlyArray<string | { text: string }>) => `| ${row.map((c) => (typeof c === 'string' ? c : c.text)).join(' | ')} |`;
      const [header = [], ...body] = rows;
      this.page.markdown.push([line(header), `|${' --- |'.repeat(header.length)}`, ...body.map(line)].join('\n'));
    }
  }

  /** Cells drawn at column x positions; right-aligned columns end at x + width. */
  cellsAt(row: readonly string[], xs: readonly number[], widths: readonly number[], right: readonly boolean[], y: number): void {
    row.forEach((cell, c) => {
      if (cell === '') return;
      const x = xs[c] ?? LEFT;
      const w = this.doc.widthOfString(cell);
      this.doc.text(cell, right[c] ? x + (widths[c] ?? 0) - w : x, y, { lineBreak: false });
    });
  }

  /** The finished PDF. */
  end(): Promise<Buffer> {
    this.doc.end();
    return this.done;
  }
}

// --- The three kinds of table ------------------------------------------------------------------

/** Fully ruled: every cell boxed; one cell wraps onto two printed lines and stays one cell. */
function ruledTable(w: Writer): void {
  const rows = [
    ['Sensor', 'Site', 'Readings', 'Notes'],
    ['T-101', 'North hall', '1,440', 'calibrated in March'],
    ['T-102', 'Roof', '1,392', 'two gaps after the storm of 4 May'],
    ['H-201', 'Cellar', '1,436', 'none'],
  ];
  const xs = [LEFT + 20, LEFT + 90, LEFT + 190, LEFT + 260, LEFT + 420];
  const top = w.doc.y + 4;
  const heights = [18, 18, 30, 18];
  w.doc.lineWidth(0.6);
  let y = top;
  const ys = [top];
  for (const h of heights) ys.push((y += h));
  for (const yy of ys) w.doc.moveTo(xs[0] ?? 0, yy).lineTo(xs.at(-1) ?? 0, yy).stroke();
  for (const x of xs) w.doc.moveTo(x, top).lineTo(x, y).stroke();
  rows.forEach((row, r) => {
    w.doc.font(r === 0 ? 'Times-Bold' : 'Times-Roman').fontSize(10);
    row.forEach((cell, c) => w.doc.text(cell, (xs[c] ?? 0) + 4, (ys[r] ?? 0) + 5, { width: (xs[c + 1] ?? 0) - (xs[c] ?? 0) - 8 }));
  });
  w.doc.y = y + 10;
  w.tableTruth(rows);
}

/** Booktabs: top, mid and bottom rules, a group heading over two columns with a partial rule under it. */
function ruleOnlyTable(w: Writer): void {
  const group = 'Measurements';
  const header = ['Specimen', 'Mass (g)', 'Length (mm)', 'Site'];
  const body = [
    ['Beetle', '0.42', '12.5', 'Meadow'],
    ['Moth', '0.31', '21.0', 'Forest edge'],
    ['Snail', '3.80', '18.2', 'Garden'],
    ['Ant', '0.01', '4.1', 'Meadow'],
  ];
  const xs = [LEFT + 60, LEFT + 150, LEFT + 230, LEFT + 320];
  const widths = [70, 50, 60, 80];
  const right = [false, true, true, false];
  const left = LEFT + 56;
  const rightEdge = LEFT + 404;
  let y = w.doc.y + 6;
  w.doc.lineWidth(0.9).moveTo(left, y).lineTo(rightEdge, y).stroke();
  w.doc.font('Times-Roman').fontSize(10);
  w.doc.text(group, LEFT + 186 - w.doc.widthOfString(group) / 2, y + 5, { lineBreak: false });
  w.doc.lineWidth(0.3).moveTo(LEFT + 148, y + 17).lineTo(LEFT + 292, y + 17).stroke();
  w.cellsAt(header, xs, widths, right, y + 21);
  y += 35;
  w.doc.lineWidth(0.5).moveTo(left, y).lineTo(rightEdge, y).stroke();
  y += 5;
  for (const row of body) {
    w.cellsAt(row, xs, widths, right, y);
    y += 13;
  }
  w.doc.lineWidth(0.9).moveTo(left, y + 2).lineTo(rightEdge, y + 2).stroke();
  w.doc.y = y + 14;
  w.tableTruth([['', { text: group, span: 2 }, ''], header, ...body]);
}

/** No rules at all: four columns lined up by whitespace, numbers right-aligned. */
function streamTable(w: Writer): void {
  const rows = [
    ['Quarter', 'Orders', 'Revenue', 'Returns'],
    ['Q1 2025', '2,310', '81,200', '1.9%'],
    ['Q2 2025', '2,584', '90,735', '2.3%'],
    ['Q3 2025', '2,107', '74,018', '1.2%'],
    ['Q4 2025', '3,012', '112,460', '2.8%'],
  ];
  w.doc.font('Times-Roman').fontSize(10);
  let y = w.doc.y + 4;
  for (const row of rows) {
    w.cellsAt(row, [LEFT + 40, LEFT + 140, LEFT + 230, LEFT + 330], [60, 50, 60, 50], [false, true, true, true], y);
    y += 14;
  }
  w.doc.y = y + 8;
  w.tableTruth(rows);
}

// --- The documents -----------------------------------------------------------------------------

const P = {
  intro:
    'This report describes how the measurement network was set up and what it recorded during its first year. The network combines temperature, humidity and insect counts from three sites, and every figure below can be traced back to the raw readings.',
  scope:
    'The study covers the period from January to December. Readings were taken every six minutes and stored on the site loggers before being collected each week by the field team.',
  detail:
    'A reading is rejected when it lies outside the physical range of its sensor or when the logger reports a fault. Rejected readings are kept in the archive but never enter the summaries.',
  method:
    'Each sensor was checked against a reference instrument before deployment. The tables in this section list the sensors, the specimens counted at each site and the quarterly figures of the project.',
  tables: 'The quarterly figures are summarised below without any rules, as they appear in the management summary.',
  results:
    'The network delivered almost all planned readings. The few gaps are explained in the notes of the sensor table; none of them affects the yearly averages by more than a tenth of a degree.',
  steps: ['Collect the loggers from every site.', 'Copy the raw files to the archive server.', 'Run the validation script and review its report.'],
  bullets: ['Sensors are replaced after five years.', 'Spare loggers are kept at the north hall.', 'Every site is visited at least once a month.'],
  code: ['validate --input raw/2025 --report out/report.txt', 'summarise --by quarter out/clean > summary.csv'],
  thanks: 'We thank the site owners for their patience and the field team for many cold mornings.',
  footnote: '1 The figures in this report are illustrative and were produced for the benchmark.',
};

/** Three pages: title page matter, numbered headings on three levels, lists, code, a footnote and all three kinds of table. */
async function reportDocument(): Promise<CorpusDocument> {
  const w = new Writer('Field network report 2025');
  w.newPage();
  w.title('Annual Report of the Field Measurement Network');
  w.byline('Grace Hopper and Alan Turing');
  w.byline('Institute of Field Studies, Cambridge');
  w.doc.moveDown(1);
  w.heading('1 Introduction', 2);
  w.paragraph(P.intro);
  w.heading('1.1 Scope of the study', 3);
  w.paragraph(P.scope);
  w.heading('1.1.1 Rejected readings', 4);
  w.paragraph(P.detail);
  w.list(P.bullets, false);
  w.footnote(P.footnote);
  w.newPage();
  w.heading('2 Method', 2);
  w.paragraph(P.method);
  w.caption('Table 1: Sensors and their sites.');
  ruledTable(w);
  w.paragraph(P.results);
  w.caption('Table 2: Specimens counted at each site.');
  ruleOnlyTable(w);
  w.heading('2.1 Processing steps', 3);
  w.list(P.steps, true);
  w.code(P.code);
  w.newPage();
  w.heading('3 Results', 2);
  w.paragraph(P.tables);
  streamTable(w);
  w.paragraph(P.results);
  w.heading('Acknowledgements', 2);
  w.paragraph(P.thanks);
  return { name: 'generated: report (title page, 3 heading levels, lists, code, footnote, 3 tables)', kind: 'generated', pdf: await w.end(), pages: w.pages };
}

const COLUMN = {
  a1: 'Multi-column pages are read column by column. A parser that reads straight across the page interleaves the lines of the two columns and the text no longer makes sense to anyone.',
  a2: 'The left column continues here with a second paragraph, which must come before anything in the right column of the same band of the page.',
  b1: 'The right column starts at the same height as the left one. Its first paragraph follows the last paragraph of the left column in the reading order.',
  b2: 'Below the figure that spans both columns, the two columns resume, and they are again read left column first, then the right one.',
  c1: 'The second band of the page holds two more paragraphs on the left. A figure between the bands belongs after the first band and before the second one.',
  c2: 'The right column of the second band ends the page. Nothing of it may appear before the figure or before the left column of its band.',
};

/** Two pages of two columns under a full-width title, with a full-width figure between two bands of columns. */
async function twoColumnDocument(): Promise<CorpusDocument> {
  const w = new Writer('Reading order study');
  const colWidth = 215;
  const rightX = LEFT + WIDTH - colWidth;
  for (let page = 1; page <= 2; page += 1) {
    w.newPage();
    if (page === 1) w.title('Reading Order on Multi-Column Pages', 18);
    else w.heading('Second page of columns', 2);
    const top = w.doc.y + 6;
    w.doc.y = top;
    if (page === 1) w.heading('1 Columns', 2, LEFT, colWidth);
    w.paragraph(COLUMN.a1, LEFT, colWidth, 10);
    w.paragraph(COLUMN.a2, LEFT, colWidth, 10);
    const leftBottom = w.doc.y;
    w.doc.y = top;
    if (page === 1) w.heading('2 Figures', 2, rightX, colWidth);
    w.paragraph(COLUMN.b1, rightX, colWidth, 10);
    w.paragraph(COLUMN.b2, rightX, colWidth, 10);
    w.doc.y = Math.max(leftBottom, w.doc.y) + 6;
    w.figure(`Figure ${page}: A picture as wide as both columns, between two bands of text.`, LEFT + 40, WIDTH - 80, 120);
    const second = w.doc.y + 6;
    w.doc.y = second;
    w.paragraph(COLUMN.c1, LEFT, colWidth, 10);
    w.doc.y = second;
    w.paragraph(COLUMN.c2, rightX, colWidth, 10);
  }
  return { name: 'generated: two columns, full-width title and figures between bands', kind: 'generated', pdf: await w.end(), pages: w.pages };
}

export async function generatedDocuments(): Promise<CorpusDocument[]> {
  return [await reportDocument(), await twoColumnDocument()];
}
