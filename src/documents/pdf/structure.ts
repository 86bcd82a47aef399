// A page's part of the structure tree, read through PDFium (FPDF_StructTree_GetForPage and the
// FPDF_StructElement_* calls) into plain StructNodes for layout/tagged.ts: each element's standard
// type (PDFium applies the role map), its kids in order — child elements and marked-content ids —,
// alt and actual text, the table attributes, and the box of the graphics drawn under its ids.
// A hostile tree (too deep, too many elements) is cut off, never followed without end.
import type { BoundingBox } from '../document.ts';
import type { HeaderScope, StructNode } from '../layout/structure-tree.ts';
import { readUtf16, withBuffer, type Pdfium } from './pdfium.ts';

/** Deeper than any real tree (PDF/UA documents nest Document › Part › Sect › … a dozen levels at most). */
const MAX_DEPTH = 64;
/** Elements read per page at most: a real page has hundreds; a hostile one is cut off here. */
const MAX_ELEMENTS = 20_000;

/** FPDF_OBJECT_* (fpdf_object types). */
const OBJECT_NUMBER = 2;
const OBJECT_STRING = 3;
const OBJECT_NAME = 4;
/** FPDF_PAGEOBJ_* (fpdf_edit.h). */
const PAGEOBJ_TEXT = 1;
const PAGEOBJ_FORM = 5;

type Origin = { x: number; y: number };

/**
 * The structure elements of one loaded page (an FPDF_PAGE), top-level first, or undefined when
 * the page has no structure tree (an untagged PDF). `origin` is the crop box's lower-left corner:
 * boxes are reported relative to it, as the page's runs are.
 */
export function readPageStructure(pdfium: Pdfium, page: number, origin: Origin): StructNode[] | undefined {
  const tree = pdfium.FPDF_StructTree_GetForPage(page);
  if (tree === 0) return undefined;
  try {
    const budget = { left: MAX_ELEMENTS };
    const graphics = graphicsByMcid(pdfium, page, origin);
    const roots: StructNode[] = [];
    const count = pdfium.FPDF_StructTree_CountChildren(tree);
    for (let i = 0; i < count && budget.left > 0; i += 1) {
      const element = pdfium.FPDF_StructTree_GetChildAtIndex(tree, i);
      if (element !== 0) roots.push(readElement(pdfium, element, 0, budget, graphics));
    }
    return roots.length > 0 ? roots : undefined;
  } finally {
    pdfium.FPDF_StructTree_Close(tree);
  }
}

function readElement(pdfium: Pdfium, element: number, depth: number, budget: { left: number }, graphics: Map<number, BoundingBox>): StructNode {
  budget.left -= 1;
  const text = (read: (buffer: number, bytes: number) => number) => readUtf16(pdfium, read).trim();
  const node: StructNode = { type: text((b, n) => pdfium.FPDF_StructElement_GetType(element, b, n)) || 'NonStruct', kids: [] };
  const alt = text((b, n) => pdfium.FPDF_StructElement_GetAltText(element, b, n));
  if (alt) node.alt = alt;
  const actual = text((b, n) => pdfium.FPDF_StructElement_GetActualText(element, b, n));
  if (actual) node.actualText = actual;
  Object.assign(node, tableAttributes(pdfium, element));
  const own: BoundingBox[] = [];
  const count = pdfium.FPDF_StructElement_CountChildren(element);
  for (let i = 0; i < count; i += 1) {
    const child = pdfium.FPDF_StructElement_GetChildAtIndex(element, i);
    if (child !== 0) {
      if (depth < MAX_DEPTH && budget.left > 0) node.kids.push(readElement(pdfium, child, depth + 1, budget, graphics));
      continue;
    }
    const mcid = pdfium.FPDF_StructElement_GetChildMarkedContentID(element, i);
    if (mcid < 0) continue;
    node.kids.push(mcid);
    const box = graphics.get(mcid);
    if (box) own.push(box);
  }
  // An element whose /K is a bare integer has no child list PDFium counts; its id is its own.
  if (count <= 0) {
    const mcid = pdfium.FPDF_StructElement_GetMarkedContentID(element);
    if (mcid >= 0) {
      node.kids.push(mcid);
      const box = graphics.get(mcid);
      if (box) own.push(box);
    }
  }
  if (own.length > 0) node.graphicsBox = unionOf(own);
  return node;
}

const unionOf = (boxes: BoundingBox[]): BoundingBox =>
  boxes.reduce((u, b) => ({ l: Math.min(u.l, b.l), b: Math.min(u.b, b.b), r: Math.max(u.r, b.r), t: Math.max(u.t, b.t) }));

