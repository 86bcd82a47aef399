// A page's drawing from PDFium's page objects, without decoding any image or drawing anything: each
// painted path's points (for rules and vector figures) and each image's placement (its box), form
// XObjects walked with their matrices. rulings.ts turns these into what layout reads.
import { DRAW, compose, IDENTITY, apply, type Matrix, type PaintedPath } from './rulings.ts';
import { Scratch, type Pdfium } from './pdfium.ts';

/** fpdf_edit.h: FPDF_PAGEOBJ_* and FPDF_SEGMENT_*. */
const OBJECT = { text: 1, path: 2, image: 3, shading: 4, form: 5 } as const;
const SEGMENT = { lineTo: 0, bezierTo: 1, moveTo: 2 } as const;
/** Form XObjects nested deeper than this are not walked (a hostile file can nest them without end). */
const MAX_DEPTH = 12;

export type PageObjects = { paths: PaintedPath[]; images: Matrix[] };

/** Every painted path and image placement on the page, in page space (unrotated, before the crop box origin is taken off). */
export function pageObjects(pdfium: Pdfium, page: number): PageObjects {
  const scratch = new Scratch(pdfium, 64);
  const out: PageObjects = { paths: [], images: [] };
  try {
    const count = pdfium.FPDFPage_CountObjects(page);
    for (let i = 0; i < count; i += 1) visit(pdfium, scratch, pdfium.FPDFPage_GetObject(page, i), IDENTITY, out, 0);
    return out;
  } finally {
    scratch.free();
  }
}

function matrixOf(pdfium: Pdfium, scratch: Scratch, object: number): Matrix {
  if (!pdfium.FPDFPageObj_GetMatrix(object, scratch.ptr)) return IDENTITY;
  return [scratch.f32(0), scratch.f32(1), scratch.f32(2), scratch.f32(3), scratch.f32(4), scratch.f32(5)];
}

function visit(pdfium: Pdfium, scratch: Scratch, object: number, outer: Matrix, out: PageObjects, depth: number): void {
  if (object === 0) return;
  const type = pdfium.FPDFPageObj_GetType(object);
  if (type === OBJECT.image) out.images.push(compose(outer, matrixOf(pdfium, scratch, object)));
  else if (type === OBJECT.path) {
    const path = paintedPath(pdfium, scratch, object, compose(outer, matrixOf(pdfium, scratch, object)));
    if (path) out.paths.push(path);
  } else if (type === OBJECT.form && depth < MAX_DEPTH) {
    const matrix = compose(outer, matrixOf(pdfium, scratch, object));
    const count = pdfium.FPDFFormObj_CountObjects(object);
    for (let i = 0; i < count; i += 1) visit(pdfium, scratch, pdfium.FPDFFormObj_GetObject(object, i), matrix, out, depth + 1);
  }
}

/** A path that is filled or stroked (a clipping-only path paints nothing), as DRAW opcodes in page space. */
function paintedPath(pdfium: Pdfium, scratch: Scratch, object: number, matrix: Matrix): PaintedPath | undefined {
  if (!pdfium.FPDFPath_GetDrawMode(object, scratch.at(0, 4), scratch.at(1, 4))) return undefined;
  const fill = scratch.i32(0) !== 0;
  const stroke = scratch.i32(1) !== 0;
  if (!fill && !stroke) return undefined;
  const count = pdfium.FPDFPath_CountSegments(object);
  const data: number[] = [];
  let bezier: number[] = [];
  let start: [number, number] = [0, 0];
  let at: [number, number] = [0, 0];
  for (let i = 0; i < count; i += 1) {
    const segment = pdfium.FPDFPath_GetPathSegment(object, i);
    if (segment === 0 || !pdfium.FPDFPathSegment_GetPoint(segment, scratch.at(0, 4), scratch.at(1, 4))) continue;
    const [x, y] = apply(matrix, scratch.f32(0), scratch.f32(1));
    const kind = pdfium.FPDFPathSegment_GetType(segment);
    if (kind === SEGMENT.moveTo) {
      data.push(DRAW.moveTo, x, y);
      start = [x, y];
    } else if (kind === SEGMENT.lineTo) data.push(DRAW.lineTo, x, y);
    else if (kind === SEGMENT.bezierTo) {
      // A cubic curve is three BEZIERTO segments in a row: two control points and the end point.
      bezier.push(x, y);
      if (bezier.length === 6) {
        data.push(DRAW.curveTo, ...bezier);
        bezier = [];
      }
    }
    at = [x, y];
    // PDFium stores a rectangle (re) as four lines back to its corner, then closes it: that close
    // draws nothing, and pdf.js had no segment there (it would be a rule of no length).
    const closesOpen = at[0] !== start[0] || at[1] !== start[1];
    if (pdfium.FPDFPathSegment_GetClose(segment) && closesOpen) data.push(DRAW.closePath);
  }
  return data.length > 0 ? { data: Float32Array.from(data), fillOnly: fill && !stroke } : undefined;
}
