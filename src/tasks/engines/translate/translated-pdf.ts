// The translated PDF: one output page per source page, same size, the translated blocks laid out
// top to bottom in reading order. Translations run longer than their source, so text flows on to an
// extra page rather than being squeezed into the original boxes.
//
// Written with pdfkit, which subsets TrueType fonts through fontkit with a ToUnicode map, so CJK
// glyphs render and extract correctly (pdf-lib with @pdf-lib/fontkit is known to garble them).
import PDFDocument from 'pdfkit';
import type { Block, Page, ParsedDocument } from '../document.ts';
import { fontPaths } from '../fonts.ts';

export type RenderTranslatedPdfOptions = { title?: string; signal?: AbortSignal };

type Doc = InstanceType<typeof PDFDocument>;
type Style = { font: 'regular' | 'bold'; size: number; spaceBefore: number; spaceAfter: number };

/** The middle of Noto Sans SC's x-height below the top of a line, in ems. */
const BULLET_CENTRE = 0.88;
const BULLET_INDENT = 14;
const CELL_PADDING = 3;
const RULE_GREY = '#888888';
const MARGINAL_GREY = '#555555';
const MARGINAL_SIZE = 8;
const LINE_GAP = 1.5;

export async function renderTranslatedPdf(doc: ParsedDocument, options: RenderTranslatedPdfOptions = {}): Promise<Buffer> {
  options.signal?.throwIfAborted();
  const fonts = fontPaths();
  const title = options.title ?? doc.pages.flatMap((p) => p.blocks).find((b) => b.label === 'title')?.text;
  const pdf = new PDFDocument({
    autoFirstPage: false,
    compress: true,
    displayTitle: title !== undefined,
    info: { ...(title === undefined ? {} : { Title: title }), Producer: 'Signet', Creator: 'Signet' },
  });
  const done = collect(pdf);
  pdf.registerFont('regular', fonts.regular);
  pdf.registerFont('bold', fonts.bold);
  try {
    for (const page of doc.pages) {
      options.signal?.throwIfAborted();
      renderPage(pdf, page);
    }
    // A document with no pages still has to be a valid PDF.
    if (doc.pages.length === 0) pdf.addPage({ size: 'A4' });
  } finally {
    pdf.end();
  }
  return done;
}

function collect(pdf: Doc): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    pdf.on('data', (chunk: Buffer) => chunks.push(chunk));
    pdf.on('end', () => resolve(Buffer.concat(chunks)));
    pdf.on('error', reject);
  });
}

function renderPage(pdf: Doc, source: Page): void {
  // A page without a usable size (a damaged source) is laid out on A4 rather than refused.
  const usable = Number.isFinite(source.width) && Number.isFinite(source.height) && source.width > 72 && source.height > 72;
  const page = usable ? source : { ...source, width: 595.28, height: 841.89 };
  const margin = Math.max(28, Math.min(72, Math.round(Math.min(page.width, page.height) * 0.08)));
  const pageOptions = { size: [page.width, page.height], margins: { top: margin, bottom: margin, left: margin, right: margin } };
  pdf.addPage(pageOptions);
  const width = page.width - 2 * margin;

  // Headers and footers sit in the margins of the page's first output page; the body starts below
  // and ends above them. Pages the body flows on to get the plain margins.
  const headers = page.blocks.filter((b) => b.label === 'page_header').map((b) => b.text);
  const footers = page.blocks.filter((b) => b.label === 'page_footer').map((b) => b.text);
  const top = Math.round(margin / 2);
  const headerBottom = drawMarginal(pdf, headers, margin, top, width);
  const footerHeight = measureMarginal(pdf, footers, width);
  const footerTop = page.height - Math.round(margin / 2) - footerHeight;
  drawMarginal(pdf, footers, margin, footerTop, width);
  pdf.page.margins.top = Math.max(margin, headerBottom + 6);
  pdf.page.margins.bottom = Math.max(margin, page.height - footerTop + 6);

  pdf.x = margin;
  pdf.y = pdf.page.margins.top;
  const layout = { left: margin, width, pageOptions };
  const body = page.blocks.filter((b) => b.label !== 'page_header' && b.label !== 'page_footer');
  body.forEach((block, i) => renderBlock(pdf, block, body[i + 1], layout));
}

type Layout = { left: number; width: number; pageOptions: PDFKit.PDFDocumentOptions };

function renderBlock(pdf: Doc, block: Block, next: Block | undefined, layout: Layout): void {
  if (block.label === 'table' && block.cells && block.cells.length > 0) {
    renderTable(pdf, block.cells, layout);
    return;
  }
  const style = styleOf(block);
  const text = block.text.trim();
  if (text === '') return;
  // A heading keeps at least two lines of what follows on its page.
  const isHeading = block.label === 'title' || block.label === 'section_header';
  const following = isHeading ? 2 * lineHeight(pdf, next ? styleOf(next) : style) : 0;
  pdf.font(style.font).fontSize(style.size);
  if (pdf.y > pdf.page.margins.top) pdf.y += style.spaceBefore;
  const indent = block.label === 'list_item' ? BULLET_INDENT : 0;
  const options = { width: layout.width - indent, lineGap: LINE_GAP };
  ensureRoom(pdf, (isHeading ? pdf.heightOfString(text, options) : lineHeight(pdf, style)) + following, layout);
  const y = pdf.y;
  // Drawn, not typed: Noto Sans SC's U+2022 is a small CJK-width dot that reads as a stray mark.
  if (block.label === 'list_item') pdf.circle(layout.left + 4, y + style.size * BULLET_CENTRE, style.size * 0.17).fill('black');
  // pdfkit flows a paragraph longer than the page on to a new page of the same size and margins.
  pdf.text(text, layout.left + indent, y, options);
  pdf.x = layout.left;
  pdf.y += style.spaceAfter;
}

