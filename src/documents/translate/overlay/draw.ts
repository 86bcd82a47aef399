// The translated PDF on the source's own pages (issue 18): the text-free source from ghostscript,
// the kept source text (code, formulas, numbers, URLs, text in pictures) as the source drew it, and
// the translation set into each block's box.
//
// The translation is typeset with pdfkit, which subsets TrueType fonts with a ToUnicode map (pdf-lib's
// own subsetting drops CJK glyphs from Noto Sans SC — measured: "你好，世界" rendered blank), and the
// three layers are composed per page with pdf-lib, which keeps the source's page objects.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import PDFDocument from 'pdfkit';
import { PDFDocument as PdfLibDocument } from 'pdf-lib';
import type { Block, BoundingBox, Page, ParsedDocument, StyledSpan, TableCell } from '../../document.ts';
import { backgroundOf, isBlank, renderPage, textColourOn, type Raster, type Rgb } from './background.ts';
import { gutters, type Gutter } from './check.ts';
import { popplerPages } from './check-pdf.ts';
import { inkRegions, isDrawingLabel } from './drawings.ts';
import { fitText, type FitResult } from './fit.ts';
import { isKeptBlock, isKeptCell, isKeptText, isTurnedCell, keptRegions, keptTextPdf } from './keep.ts';
import { isTurnedBlock } from '../../layout/turned.ts';
import { leastScale, overflowKind } from './kinds.ts';
import { reflow, type Placed } from './reflow.ts';
import { drawLine, registerChain, rgbOf, styleLines, widthOf, type StyledText } from './set-line.ts';
import { fontFor } from './font-chain.ts';
import { drawNotesPages, markerText, type Note } from './notes.ts';
import { removeText, type RemoveTextOptions } from './remove-text.ts';
import { attachSuperscripts, hasMarkers } from './superscripts.ts';
import { hasUnnamedLeads, keepUnnamedLeads } from './symbols.ts';

type Doc = InstanceType<typeof PDFDocument>;
/** Where the first baseline sits below the top of the box, in ems (the top of Latin capitals). */
const ASCENT = 0.8;
/** The slant of a synthetic italic: Noto Sans SC has no italic face. */
const ITALIC_SKEW = 0.2;
/** Text never grows into the page's outer 3 %. */
const PAGE_MARGIN = 0.03;

export type OverlayOptions = { signal?: AbortSignal; removeText?: RemoveTextOptions };

/** One box to typeset: its translation, and the source block it stands for. */
type Piece = { text: string; box: BoundingBox; block: Block; grow: boolean; label?: boolean; /** A table cell's own size. */ fontSize?: number; /** The translation's inline styles (styles.ts). */ spans?: StyledSpan[]; /** A table cell's own colour. */ color?: string; /** The table cell this piece sets. */ cell?: TableCell };
/** A piece's fit, and the box it was fitted in (moved down by the reflow, maybe widened to its column). */
type Fitted = FitResult & { box: BoundingBox };
/** Blocks that stay at the page's edge: they never move, nor make others move. */
const MARGINAL = new Set(['page_header', 'page_footer']);
/** The text-free page is rendered at this resolution to see rules and fills a moved block must not cover. */
const RULE_DPI = 72;
/** A drawing's label is set at its own size or kept: it may shrink this far, no further. */
const LABEL_FLOOR = 0.85;
/** A translation that would shrink below this share of its size first tries the measure of its column. */
const WIDEN_BELOW = 0.85;
/** A cell of more words than this is a paragraph in a grid of text columns, not a table's short cell. */
const CELL_WORDS = 8;
/** A block narrower than this share of the page (a sidebar, a margin note) keeps its width. */
const NARROW = 0.3;
const CJK_CHAR = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u;

/**
 * `translated.pdf`: same page count and sizes as `source`. `document` is the parsed source, and
 * `translated` the same document with translated texts (same pages, blocks and cells, in order).
 */
