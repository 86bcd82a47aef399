// A tagged PDF's structure tree and outline, read through PDFium beside the page reader: opened
// only for a document that is marked as tagged or has an outline, so an untagged PDF costs nothing.
import type { OutlineEntry, StructNode } from '../layout/structure-tree.ts';
import { readOutline } from './outline.ts';
import { loadPdfium, openDocument, withBuffer, type Pdfium, type PdfiumDocument } from './pdfium.ts';
import { readPageStructure } from './structure.ts';

export type DocumentTags = {
  outline: OutlineEntry[];
  /** The structure elements of page `pageNo` (from 1), or undefined when it has none. */
  structure: (pageNo: number) => StructNode[] | undefined;
  close: () => void;
};

/** The crop box's lower-left corner of a loaded page: runs and boxes are reported relative to it. */
function cropOrigin(pdfium: Pdfium, page: number): { x: number; y: number } {
  return withBuffer(pdfium, 16, (out) => {
    if (!pdfium.FPDFPage_GetCropBox(page, out, out + 4, out + 8, out + 12)) return { x: 0, y: 0 };
    const read = (offset: number) => pdfium.pdfium.getValue(out + offset, 'float');
    return { x: Math.min(read(0), read(8)), y: Math.min(read(4), read(12)) };
  });
}

/** Opens `data` with PDFium for its tags and outline; undefined when PDFium cannot open it (the page reader reports why). */
export async function openTags(data: Uint8Array): Promise<DocumentTags | undefined> {
  const pdfium = await loadPdfium();
  let document: PdfiumDocument;
  try {
    document = openDocument(pdfium, data);
  } catch {
    return undefined;
  }
  const withPage = <T>(pageIndex: number, use: (page: number) => T, otherwise: T): T => {
    const page = pdfium.FPDF_LoadPage(document.handle, pageIndex);
    if (page === 0) return otherwise;
    try {
      return use(page);
    } finally {
      pdfium.FPDF_ClosePage(page);
    }
  };
  const outline = readOutline(pdfium, document.handle, (pageIndex) => withPage(pageIndex, (page) => cropOrigin(pdfium, page), { x: 0, y: 0 }));
  return {
    outline,
    structure: (pageNo) => withPage(pageNo - 1, (page) => readPageStructure(pdfium, page, cropOrigin(pdfium, page)), undefined),
    close: () => document.close(),
  };
}