function styleOf(block: Block): Style {
  const body = clamp(block.fontSize || 10, 8, 11);
  switch (block.label) {
    case 'title':
      return { font: 'bold', size: clamp(block.fontSize || 20, 16, 24), spaceBefore: 0, spaceAfter: 10 };
    case 'section_header': {
      const level = block.level ?? 1;
      return { font: 'bold', size: level <= 1 ? 16 : level === 2 ? 14 : 12, spaceBefore: 8, spaceAfter: 4 };
    }
    case 'list_item':
      return { font: block.bold ? 'bold' : 'regular', size: body, spaceBefore: 0, spaceAfter: 2 };
    default:
      return { font: block.bold ? 'bold' : 'regular', size: body, spaceBefore: 0, spaceAfter: 6 };
  }
}

/**
 * A simple ruled grid of equal columns. The first row is taken as the header when there are several:
 * bold, and repeated at the top of each page the table continues on. Rows never split across pages.
 */
function renderTable(pdf: Doc, rows: string[][], layout: Layout): void {
  const columns = Math.max(...rows.map((r) => r.length));
  const columnWidth = layout.width / columns;
  const cellOptions = { width: columnWidth - 2 * CELL_PADDING, lineGap: 1 };
  const header = rows.length > 1 ? rows[0] : undefined;

  const textHeight = (row: string[], bold: boolean) => {
    pdf.font(bold ? 'bold' : 'regular').fontSize(9);
    return Math.max(...Array.from({ length: columns }, (_, c) => pdf.heightOfString(row[c] ?? '', cellOptions)));
  };
  const drawRow = (row: string[], bold: boolean, height: number) => {
    pdf.font(bold ? 'bold' : 'regular').fontSize(9);
    const y = pdf.y;
    for (let c = 0; c < columns; c++) {
      const x = layout.left + c * columnWidth;
      pdf.lineWidth(0.5).strokeColor(RULE_GREY).rect(x, y, columnWidth, height + 2 * CELL_PADDING).stroke();
      pdf.text(row[c] ?? '', x + CELL_PADDING, y + CELL_PADDING, { ...cellOptions, height: height + 1 });
    }
    pdf.x = layout.left;
    pdf.y = y + height + 2 * CELL_PADDING;
  };

  pdf.y += 2;
  rows.forEach((row, r) => {
    const bold = r === 0 && header !== undefined;
    const height = textHeight(row, bold);
    if (height + 2 * CELL_PADDING > pdf.page.maxY() - pdf.page.margins.top) {
      // A row taller than a whole page cannot be ruled; its cells flow as paragraphs instead.
      for (const cell of row) pdf.text(cell, layout.left, pdf.y, { width: layout.width, lineGap: 1 });
      return;
    }
    if (ensureRoom(pdf, height + 2 * CELL_PADDING, layout) && header && r > 0) drawRow(header, true, textHeight(header, true));
    drawRow(row, bold, height);
  });
  pdf.y += 8;
}

/** Starts a new output page (same size as the source page) when less than `height` is left; says whether it did. */
function ensureRoom(pdf: Doc, height: number, layout: Layout): boolean {
  const atTop = pdf.y <= pdf.page.margins.top + 0.5;
  if (atTop || pdf.y + height <= pdf.page.maxY()) return false;
  pdf.addPage(layout.pageOptions);
  pdf.x = layout.left;
  return true;
}

function measureMarginal(pdf: Doc, texts: string[], width: number): number {
  if (texts.length === 0) return 0;
  pdf.font('regular').fontSize(MARGINAL_SIZE);
  return pdf.heightOfString(texts.join('\n'), { width, lineGap: 1 });
}

/** Draws header or footer lines at `y` in small grey type; returns where they end. */
function drawMarginal(pdf: Doc, texts: string[], x: number, y: number, width: number): number {
  if (texts.length === 0) return y;
  const height = measureMarginal(pdf, texts, width);
  // An explicit height keeps pdfkit from starting a new page for text drawn inside the margins.
  pdf.fillColor(MARGINAL_GREY).text(texts.join('\n'), x, y, { width, lineGap: 1, height: height + 1 });
  pdf.fillColor('black');
  return y + height;
}

/** The height of one line in `style`; leaves that style's font and size selected. */
function lineHeight(pdf: Doc, style: Style): number {
  pdf.font(style.font).fontSize(style.size);
  return pdf.currentLineHeight(true) + LINE_GAP;
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}
