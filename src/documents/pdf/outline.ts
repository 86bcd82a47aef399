// The document outline (bookmarks, ISO 32000-1 §12.3.3), read through PDFium's FPDFBookmark_* and
// FPDFDest_* calls: each entry's title, depth, target page and the y it scrolls to. A bookmark that
// points nowhere on this document's pages is left out; a hostile outline (a loop, thousands of
// entries, absurd nesting) is cut off.
import type { OutlineEntry } from '../layout/structure-tree.ts';
import { readUtf16, withBuffer, type Pdfium } from './pdfium.ts';

const MAX_ENTRIES = 5000;
const MAX_DEPTH = 32;
/** PDFACTION_GOTO (fpdf_doc.h): a go-to action inside this document. */
const ACTION_GOTO = 1;

/** The outline of an open document (an FPDF_DOCUMENT), in order; [] when it has none. `pageOrigin(i)` is page i's crop-box corner (0-based i). */
export function readOutline(pdfium: Pdfium, document: number, pageOrigin: (pageIndex: number) => { x: number; y: number } = () => ({ x: 0, y: 0 })): OutlineEntry[] {
  const entries: OutlineEntry[] = [];
  const seen = new Set<number>();
  const walk = (parent: number, depth: number) => {
    let bookmark = pdfium.FPDFBookmark_GetFirstChild(document, parent);
    while (bookmark !== 0 && entries.length < MAX_ENTRIES && !seen.has(bookmark)) {
      seen.add(bookmark);
      const target = destinationOf(pdfium, document, bookmark);
      const title = readUtf16(pdfium, (b, n) => pdfium.FPDFBookmark_GetTitle(bookmark, b, n)).replace(/\s+/gu, ' ').trim();
      if (target && title !== '') {
        const origin = pageOrigin(target.pageIndex);
        entries.push({ title, depth, pageNo: target.pageIndex + 1, ...(target.y === undefined ? {} : { y: target.y - origin.y }) });
      }
      if (depth < MAX_DEPTH) walk(bookmark, depth + 1);
      bookmark = pdfium.FPDFBookmark_GetNextSibling(document, bookmark);
    }
  };
  walk(0, 1);
  return entries;
}

function destinationOf(pdfium: Pdfium, document: number, bookmark: number): { pageIndex: number; y?: number } | undefined {
  let dest = pdfium.FPDFBookmark_GetDest(document, bookmark);
  if (dest === 0) {
    const action = pdfium.FPDFBookmark_GetAction(bookmark);
    if (action !== 0 && pdfium.FPDFAction_GetType(action) === ACTION_GOTO) dest = pdfium.FPDFAction_GetDest(document, action);
  }
  if (dest === 0) return undefined;
  const pageIndex = pdfium.FPDFDest_GetDestPageIndex(document, dest);
  if (pageIndex < 0) return undefined;
  // FPDFDest_GetLocationInPage(dest, &hasX, &hasY, &hasZoom, &x, &y, &zoom): three ints, then three floats.
  const y = withBuffer(pdfium, 24, (out) => {
    if (!pdfium.FPDFDest_GetLocationInPage(dest, out, out + 4, out + 8, out + 12, out + 16, out + 20)) return undefined;
    return pdfium.pdfium.getValue(out + 4, 'i32') ? pdfium.pdfium.getValue(out + 16, 'float') : undefined;
  });
  return y === undefined || !Number.isFinite(y) ? { pageIndex } : { pageIndex, y };
}
