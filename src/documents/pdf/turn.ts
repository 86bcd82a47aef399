// A page's /Rotate: boxes in the unrotated page as they appear on the page a viewer shows. Pure, so
// the worker's side (extract.ts, ocr-page.ts) uses it without loading PDFium.
import type { BoundingBox } from '../document.ts';

/**
 * A box in the unrotated page (w × h, bottom-left origin) as it appears once the page is turned
 * `rotate` degrees clockwise (its /Rotate), which is how a viewer draws it: for 90°, (x, y) → (y, w − x).
 */
export function displayedBox(box: BoundingBox, rotate: number, page: { width: number; height: number }): BoundingBox {
  const { width: w, height: h } = page;
  const turn = ([x, y]: [number, number]): [number, number] =>
    rotate === 90 ? [y, w - x] : rotate === 180 ? [w - x, h - y] : rotate === 270 ? [h - y, x] : [x, y];
  const [a, c] = [turn([box.l, box.b]), turn([box.r, box.t])];
  return { l: Math.min(a[0], c[0]), r: Math.max(a[0], c[0]), b: Math.min(a[1], c[1]), t: Math.max(a[1], c[1]) };
}

/** The page's size as drawn: width and height trade places at 90° and 270°. */
export const displayedSize = (page: { width: number; height: number }, rotate: number) => (rotate === 90 || rotate === 270 ? { width: page.height, height: page.width } : { width: page.width, height: page.height });