export async function renderOverlayPdf(source: Uint8Array, parsed: ParsedDocument, translation: ParsedDocument, options: OverlayOptions = {}): Promise<Uint8Array> {
  // spec (issue 42): "superscript footnote markers stay attached to their word".
  // Where a marker stands in its paragraph is read from the source's words beside it (poppler's).
  const words = parsed.pages.some((p) => hasMarkers(p) || hasUnnamedLeads(p)) ? (await popplerPages(source, options.signal)).map((p) => p.words) : undefined;
  const attached = attachSuperscripts(parsed, translation, words);
  // spec (issue 42): symbol glyphs "kept in the source's glyphs, colour and place" — also those no reader can name.
  const { source: document, translated } = words ? keepUnnamedLeads(attached.source, attached.translated, words) : attached;
  const textFree = await removeText(source, { ...options.removeText, signal: options.signal });
  options.signal?.throwIfAborted();
  const out = await PdfLibDocument.load(textFree, { ignoreEncryption: true, updateMetadata: false });
  const pages = out.getPages();
  if (pages.length !== document.pages.length) {
    throw new Error(`The text-free copy has ${pages.length} pages where the source has ${document.pages.length}; the translated PDF was not made.`);
  }
  const original = await PdfLibDocument.load(source, { ignoreEncryption: true, updateMetadata: false });
  const sizes = original.getPages().map((p) => p.getSize());
  const rasters = await scannedPageRasters(source, document, options.signal);
  const textFreePages = textFreeRasters(textFree, options.signal);
  const { layer, keptLabels } = await typeset(document, translated, rasters, textFreePages.page, !original.isEncrypted, options.signal).finally(textFreePages.close);
  // Labels of a drawing whose translation does not fit at their own size stay as the source drew
  // them: they join the kept text, like text inside a picture.
  const kept = document.pages.map((page, i) => (keptLabels[i]!.size === 0 ? page : { ...page, blocks: page.blocks.map((b) => (keptLabels[i]!.has(b) ? { ...b, label: 'picture' as const } : b)) }));
  // An encrypted source's content streams cannot be read here (ghostscript decrypts for itself): its
  // kept text is set again in the bundled font, unchanged, instead of being copied.
  const copyKept = !original.isEncrypted && kept.some((p) => keptRegions(p).length > 0);
  const overlay = await PdfLibDocument.load(layer);
  const overlayPages = await out.embedPages(overlay.getPages());
  const keptPages = copyKept ? await out.embedPages((await keptTextPdf(source, kept)).getPages()) : [];
  // The notes pages (text continued from where it did not fit) follow the last page.
  for (const notes of overlayPages.slice(pages.length)) out.addPage([notes.width, notes.height]).drawPage(notes, { x: 0, y: 0 });
  pages.forEach((page, i) => {
    // Ghostscript writes page sizes to two decimals; the source's exact size is put back.
    const size = sizes[i]!;
    if (Math.abs(page.getWidth() - size.width) < 0.01 && Math.abs(page.getHeight() - size.height) < 0.01) page.setMediaBox(0, 0, size.width, size.height);
    if (keptPages[i] && keptRegions(kept[i]!).length > 0) page.drawPage(keptPages[i]!, { x: 0, y: 0 });
    page.drawPage(overlayPages[i]!, { x: 0, y: 0 });
  });
  return out.save();
}