/** RowSpan, ColSpan and Scope from the element's attribute dictionaries (owner Table). */
function tableAttributes(pdfium: Pdfium, element: number): Pick<StructNode, 'rowSpan' | 'colSpan' | 'scope'> {
  const found: Pick<StructNode, 'rowSpan' | 'colSpan' | 'scope'> = {};
  const count = pdfium.FPDF_StructElement_GetAttributeCount(element);
  for (let i = 0; i < count; i += 1) {
    const attributes = pdfium.FPDF_StructElement_GetAttributeAtIndex(element, i);
    if (attributes === 0) continue;
    const rowSpan = numberValue(pdfium, attributes, 'RowSpan');
    if (rowSpan !== undefined && rowSpan >= 1) found.rowSpan = Math.min(1000, Math.round(rowSpan));
    const colSpan = numberValue(pdfium, attributes, 'ColSpan');
    if (colSpan !== undefined && colSpan >= 1) found.colSpan = Math.min(1000, Math.round(colSpan));
    const scope = stringValue(pdfium, attributes, 'Scope');
    if (scope === 'Row' || scope === 'Column' || scope === 'Both') found.scope = scope satisfies HeaderScope;
  }
  return found;
}

function numberValue(pdfium: Pdfium, attributes: number, name: string): number | undefined {
  const value = pdfium.FPDF_StructElement_Attr_GetValue(attributes, name);
  if (value === 0 || pdfium.FPDF_StructElement_Attr_GetType(value) !== OBJECT_NUMBER) return undefined;
  return withBuffer(pdfium, 4, (out) => (pdfium.FPDF_StructElement_Attr_GetNumberValue(value, out) ? pdfium.pdfium.getValue(out, 'float') : undefined));
}

function stringValue(pdfium: Pdfium, attributes: number, name: string): string | undefined {
  const value = pdfium.FPDF_StructElement_Attr_GetValue(attributes, name);
  if (value === 0) return undefined;
  const type = pdfium.FPDF_StructElement_Attr_GetType(value);
  if (type !== OBJECT_NAME && type !== OBJECT_STRING) return undefined;
  return withBuffer(pdfium, 4, (length) => {
    if (!pdfium.FPDF_StructElement_Attr_GetStringValue(value, 0, 0, length)) return undefined;
    const bytes = pdfium.pdfium.getValue(length, 'i32');
    if (bytes <= 0 || bytes > 4096) return undefined;
    return withBuffer(pdfium, bytes, (buffer) => (pdfium.FPDF_StructElement_Attr_GetStringValue(value, buffer, bytes, length) ? pdfium.pdfium.UTF16ToString(buffer) : undefined));
  });
}

/**
 * The box of the non-text page objects (images, paths, shadings, forms) drawn under each
 * marked-content id: a Figure's picture is found through its ids without decoding any image.
 */
function graphicsByMcid(pdfium: Pdfium, page: number, origin: Origin): Map<number, BoundingBox> {
  const boxes = new Map<number, BoundingBox>();
  const count = pdfium.FPDFPage_CountObjects(page);
  withBuffer(pdfium, 16, (out) => {
    for (let i = 0; i < count; i += 1) {
      const object = pdfium.FPDFPage_GetObject(page, i);
      const type = pdfium.FPDFPageObj_GetType(object);
      if (type === PAGEOBJ_TEXT) continue;
      const mcid = pdfium.FPDFPageObj_GetMarkedContentID(object);
      if (mcid < 0 && type !== PAGEOBJ_FORM) continue;
      if (!pdfium.FPDFPageObj_GetBounds(object, out, out + 4, out + 8, out + 12)) continue;
      const read = (offset: number) => pdfium.pdfium.getValue(out + offset, 'float');
      const box = { l: read(0) - origin.x, b: read(4) - origin.y, r: read(8) - origin.x, t: read(12) - origin.y };
      const ids = mcid >= 0 ? [mcid] : formMcids(pdfium, object);
      for (const id of ids) {
        const seen = boxes.get(id);
        boxes.set(id, seen ? unionOf([seen, box]) : box);
      }
    }
  });
  return boxes;
}

/** The marked-content ids used inside a form XObject (a figure drawn as one): its objects' own, one level down. */
function formMcids(pdfium: Pdfium, form: number): number[] {
  const ids = new Set<number>();
  const count = Math.min(pdfium.FPDFFormObj_CountObjects(form), 10_000);
  for (let i = 0; i < count; i += 1) {
    const mcid = pdfium.FPDFPageObj_GetMarkedContentID(pdfium.FPDFFormObj_GetObject(form, i));
    if (mcid >= 0) ids.add(mcid);
  }
  return [...ids];
}
