// Straight rules found in a scanned page's image, so a ruled table keeps its grid on a scan: a rule
// is a thin band (at most ~2 pt) of dark pixels at least half an inch long. Letters, photos and
// shading are not: their dark runs are short or their bands thick.
import { readFile } from 'node:fs/promises';
import type { Ruling } from '../layout/geometry.ts';

type Gray = { width: number; height: number; pixels: Uint8Array };

/** A binary PGM (P5, 8-bit) as pdftoppm -gray writes it. */
export function parsePgm(data: Uint8Array): Gray | undefined {
  const header = Buffer.from(data.buffer, data.byteOffset, Math.min(64, data.byteLength)).toString('latin1');
  const m = /^P5\s+(?:#[^\n]*\n\s*)*(\d+)\s+(\d+)\s+(\d+)\s/.exec(header);
  if (!m || Number(m[3]) > 255) return undefined;
  const [width, height] = [Number(m[1]), Number(m[2])];
  const start = m[0].length;
  if (data.byteLength < start + width * height) return undefined;
  return { width, height, pixels: data.subarray(start, start + width * height) };
}

const DARK = 128;

type Segment = { from: number; to: number; first: number; last: number };

/** Runs of dark pixels at least `minRun` long along each line (rows, or columns when `vertical`), joined across adjacent lines into bands. */
function bands(image: Gray, vertical: boolean, minRun: number): Segment[] {
  const { width, height, pixels } = image;
  const [lines, length] = vertical ? [width, height] : [height, width];
  const at = vertical ? (line: number, i: number) => pixels[i * width + line] ?? 255 : (line: number, i: number) => pixels[line * width + i] ?? 255;
  const open: Segment[] = [];
  const done: Segment[] = [];
  for (let line = 0; line < lines; line += 1) {
    const runs: Array<[number, number]> = [];
    let start = -1;
    for (let i = 0; i <= length; i += 1) {
      const dark = i < length && at(line, i) < DARK;
      if (dark && start < 0) start = i;
      else if (!dark && start >= 0) {
        if (i - start >= minRun) runs.push([start, i]);
        start = -1;
      }
    }
    for (let k = open.length - 1; k >= 0; k -= 1) {
      const band = open[k] as Segment;
      const joined = runs.findIndex(([a, b]) => a < band.to && band.from < b);
      if (joined >= 0) {
        const [a, b] = runs.splice(joined, 1)[0] as [number, number];
        Object.assign(band, { from: Math.min(band.from, a), to: Math.max(band.to, b), last: line });
      } else done.push(...open.splice(k, 1));
    }
    for (const [a, b] of runs) open.push({ from: a, to: b, first: line, last: line });
  }
  return [...done, ...open];
}

/** Rules of the page image, in page points (bottom-left origin) for a page `pageHeight` points tall drawn at `dpi`. */
export function rulesInImage(image: Gray, dpi: number, pageHeight: number): Ruling[] {
  const minRun = Math.round(dpi / 2);
  const maxThickness = Math.max(2, Math.round((dpi * 2.5) / 72));
  const scale = 72 / dpi;
  const rules: Ruling[] = [];
  for (const band of bands(image, false, minRun)) {
    if (band.last - band.first + 1 > maxThickness) continue;
    const y = pageHeight - ((band.first + band.last + 1) / 2) * scale;
    rules.push({ x1: band.from * scale, y1: y, x2: band.to * scale, y2: y });
  }
  for (const band of bands(image, true, minRun)) {
    if (band.last - band.first + 1 > maxThickness) continue;
    const x = ((band.first + band.last + 1) / 2) * scale;
    rules.push({ x1: x, y1: pageHeight - band.to * scale, x2: x, y2: pageHeight - band.from * scale });
  }
  return rules;
}

/** Rules of a rendered page file (PGM); none when the file is not a readable PGM. */
export async function rulesInPgm(file: string, dpi: number, pageHeight: number): Promise<Ruling[]> {
  const image = parsePgm(new Uint8Array(await readFile(file)));
  return image ? rulesInImage(image, dpi, pageHeight) : [];
}