/** Rasters of the pages whose text came from OCR, for sampling background colours. */
async function scannedPageRasters(source: Uint8Array, document: ParsedDocument, signal?: AbortSignal): Promise<Map<number, Raster>> {
  const rasters = new Map<number, Raster>();
  const scanned = document.pages.filter((p) => p.textSource === 'ocr');
  if (scanned.length === 0) return rasters;
  const dir = await mkdtemp(path.join(tmpdir(), 'signet-overlay-'));
  try {
    const file = path.join(dir, 'source.pdf');
    await writeFile(file, source);
    for (const page of scanned) rasters.set(page.pageNo, await renderPage(file, page.pageNo, undefined, signal));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return rasters;
}

/** The text-free pages rendered on demand (only pages where a block would move), for reflow's look at rules and fills. */
function textFreeRasters(textFree: Uint8Array, signal?: AbortSignal): { page: (pageNo: number) => Promise<Raster>; close: () => Promise<void> } {
  let dir: Promise<string> | undefined;
  const file = async () => {
    dir ??= mkdtemp(path.join(tmpdir(), 'signet-reflow-')).then(async (d) => { await writeFile(path.join(d, 'text-free.pdf'), textFree); return d; });
    return path.join(await dir, 'text-free.pdf');
  };
  return {
    page: async (pageNo) => renderPage(await file(), pageNo, RULE_DPI, signal),
    close: async () => { if (dir) await rm(await dir.catch(() => ''), { recursive: true, force: true }); },
  };
}

/** The translation layer: one page per source page, same size, only the translated text (and covers on scans). */
async function typeset(document: ParsedDocument, translated: ParsedDocument, rasters: Map<number, Raster>, textFreePage: (pageNo: number) => Promise<Raster>, copyKept: boolean, signal?: AbortSignal): Promise<{ layer: Uint8Array; keptLabels: Array<Set<Block>> }> {
  const pdf = new PDFDocument({ autoFirstPage: false, compress: true });
  const done = new Promise<Uint8Array>((resolve, reject) => {
    const chunks: Buffer[] = [];
    pdf.on('data', (chunk: Buffer) => chunks.push(chunk));
    pdf.on('end', () => resolve(new Uint8Array(Buffer.concat(chunks))));
    pdf.on('error', reject);
  });
  registerChain(pdf);
  const keptLabels: Array<Set<Block>> = [];
  const notes: Note[] = [];
  try {
    for (const [i, page] of document.pages.entries()) {
      signal?.throwIfAborted();
      pdf.addPage({ size: [page.width, page.height], margin: 0 });
      const pieces = piecesOf(page, translated.pages[i] ?? page, !copyKept);
      const raster = rasters.get(page.pageNo);
      // A scanned page keeps its source text as pixels under the covers: nothing moves there.
      const { placed, drawn, keptLabels: labels } = await layout(pdf, page, pieces, raster ? undefined : () => textFreePage(page.pageNo), !copyKept);
      keptLabels.push(labels);
      drawn.forEach((piece, k) => drawPiece(pdf, page, piece, placed[k]!, raster, notes));
    }
    const last = document.pages.at(-1);
    if (last) drawNotesPages(pdf, notes, { width: last.width, height: last.height });
  } finally {
    pdf.end();
  }
  return { layer: await done, keptLabels };
}

/** The boxes of a page to typeset: translated blocks, and translated table cells in their cells. */
export function piecesOf(page: Page, translatedPage: Page, keptToo = false): Piece[] {
  if (keptToo) {
    // Kept text set again (encrypted source): kept blocks with their own text, then the translations.
    const kept = page.blocks.flatMap((block) => {
      if (block.label === 'table') return (block.table?.cells ?? []).filter((c) => isKeptCell(c, block)).map((c) => ({ text: c.text, box: c.bbox, block, grow: false, cell: c }));
      return isKeptBlock(block, page) && block.label !== 'picture' ? [{ text: block.text, box: block.bbox, block, grow: false }] : [];
    });
    return [...kept, ...piecesOf(page, translatedPage)];
  }
  const pieces: Piece[] = [];
  page.blocks.forEach((block, b) => {
    const target = translatedPage.blocks[b] ?? block;
    if (isKeptBlock(block, page)) return;
    if (block.label !== 'table') {
      pieces.push({ text: target.text, box: block.bbox, block, grow: true, ...(target.spans ? { spans: target.spans } : {}) });
      return;
    }
    if (block.table && block.table.cells.length > 0) {
      block.table.cells.forEach((cell, c) => {
        // Numbers and other untranslatable cells are kept as the source drew them (keptRegions).
        if (isKeptCell(cell, block)) return;
        // A cell in its own style: a bold header on a coloured row stays bold and in its colour.
        const spans = cell.bold || cell.italic ? [{ text: target.table?.cells[c]?.text ?? cell.text, bold: Boolean(cell.bold), italic: Boolean(cell.italic) }] : undefined;
        pieces.push({ text: target.table?.cells[c]?.text ?? cell.text, box: cell.bbox, block, grow: false, cell, ...(cell.fontSize ? { fontSize: cell.fontSize } : {}), ...(cell.color ? { color: cell.color } : {}), ...(spans ? { spans } : {}) });
      });
      return;
    }
    // Without cell boxes (a parser that gives only cell texts) the table box is shared out evenly.
    const rows = target.cells ?? [];
    const columns = Math.max(1, ...rows.map((r) => r.length));
    const rowHeight = (block.bbox.t - block.bbox.b) / Math.max(1, rows.length);
    const columnWidth = (block.bbox.r - block.bbox.l) / columns;
    rows.forEach((row, r) => row.forEach((text, c) => {
      const top = block.bbox.t - r * rowHeight;
      pieces.push({ text, box: { l: block.bbox.l + c * columnWidth, r: block.bbox.l + (c + 1) * columnWidth - 2, t: top, b: top - rowHeight }, block, grow: false });
    }));
  });
  return pieces.filter((p) => p.text.trim() !== '');
}

/**
 * Fits every piece of a page (reflow.ts): where a translation would go below the size floor, the
 * translated blocks under it in its column move down, if the text-free page is empty where they go.
 * The text-free page is rendered only for a page where a block would grow past its box or move, or
 * where a short small block may be a drawing's label: what it draws (pictures, figures, rules,
 * fills) is then fixed like a picture, so no translation grows or moves onto it (issue 26), and a
 * label is set at its own size in its place or kept as the source drew it.
 */
async function layout(pdf: Doc, page: Page, pieces: Piece[], textFreePage: (() => Promise<Raster>) | undefined, keptToo: boolean): Promise<{ placed: Placed<Fitted>[]; drawn: Piece[]; keptLabels: Set<Block> }> {
  const keptLabels = new Set<Block>();
  // The bottom margin: the source's lowest text where it stands in the page's bottom eighth (a footer,
  // the last line of a full page), else the page's outer 3 % (a column that ends mid-page leaves room).
  const lowest = Math.min(page.height, ...page.blocks.map((b) => b.bbox.b));
  const bottom = Math.max(page.height * PAGE_MARGIN, lowest <= page.height / 8 ? lowest - 0.5 : 0);
  const run = (drawn: Piece[], extra: BoundingBox[], empty: (region: BoundingBox) => boolean, blank?: (region: BoundingBox) => boolean) => {
    const flows = drawn.map((p) => ({ box: p.box, movable: textFreePage !== undefined && p.grow && !MARGINAL.has(p.block.label) }));
    const moving = new Set(flows.filter((f) => f.movable).map((f) => f.box));
    const fixed = [...page.blocks.map((b) => b.bbox).filter((b) => !moving.has(b)), ...(page.pictures ?? []).map((p) => p.bbox), ...keptRegions(page), ...extra];
    return reflow({
      flows,
      fixed,
      bottom,
      fitAt: (k: number, shift: number, limitFor: (box: BoundingBox) => number) => fitPiece(pdf, page, drawn[k]!, shift, limitFor, extra, blank),
      empty,
    });
  };
  const still = run(pieces, [], () => false);
  // A table cell whose translation takes the free width beside it needs the page looked at too (a panel, a rule).
  // So does one whose translation wraps down below its text (a row's rule may be drawn there).
  const grows = still.placed.some((p, k) => ((pieces[k]!.grow || pieces[k]!.cell !== undefined) && p.fit.height > pieces[k]!.box.t - pieces[k]!.box.b + 1) || (pieces[k]!.cell !== undefined && p.fit.box.r > pieces[k]!.box.r + 1));
  const mayBeLabel = pieces.some((p) => p.grow && p.block.text.trim().split(/\s+/).length <= 6);
  if (!textFreePage || !(still.wanted || grows || mayBeLabel)) return { placed: still.placed, drawn: pieces, keptLabels };
  const raster = await textFreePage();
  const ink = inkRegions(raster, page.height);
  const drawn: Piece[] = [];
  for (const piece of pieces) {
    if (!piece.grow || !isDrawingLabel(piece.block, page, ink)) { drawn.push(piece); continue; }
    // spec (issue 26): "labels inside a drawing are translated in place at their own size or kept"
    const label = { ...piece, grow: false, label: true };
    if (fitsAtOwnSize(pdf, page, label)) drawn.push(label);
    else if (keptToo) drawn.push({ ...label, text: piece.block.text });
    else keptLabels.add(piece.block);
  }
  // Ink that only surrounds a block (a panel behind it, a label's own box) does not stop it.
  const obstacles = ink.filter((region) => !drawn.some((p) => overlaps(region, p.box)));
  const blank = (region: BoundingBox) => isBlank(raster, page.height, region);
  return { placed: run(drawn, obstacles, blank, blank).placed, drawn, keptLabels };
}

const overlaps = (a: BoundingBox, b: BoundingBox) => a.l < b.r - 0.5 && a.r > b.l + 0.5 && a.b < b.t - 0.5 && a.t > b.b + 0.5;

/** A label's translation fits its box at 85 % of its size or more, in no more lines than the box holds. */
function fitsAtOwnSize(pdf: Doc, page: Page, piece: Piece): boolean {
  const fit = fitPiece(pdf, page, piece, 0, () => piece.box.b, []);
  const size = sizeOf(piece);
  return !fit.belowFloor && fit.size >= size * LABEL_FLOOR - 1e-9 && fit.height <= piece.box.t - piece.box.b + 1;
}

/** Fits a piece with its box `shift` points lower; a growing piece's text may reach down to y = `limitFor(box)`. */
function fitPiece(pdf: Doc, page: Page, piece: Piece, shift: number, limitFor: (box: BoundingBox) => number, obstacles: BoundingBox[], blank?: (region: BoundingBox) => boolean): Fitted {
  const { block } = piece;
  const align = alignOf(block);
  const size = sizeOf(piece);
  // A bold word inside a regular block is wider: such a block is measured bold, so it never runs past its box.
  const bold = isBold(block) || (piece.spans ?? []).some((s) => s.bold);
  const indent = indentOf(pdf, block, size);
  // spec (issue 42): "running text only: nearest free space in its column, then a notes page" — every
  // other kind stays in place: wrap, free space beside and below, then shrink to its least size.
  const stays = overflowKind(block, piece.cell !== undefined) !== 'running text';
  const room = piece.cell ? cellRoom(block, piece.cell, size, blank) : undefined;
  // spec (issue 42): "a narrow block (sidebar, margin note) keeps its width and breaks lines
  // proportionally rather than being squeezed into one line" — any block of a few ragged or centred lines.
  const narrow = block.bbox.r - block.bbox.l < page.width * NARROW;
  const shares = !piece.cell && block.lineBreaks && (align === 'center' || align === 'right' || (narrow && align !== 'justify')) ? block.lineBreaks.map((b) => b / Math.max(1, block.text.length)) : undefined;
  // Slanted text leans right by its slant over a capital's height: that much of the measure is kept free.
  const slant = block.italic || (piece.spans ?? []).some((s) => s.italic) ? ITALIC_SKEW * size * ASCENT : 0;
  const fitIn = (box: BoundingBox, breaks?: number[], grow = piece.grow) => fitText({
    text: piece.text,
    box: { x: box.l + indent, y: page.height - box.t, width: Math.max(1, box.r - box.l - indent - slant), height: Math.max(size, box.t - box.b) },
    fontSize: size,
    lineHeight: block.lineHeight,
    limitY: page.height - (room ? room.limit : grow ? limitFor(box) : box.b),
    measure: (text, s) => widthOf(pdf, text, { bold, size: s }),
    ...(stays ? { minScale: leastScale(page, size), spaceFirst: true } : {}),
    ...(breaks ? { breaks } : {}),
  });
  let box = room ? room.box : { ...piece.box, t: piece.box.t - shift, b: piece.box.b - shift };
  let fit = fitIn(box);
  if (shares) {
    const kept = fitIn(box, shares);
    if (!kept.belowFloor && !kept.overfull && !kept.overflow && kept.size >= fit.size - 1e-9) return { ...kept, box };
  }
  if (narrow && shares) return { ...fit, box };
  // A short line's box ends where its source text ended, so a translation that would have to shrink
  // noticeably (a Chinese line becomes twice as long in English) may use the measure of its column
  // instead, when that keeps it larger; a block that stays in place does so before shrinking at all.
  const widenBelow = WIDEN_BELOW;
  // An item, label or heading that stays in place keeps to its lines where the room beside it is
  // free: "Section 3.1.4" for "第 3.1.4 节" runs on along its line rather than breaking under itself
  // (never into fewer lines than the source's: an author's name and affiliation stay two).
  const sourceLines = (block.lineBreaks?.length ?? 0) + 1;
  const moreLines = stays && !piece.cell && fit.lines.length > sourceLines && piece.box.t - piece.box.b < 1.6 * (block.lineHeight ?? size * 1.2) * sourceLines;
  if ((fit.belowFloor || fit.overfull || fit.brokenWord || moreLines || fit.size < size * widenBelow - 1e-9) && piece.grow && (align === 'left' || align === 'justify')) {
    const wider = { ...box, r: columnRight(page, box, obstacles) };
    if (wider.r > box.r + 1) {
      const widened = fitIn(wider);
      const better = fit.belowFloor ? !widened.belowFloor || (widened.overflow?.length ?? 0) < (fit.overflow?.length ?? 0) : widened.size > fit.size + 1e-9 || (Boolean(fit.overfull) && !widened.overfull) || (Boolean(fit.brokenWord) && !widened.brokenWord)
        || (moreLines && widened.size >= fit.size - 1e-9 && widened.lines.length < fit.lines.length && widened.lines.length >= sourceLines && !widened.overfull);
      if (better) {
        box = wider;
        fit = widened;
      }
    }
  }
  // Where the room beside it is not free either, such a line shrinks a little (not below the size a
  // short line widens at) rather than break under itself: a listing's name stays on its row, beside its count.
  if (moreLines && fit.lines.length > sourceLines) {
    const kept = fitIn(box, undefined, false);
    if (!kept.belowFloor && !kept.overfull && !kept.overflow && kept.lines.length <= sourceLines && kept.size >= size * widenBelow - 1e-9) fit = kept;
  }
  return { ...fit, box };
}

/**
 * spec (issue 42): "table cells wrap inside the cell, use the cell's free width and the column gap" —
 * the room a cell's translation may take: from its left edge to just before the next non-empty cell
 * on its row (or the table's right edge), and down to just above the next cell below it (or the
 * table's bottom). Empty cells are free space.
 */
export function cellRoom(table: Block, cell: TableCell, size: number, blank?: (region: BoundingBox) => boolean): { box: BoundingBox; limit: number } {
  const gap = Math.max(2, size * 0.4);
  const others = (table.table?.cells ?? []).filter((c) => c !== cell && c.text.trim() !== '');
  const sameRow = others.filter((c) => c.bbox.b < cell.bbox.t - 0.5 && c.bbox.t > cell.bbox.b + 0.5);
  // A cell holding a paragraph (a page laid out as a grid of text columns) wraps inside itself: its
  // gap to the next column is a gutter, not a table's column gap.
  const paragraph = cell.text.split(/\s+/).length > CELL_WORDS;
  let right = paragraph ? cell.bbox.r : Math.max(cell.bbox.r, Math.min(Math.max(table.bbox.r, cell.bbox.r), ...sameRow.filter((c) => c.bbox.l >= cell.bbox.r - 0.5).map((c) => c.bbox.l - gap)));
  // The free width is free on the page too: no rule, fill or panel the text-free page draws there (checked when the page was looked at).
  // (The middle of the line's height only: a rule drawn just above or below the row is not in the way.)
  const inset = (cell.bbox.t - cell.bbox.b) * 0.25;
  if (blank) while (right > cell.bbox.r + 1 && !blank({ l: cell.bbox.r, r: right, t: cell.bbox.t - inset, b: cell.bbox.b + inset })) right = Math.max(cell.bbox.r, right - Math.max(2, size / 2));
  const below = others.filter((c) => c.bbox.t <= cell.bbox.b + 0.5 && c.bbox.l < right && c.bbox.r > cell.bbox.l).map((c) => c.bbox.t + gap / 2);
  let limit = Math.min(cell.bbox.b, Math.max(Math.min(table.bbox.b, cell.bbox.b), ...below));
  // The room below is free on the page too: a row's rule under the cell's text ends it (Redbook's Table 3-2).
  if (blank) while (limit < cell.bbox.b - 0.5 && !blank({ l: cell.bbox.l, r: right, t: cell.bbox.b, b: limit })) limit = Math.min(cell.bbox.b, limit + Math.max(1, size / 4));
  return { box: { ...cell.bbox, r: right }, limit };
}

/** The size a piece is set at before fitting: a table cell's own, else its block's. */
const sizeOf = (piece: Piece) => Math.max(3, piece.fontSize || piece.block.fontSize || 10);
/** A list item's lines start under its text after a hanging marker: never centred (its first line only looks so). */
const alignOf = (block: Block) => (block.label === 'list_item' && block.align === 'center' ? 'left' : (block.align ?? (block.label === 'title' ? 'center' : 'left')));
/** spec (issue 42): "regular italic stays regular italic (no weight added)" — a heading is bold only where the source's is. */
const isBold = (block: Block) => block.bold;
/** A list item keeps its marker where the source drew it; the text starts after it. */
const markerOf = (block: Block) => (block.label === 'list_item' && block.marker ? block.marker : undefined);
function indentOf(pdf: Doc, block: Block, size: number): number {
  const marker = markerOf(block);
  return marker ? Math.max(widthOf(pdf, marker, { bold: isBold(block), size }) + size * 0.5, size) : 0;
}

function drawPiece(pdf: Doc, page: Page, piece: Piece, placed: Placed<Fitted>, raster: Raster | undefined, notes: Note[]): void {
  const { block } = piece;
  const turnedCell = piece.cell !== undefined && piece.text === piece.cell.text && isTurnedCell(piece.cell, block.fontSize);
  if ((isTurnedBlock(block) && piece.text === block.text) || turnedCell) {
    // Kept text set up the margin (an encrypted source's, set again): one line turned a quarter, as
    // the source ran it, its baseline where the glyphs' feet were (their tops to the left).
    pdf.save();
    const size = piece.cell?.fontSize || block.fontSize;
    pdf.fillColor(rgbOf(piece.cell?.color ?? block.color) ?? [0, 0, 0]);
    const x = piece.box.l + (piece.cell ? (piece.box.r - piece.box.l) / 2 + 0.3 * size : ASCENT * size);
    const y = page.height - piece.box.b - (piece.cell ? 2 : 0);
    pdf.rotate(-90, { origin: [x, y] });
    drawLine(pdf, piece.text.replace(/\s+/gu, ' '), x, y, { bold: Boolean(piece.cell?.bold), size });
    pdf.restore();
    return;
  }
  const { fit } = placed;
  const { box } = fit;
  const align = alignOf(block);
  const top = page.height - box.t;
  const bold = isBold(block);
  const size = sizeOf(piece);
  const marker = markerOf(block);
  const indent = indentOf(pdf, block, size);
  const width = Math.max(1, box.r - box.l - indent);
  // The source's fill colour (the block's dominant one; a styled span's own below).
  let colour: Rgb = rgbOf(piece.color ?? block.color) ?? [0, 0, 0];
  if (raster) {
    // Scanned page: the text pixels under the block (and where the translation grows) are painted over.
    const background = backgroundOf(raster, page.height, box);
    const coverBottom = Math.max(box.t - box.b, fit.height) + 1.5;
    pdf.rect(piece.box.l - 1.5, page.height - piece.box.t - 1.5, piece.box.r - piece.box.l + 3, coverBottom + 1.5).fill(background);
    colour = textColourOn(background);
  }
  pdf.fillColor(colour);
  // spec (issue 42): "list bullets and other symbol glyphs … kept in the source's glyphs, colour and
  // place" — a symbol bullet is set as the source's character at its size where the source drew it
  // (moved down with its item when the reflow moved it); a number or letter starts the translation.
  // Both in the marker's own colour. (Not copied from the source: a bullet often shares its text
  // operation with the item's first words, which would come back with it.)
  if (marker) {
    pdf.save();
    pdf.fillColor(raster ? colour : (rgbOf(block.markerColor) ?? colour));
    if (block.markerBox) drawSymbolMarker(pdf, marker, block.markerBox.l + 0.5, page.height - block.markerBox.b - block.fontSize * 0.2 + placed.shift, block.fontSize);
    else drawMarker(pdf, marker, box.l, top + fit.size * ASCENT, fit.size, bold);
    pdf.restore();
  }
  // A table cell's text sits in the middle of its cell, as tables are usually set.
  const offset = piece.grow ? 0 : Math.max(0, (box.t - box.b - fit.height) / 2);
  // Text that did not fit at 70 % continues on the notes page; the last line here ends with its marker.
  const lines = [...fit.lines];
  if (fit.overflow) {
    const number = notes.length + 1;
    notes.push({ number, pageNo: page.pageNo, text: fit.overflow, size, bold });
    lines[lines.length - 1] = `${lines.at(-1) ?? ''} ${markerText(number)}`.trimStart();
  }
  const styled = styleLines(lines, raster ? undefined : piece.spans);
  const styleOf = (part: StyledText) => ({ bold: part.bold ?? bold, italic: part.italic ?? Boolean(block.italic), colour: rgbOf(part.color) ?? colour });
  lines.forEach((line, i) => {
    const parts = styled[i] ?? [{ text: line }];
    const lineWidth = parts.reduce((w, part) => w + widthOf(pdf, part.text, { bold: styleOf(part).bold, size: fit.size }), 0);
    const baseline = top + offset + fit.size * ASCENT + i * fit.lineHeight;
    const last = i === lines.length - 1;
    const gaps = (line.match(/ /g) ?? []).length;
    let x = box.l + indent;
    let wordSpacing = 0;
    let characterSpacing = 0;
    if (align === 'center') x += Math.max(0, (width - lineWidth) / 2);
    else if (align === 'right') x += Math.max(0, width - lineWidth);
    else if (align === 'justify' && !last && CJK_CHAR.test(line)) {
      // Chinese and Japanese are justified between characters, not at the odd space beside a Latin word.
      const chars = [...line].length;
      if (chars > 1) characterSpacing = Math.max(0, (width - lineWidth) / (chars - 1));
    } else if (align === 'justify' && !last && gaps > 0) wordSpacing = Math.max(0, (width - lineWidth) / gaps);
    // Each stretch in its own weight, slant and colour, one after the other on the baseline.
    for (const part of parts) {
      const style = styleOf(part);
      pdf.save();
      pdf.fillColor(style.colour);
      if (style.italic) pdf.transform(1, 0, -ITALIC_SKEW, 1, ITALIC_SKEW * baseline, 0);
      x = drawLine(pdf, part.text, x, baseline, { bold: style.bold, size: fit.size, wordSpacing, characterSpacing });
      pdf.restore();
    }
  });
}

/**
 * Bullets are set at the text's own size as U+2219 (DejaVu Sans draws it as a round bullet of
 * text weight; Noto Sans SC's U+2022 is a CJK-width dot that reads as a stray mark): a bullet set
 * small would be text below 70 % of the source size. Without DejaVu Sans, a small U+25CF.
 * Numbers and letters as they are. Text, not a path: the page's drawings stay the source's.
 */
function drawMarker(pdf: Doc, marker: string, x: number, baseline: number, size: number, bold: boolean): void {
  const bullet = /^[•·∙◦▪‣∗*–-]$/u.test(marker);
  if (!bullet) drawLine(pdf, marker, x, baseline, { bold, size });
  else if (fontFor('∙') > 0) drawLine(pdf, '∙', x, baseline, { bold, size });
  else drawLine(pdf, '●', x, baseline - size * 0.18, { bold, size: size * 0.45 });
}

/** The source's own bullet character at its own size (U+2022 as U+2219, see drawMarker); a character no font has, as drawMarker does. */
function drawSymbolMarker(pdf: Doc, marker: string, x: number, baseline: number, size: number): void {
  if (marker !== '•' && fontFor(marker) >= 0) drawLine(pdf, marker, x, baseline, { bold: false, size });
  else drawMarker(pdf, '•', x, baseline, size, false);
}

const gutterCache = new WeakMap<Page, Gutter[]>();
/** The page's gutters (top-down), found as the check finds them, from its blocks and table cells standing for its lines. */
function pageGutters(page: Page): Gutter[] {
  let found = gutterCache.get(page);
  if (!found) {
    const boxes = page.blocks.flatMap((b) => (b.table && b.table.cells.length > 0 ? b.table.cells.filter((c) => c.text.trim() !== '').map((c) => c.bbox) : [b.bbox]));
    found = gutters(boxes.map((b) => ({ xMin: b.l, xMax: b.r, yMin: page.height - b.t, yMax: page.height - b.b })));
    gutterCache.set(page, found);
  }
  return found;
}

/**
 * The right edge of the text column a left-aligned block stands in: a short line's box ends where
 * its source text ended, but its translation may use the measure of the column (the right edge of
 * the blocks that start at the same left edge), as long as nothing stands in between — no block,
 * picture, kept text or drawing beside it, and never into the next column: a block of running text
 * that starts to the right of this one anywhere on the page marks where the next column begins.
 */
function columnRight(page: Page, box: BoundingBox, obstacles: BoundingBox[] = []): number {
  let right = box.r;
  const body = page.blocks.filter((b) => b.label !== 'page_header' && b.label !== 'page_footer');
  // Text kept in its place at the end of a line (a URL, symbols.ts) is that line's, not a column of its own.
  const nextColumn = Math.min(page.width, ...body.filter((b) => b.bbox.l >= box.r - 0.5 && b.text.length > 20 && b.label !== 'table' && !isKeptText(b.text)).map((b) => b.bbox.l - 4));
  const lineEnd = (b: Block) => Math.max(b.bbox.r, ...body.filter((o) => isKeptText(o.text) && o.bbox.l >= b.bbox.r - 1 && o.bbox.l - b.bbox.r < 2 * b.fontSize && o.bbox.b < b.bbox.t && o.bbox.t > b.bbox.b).map((o) => o.bbox.r));
  // The measure is that of the blocks of this column: a block starting at the same left edge but
  // running on past where the next column begins (a title across both columns) is not one of them.
  const columnEnd = Math.max(box.r, nextColumn);
  for (const other of body) if (Math.abs(other.bbox.l - box.l) < 24 && lineEnd(other) > right && lineEnd(other) <= columnEnd) right = lineEnd(other);
  right = Math.min(right, page.width * (1 - PAGE_MARGIN), columnEnd);
  for (const other of [...page.blocks.map((b) => b.bbox), ...(page.pictures ?? []).map((p) => p.bbox), ...keptRegions(page), ...obstacles]) {
    const beside = other.l >= box.r - 0.5 && other.l < right && other.b < box.t && other.t > box.b;
    if (beside && other !== box) right = Math.min(right, other.l - 4);
  }
  // Never into a gutter of the page (check.ts's: a strip between text standing side by side on three
  // rows or more, a table's columns too, running on above and below them while nothing crosses it).
  for (const strip of pageGutters(page)) {
    const beside = strip.xMin >= box.r - 0.5 && strip.xMin < right && strip.yMin < page.height - box.b && strip.yMax > page.height - box.t;
    if (beside) right = Math.min(right, strip.xMin - 1);
  }
  return Math.max(box.r, right);
}
