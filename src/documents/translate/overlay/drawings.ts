// What the text-free page draws, as boxes text must respect (issue 26): pictures, figures, rules and
// fills seen on the page ghostscript left without text, whether or not the parser reported them as
// pictures (on the aviation handbook page it reports none, and the photographs' callout labels come
// out as text blocks). A translation never grows or moves onto one of them, and a short label
// printed on one is a label of the drawing: translated in place at its own size, or kept.
import type { Block, BoundingBox, Page } from '../../document.ts';
import type { Raster } from './background.ts';

/** Cells of this many pixels are the grain of the ink map (at 72 dpi, 3 pt). */
const CELL = 3;
/** A channel this far from white is ink. */
const INK = 40;

/**
 * The bounding boxes of the connected drawn regions of a text-free page (PDF points, bottom-left
 * origin). A region covering most of the page (a page-wide background or a scan) is left out: text
 * stands on it by design.
 */
export function inkRegions(raster: Raster, pageHeight: number): BoundingBox[] {
  const cols = Math.ceil(raster.width / CELL);
  const rows = Math.ceil(raster.height / CELL);
  const ink = new Uint8Array(cols * rows);
  for (let y = 0; y < raster.height; y++) {
    for (let x = 0; x < raster.width; x++) {
      const i = (y * raster.width + x) * 3;
      if (255 - raster.data[i]! > INK || 255 - raster.data[i + 1]! > INK || 255 - raster.data[i + 2]! > INK) ink[Math.floor(y / CELL) * cols + Math.floor(x / CELL)] = 1;
    }
  }
  const scale = 72 / raster.dpi;
  const seen = new Uint8Array(cols * rows);
  const regions: BoundingBox[] = [];
  const stack: number[] = [];
  for (let start = 0; start < ink.length; start++) {
    if (!ink[start] || seen[start]) continue;
    let [minX, maxX, minY, maxY] = [cols, -1, rows, -1];
    stack.push(start);
    seen[start] = 1;
    while (stack.length > 0) {
      const cell = stack.pop()!;
      const cx = cell % cols;
      const cy = (cell - cx) / cols;
      minX = Math.min(minX, cx); maxX = Math.max(maxX, cx); minY = Math.min(minY, cy); maxY = Math.max(maxY, cy);
      for (let dy = -1; dy <= 1; dy++) {
        for (let dx = -1; dx <= 1; dx++) {
          const nx = cx + dx;
          const ny = cy + dy;
          if (nx < 0 || ny < 0 || nx >= cols || ny >= rows) continue;
          const next = ny * cols + nx;
          if (ink[next] && !seen[next]) { seen[next] = 1; stack.push(next); }
        }
      }
    }
    const box = { l: minX * CELL * scale, r: (maxX + 1) * CELL * scale, t: pageHeight - minY * CELL * scale, b: pageHeight - (maxY + 1) * CELL * scale };
    const width = box.r - box.l;
    const height = box.t - box.b;
    if (width * height > 0.6 * raster.width * raster.height * scale * scale) continue;
    regions.push(box);
  }
  return regions;
}

/** The size most of the page's text is set in (weighted by characters). */
export function bodySize(page: Page): number {
  const weight = new Map<number, number>();
  for (const block of page.blocks) if (block.label === 'text') weight.set(block.fontSize, (weight.get(block.fontSize) ?? 0) + block.text.length);
  let best = 0;
  let size = 10;
  for (const [s, w] of weight) if (w > best) { best = w; size = s; }
  return size;
}

const area = (b: BoundingBox) => Math.max(0, b.r - b.l) * Math.max(0, b.t - b.b);
const touches = (a: BoundingBox, b: BoundingBox, slack: number) => a.l < b.r + slack && a.r > b.l - slack && a.b < b.t + slack && a.t > b.b - slack;

/**
 * A label of a drawing: a few words, smaller than the body text, on or against a drawn region much
 * larger than itself ("Nut case", "Locking shoulder" on the handbook's photographs). Captions stand
 * apart from their figure and are not labels.
 */
export function isDrawingLabel(block: Block, page: Page, ink: BoundingBox[]): boolean {
  if (block.label === 'table' || block.label === 'caption' || block.label === 'page_header' || block.label === 'page_footer') return false;
  const words = block.text.trim().split(/\s+/).length;
  if (words > 6 || block.fontSize > bodySize(page) * 0.9) return false;
  return ink.some((region) => area(region) > 4 * area(block.bbox) && touches(region, block.bbox, 2));
}
