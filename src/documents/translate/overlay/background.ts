// Scanned pages (issue 18): "the text pixels under each translated block are covered with the
// block's sampled background colour, then the translation is drawn". The page is rendered with
// poppler's pdftoppm (no shell, time and memory limits) as a binary PPM, which needs no decoder;
// a block's background is the most common colour on a ring just around its box.
// The text-free page is looked at the same way before a block moves down (reflow.ts): only onto
// an even colour, never onto a rule, a fill's edge or an image.
import { execFile } from 'node:child_process';
import type { BoundingBox } from '../../document.ts';

export type Rgb = [number, number, number];
export type Raster = { width: number; height: number; dpi: number; data: Uint8Array };

export const SAMPLE_DPI = 50;
const RENDER_TIMEOUT_MS = 60_000;
const RENDER_MEMORY_BYTES = 1024 ** 3;

/** Renders one page (from 1) of `file` at `dpi` into RGB pixels. */
export function renderPage(file: string, pageNo: number, dpi = SAMPLE_DPI, signal?: AbortSignal): Promise<Raster> {
  const args = [`--as=${RENDER_MEMORY_BYTES}`, '--', 'pdftoppm', '-r', String(dpi), '-f', String(pageNo), '-l', String(pageNo), file];
  return new Promise((resolve, reject) => {
    execFile('prlimit', args, { encoding: 'buffer', timeout: RENDER_TIMEOUT_MS, killSignal: 'SIGKILL', signal, maxBuffer: 256 * 1024 * 1024 }, (error, stdout) => {
      if (error) return reject(new Error(`pdftoppm could not render page ${pageNo} to sample its background colours (${error.killed ? 'it ran too long' : error.message.split('\n', 1)[0]}).`));
      try {
        resolve({ ...parsePpm(stdout), dpi });
      } catch (parseError) {
        reject(parseError instanceof Error ? parseError : new Error(String(parseError)));
      }
    });
  });
}

/** A binary PPM (P6, maxval 255) as pdftoppm writes it. */
export function parsePpm(buffer: Buffer): Omit<Raster, 'dpi'> {
  const header = /^P6\s+(\d+)\s+(\d+)\s+255\s/.exec(buffer.subarray(0, 40).toString('latin1'));
  if (!header) throw new Error('pdftoppm did not write a PPM image.');
  const width = Number(header[1]);
  const height = Number(header[2]);
  const data = buffer.subarray(header[0].length, header[0].length + width * height * 3);
  if (data.length !== width * height * 3) throw new Error('pdftoppm wrote a truncated PPM image.');
  return { width, height, data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength) };
}

/** The most common colour (in steps of 8 per channel) on a ring 1–3 px outside `box` (PDF points, bottom-left origin). */
export function backgroundOf(raster: Raster, pageHeight: number, box: BoundingBox): Rgb {
  const scale = raster.dpi / 72;
  const left = Math.floor(box.l * scale) - 3;
  const right = Math.ceil(box.r * scale) + 3;
  const top = Math.floor((pageHeight - box.t) * scale) - 3;
  const bottom = Math.ceil((pageHeight - box.b) * scale) + 3;
  // The most common bucket (8 levels per channel, so scan noise groups together), then the most
  // common exact colour inside it (a mean would drift grey from anti-aliased edges and show as a patch).
  const buckets = new Map<number, number>();
  const exact = new Map<number, number>();
  const add = (x: number, y: number) => {
    if (x < 0 || y < 0 || x >= raster.width || y >= raster.height) return;
    const i = (y * raster.width + x) * 3;
    const key = (raster.data[i]! << 16) | (raster.data[i + 1]! << 8) | raster.data[i + 2]!;
    const bucket = key & 0xf8f8f8;
    buckets.set(bucket, (buckets.get(bucket) ?? 0) + 1);
    exact.set(key, (exact.get(key) ?? 0) + 1);
  };
  for (let ring = 0; ring < 3; ring++) {
    for (let x = left + ring; x <= right - ring; x++) { add(x, top + ring); add(x, bottom - ring); }
    for (let y = top + ring; y <= bottom - ring; y++) { add(left + ring, y); add(right - ring, y); }
  }
  let bestBucket = -1;
  for (const [bucket, n] of buckets) if (bestBucket < 0 || n > buckets.get(bestBucket)!) bestBucket = bucket;
  if (bestBucket < 0) return [255, 255, 255];
  let best = -1;
  for (const [key, n] of exact) if ((key & 0xf8f8f8) === bestBucket && (best < 0 || n > exact.get(best)!)) best = key;
  return [(best >> 16) & 0xff, (best >> 8) & 0xff, best & 0xff];
}

/** Black text on light backgrounds, white on dark ones. */
export function textColourOn(background: Rgb): Rgb {
  const luminance = 0.2126 * background[0] + 0.7152 * background[1] + 0.0722 * background[2];
  return luminance < 110 ? [255, 255, 255] : [0, 0, 0];
}

/**
 * Whether a region (PDF points, bottom-left origin) is one even colour on the raster: no rule, fill
 * edge, image or glyph in it. Channels may vary by `tolerance` (anti-aliasing, scan noise).
 */
export function isBlank(raster: Raster, pageHeight: number, box: BoundingBox, tolerance = 32): boolean {
  const scale = raster.dpi / 72;
  const left = Math.max(0, Math.floor(box.l * scale));
  const right = Math.min(raster.width - 1, Math.ceil(box.r * scale));
  const top = Math.max(0, Math.floor((pageHeight - box.t) * scale));
  const bottom = Math.min(raster.height - 1, Math.ceil((pageHeight - box.b) * scale));
  const low = [255, 255, 255];
  const high = [0, 0, 0];
  for (let y = top; y <= bottom; y++) {
    for (let x = left; x <= right; x++) {
      const i = (y * raster.width + x) * 3;
      for (let c = 0; c < 3; c++) {
        const v = raster.data[i + c]!;
        if (v < low[c]!) low[c] = v;
        if (v > high[c]!) high[c] = v;
        if (high[c]! - low[c]! > tolerance) return false;
      }
    }
  }
  return true;
}
