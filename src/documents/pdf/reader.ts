// Opening a PDF with PDFium and reading each page as positioned text runs, the straight rules and
// the image boxes drawn on it; the layout stage turns those into blocks. Only this folder knows the
// PDF library, and the worker reads through the reader process (reader-process.ts), never itself.
import type { PageContent } from '../layout/geometry.ts';
import { NotAPdfError, UnreadablePdfError } from './errors.ts';
import { figureRegions } from './figures.ts';
import { hasWidgets, openForm, readFormFields, type FormHandle } from './form-fields.ts';
import type { FontStyle } from './fonts.ts';
import { pageObjects } from './page-objects.ts';
import { textRuns } from './page-text.ts';
import { FPDF_ERR, loadPdfium, openDocument, PdfiumOpenError, Scratch, type Pdfium, type PdfiumDocument } from './pdfium.ts';
import { graphicsFrom } from './rulings.ts';
import { readPageStructure } from './structure.ts';

/** PDF 1.7 (ISO 32000) §7.5.2: readers accept the %PDF- header anywhere in the first 1024 bytes. */
export function hasPdfHeader(data: Uint8Array): boolean {
  const head = Buffer.from(data.buffer, data.byteOffset, Math.min(data.byteLength, 1024));
  return head.includes('%PDF-', 0, 'latin1');
}

export const NOT_A_PDF = 'The file is not a PDF (no %PDF- header in its first 1024 bytes); upload a PDF document.';
export const PASSWORD_PROTECTED = 'The PDF is protected by a password; remove the password (for example, print it to a new PDF) and upload it again.';
const WRONG_PASSWORD = 'The password given does not open this PDF; check it and try again, or remove the password and upload the file again.';

/** An open document: its page count, its PDFium handles, and close() (always call it). */
export type OpenPdf = { pages: number; pdfium: Pdfium; document: PdfiumDocument; fonts: Map<number, FontStyle>; close: () => void; /** The form environment, opened on the first page with a widget. */ form?: FormHandle };

/** Opens the bytes (NotAPdfError, UnreadablePdfError for a damaged or locked file). `password` opens an encrypted one. */
export async function openPdf(data: Uint8Array, options: { password?: string; heapCapBytes?: number } = {}): Promise<OpenPdf> {
  if (!hasPdfHeader(data)) throw new NotAPdfError(NOT_A_PDF);
  const pdfium = await loadPdfium(options.heapCapBytes);
  let document: PdfiumDocument;
  try {
    document = openDocument(pdfium, data, options.password);
  } catch (error) {
    if (!(error instanceof PdfiumOpenError)) throw error;
    if (error.code === FPDF_ERR.PASSWORD) throw new UnreadablePdfError(options.password ? WRONG_PASSWORD : PASSWORD_PROTECTED);
    if (error.code === FPDF_ERR.SECURITY) throw new UnreadablePdfError('The PDF uses an encryption this reader does not support; save it again without encryption, then upload it again.');
    throw new UnreadablePdfError(`The PDF is damaged and cannot be read (PDFium: ${describeError(error.code)}); re-export or repair it, then upload it again.`);
  }
  if (document.pages <= 0) {
    document.close();
    throw new UnreadablePdfError('The PDF is damaged and cannot be read (it has no pages); re-export or repair it, then upload it again.');
  }
  const open: OpenPdf = {
    pages: document.pages,
    pdfium,
    document,
    fonts: new Map(),
    close: () => {
      open.form?.close();
      open.form = undefined;
      document.close();
    },
  };
  return open;
}

function describeError(code: number): string {
  if (code === FPDF_ERR.FILE) return 'the file could not be read';
  if (code === FPDF_ERR.FORMAT) return 'not a PDF or corrupted';
  if (code === FPDF_ERR.PAGE) return 'a page was not found or has an error';
  return `error ${code}`;
}

/** A page as read, with its /Rotate (0, 90, 180 or 270: how far viewers turn it clockwise). */
export type ReadPage = PageContent & { rotate: number };

/** The page's visible area: the crop box clipped to the media box (as pdf.js's view), in page points. */
export function pageBox(pdfium: Pdfium, page: number): { x: number; y: number; width: number; height: number } {
  const scratch = new Scratch(pdfium, 32);
  try {
    const read = (get: (page: number, l: number, b: number, r: number, t: number) => boolean) => {
      if (!get(page, scratch.at(0, 4), scratch.at(1, 4), scratch.at(2, 4), scratch.at(3, 4))) return undefined;
      const [a, b, c, d] = [scratch.f32(0), scratch.f32(1), scratch.f32(2), scratch.f32(3)];
      return { l: Math.min(a, c), b: Math.min(b, d), r: Math.max(a, c), t: Math.max(b, d) };
    };
    const media = read(pdfium.FPDFPage_GetMediaBox) ?? { l: 0, b: 0, r: 612, t: 792 };
    const crop = read(pdfium.FPDFPage_GetCropBox) ?? media;
    const box = { l: Math.max(crop.l, media.l), b: Math.max(crop.b, media.b), r: Math.min(crop.r, media.r), t: Math.min(crop.t, media.t) };
    const usable = box.r > box.l && box.t > box.b ? box : media;
    return { x: usable.l, y: usable.b, width: usable.r - usable.l, height: usable.t - usable.b };
  } finally {
    scratch.free();
  }
}

/** `use` with page `pageNo` (from 1) loaded; a page PDFium cannot load throws (a damaged page). */
export function withPage<T>(open: OpenPdf, pageNo: number, use: (page: number) => T): T {
  const page = open.pdfium.FPDF_LoadPage(open.document.handle, pageNo - 1);
  if (page === 0) throw new Error(`PDFium could not load page ${pageNo}`);
  try {
    return use(page);
  } finally {
    open.pdfium.FPDF_ClosePage(page);
  }
}

/** One page as layout reads it: runs, rules, image boxes (page points, bottom-left origin, unrotated). */
export function readPage(open: OpenPdf, pageNo: number): ReadPage {
  const { pdfium } = open;
  return withPage(open, pageNo, (page) => {
    const box = pageBox(pdfium, page);
    const origin = { x: box.x, y: box.y };
    const size = { width: box.width, height: box.height };
    const runs = textRuns(pdfium, page, box, open.fonts);
    const objects = pageObjects(pdfium, page);
    const { rulings, images, drawings } = graphicsFrom(objects.paths, objects.images, origin, size);
    const figures = figureRegions(drawings, runs, images, rulings);
    const rotate = (((pdfium.FPDFPage_GetRotation(page) * 90) % 360) + 360) % 360;
    // A tagged page's structure elements (issue 31, item 3), only where its text carries marked-content ids.
    const structure = runs.some((run) => run.mcid !== undefined) ? readPageStructure(pdfium, page, origin) : undefined;
    // A form's fields (issue 41, item 5): their values are in the widgets, not in the page's text.
    if (!open.form && hasWidgets(pdfium, page)) open.form = openForm(pdfium, open.document.handle);
    const fields = open.form ? readFormFields(pdfium, open.form, page, origin) : [];
    return { pageNo, ...size, runs, rulings, images: [...images, ...figures].map((bbox) => ({ bbox })), rotate, ...(structure ? { structure } : {}), ...(fields.length > 0 ? { fields } : {}) };
  });
}
