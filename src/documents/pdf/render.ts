// Rendering a page (or a region of one) to an image with poppler's pdftoppm, under runLimited's
// time and memory limits: page images for OCR, PNG crops for pictures.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { BoundingBox } from '../document.ts';
import { runLimited, type Limits } from '../limited.ts';

/** The most pixels one render may have (≈ A4 at 600 dpi): a 20,000 × 20,000-point page is drawn at a lower resolution instead. */
export const MAX_RENDER_PIXELS = 36_000_000;

/** The resolution to draw a page of this size at: `dpi`, or less when that would pass MAX_RENDER_PIXELS. */
export function renderDpi(page: { width: number; height: number }, dpi: number): number {
  const inches = (Math.max(1, page.width) / 72) * (Math.max(1, page.height) / 72);
  return Math.max(1, Math.min(dpi, Math.floor(Math.sqrt(MAX_RENDER_PIXELS / inches))));
}

export type RenderedPage = { file: string; dpi: number };

/**
 * A box in the unrotated page (w × h, bottom-left origin) as it appears once the page is turned
 * `rotate` degrees clockwise (its /Rotate), which is how pdftoppm draws it: for 90°, (x, y) → (y, w − x).
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

/**
 * Draws page `pageNo` of the PDF at `pdfPath` in gray at `dpi` (or lower, see renderDpi) into
 * `outDir`; returns the PGM file's path. The crop box is drawn, as pdf.js reports coordinates in it.
 */
export async function renderPageGray(pdfPath: string, pageNo: number, page: { width: number; height: number }, dpi: number, outDir: string, limits: Limits): Promise<RenderedPage> {
  const used = renderDpi(page, dpi);
  const root = path.join(outDir, `page-${pageNo}`);
  await runLimited('pdftoppm', ['-f', String(pageNo), '-l', String(pageNo), '-r', String(used), '-gray', '-cropbox', '-singlefile', pdfPath, root], limits);
  return { file: `${root}.pgm`, dpi: used };
}

/**
 * A PNG of one region of a page (a picture), at `dpi` (or lower for huge regions). The box is in
 * unrotated page points from the bottom left; pdftoppm draws the page turned by its /Rotate and
 * crops in pixels from the top left.
 */
export async function renderRegionPng(pdfPath: string, pageNo: number, unrotated: { width: number; height: number }, unrotatedBox: BoundingBox, rotate: number, dpi: number, outDir: string, limits: Limits): Promise<Uint8Array> {
  const box = displayedBox(unrotatedBox, rotate, unrotated);
  const page = displayedSize(unrotated, rotate);
  const used = renderDpi({ width: box.r - box.l, height: box.t - box.b }, dpi);
  const scale = used / 72;
  const x = Math.max(0, Math.floor(box.l * scale));
  const y = Math.max(0, Math.floor((page.height - box.t) * scale));
  const w = Math.max(1, Math.ceil((box.r - box.l) * scale));
  const h = Math.max(1, Math.ceil((box.t - box.b) * scale));
  const root = path.join(outDir, `picture-${pageNo}-${x}-${y}`);
  const args = ['-f', String(pageNo), '-l', String(pageNo), '-r', String(used), '-cropbox', '-x', String(x), '-y', String(y), '-W', String(w), '-H', String(h), '-png', '-singlefile', pdfPath, root];
  await runLimited('pdftoppm', args, limits);
  return new Uint8Array(await readFile(`${root}.png`));
}
