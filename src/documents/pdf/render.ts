// Drawing a page (or a region of one) to an image with PDFium, in the reader process: page images
// for OCR (8-bit gray PGM) and PNG crops for pictures. The page is drawn turned by its /Rotate and
// cropped to its crop box, as pdftoppm -cropbox drew it before (docs/documents/pdf-reader.md says
// why PDFium now: no process per image, and faster in the benchmark).
import { deflateSync } from 'node:zlib';
import type { BoundingBox } from '../document.ts';
import { heapU8, type Pdfium } from './pdfium.ts';
import { pageBox, withPage, type OpenPdf } from './reader.ts';
import { displayedBox, displayedSize } from './turn.ts';

/** The most pixels one render may have (≈ A4 at 600 dpi): a 20,000 × 20,000-point page is drawn at a lower resolution instead. */
export const MAX_RENDER_PIXELS = 36_000_000;

/** The resolution to draw a page of this size at: `dpi`, or less when that would pass MAX_RENDER_PIXELS. */
export function renderDpi(page: { width: number; height: number }, dpi: number): number {
  const inches = (Math.max(1, page.width) / 72) * (Math.max(1, page.height) / 72);
  return Math.max(1, Math.min(dpi, Math.floor(Math.sqrt(MAX_RENDER_PIXELS / inches))));
}

/**
 * What to draw: page `pageNo` at `dpi` (lowered to fit MAX_RENDER_PIXELS, over the whole page or
 * over `region`), as 8-bit gray PGM or as a colour PNG; `region` is a box in unrotated page points
 * from the crop box's bottom-left corner (a picture), drawn as the page is shown.
 */
export type RenderRequest = { pageNo: number; dpi: number; format: 'pgm' | 'png'; region?: BoundingBox; /** Instead of `dpi`: the resolution that makes the page's longer side this many pixels. */ longestSide?: number };

/** The image file's bytes, the resolution used and its size in pixels. */
export type RenderedImage = { data: Uint8Array; dpi: number; width: number; height: number };

/** fpdfview.h: FPDF_ANNOT draws annotations' appearances (form fields, stamps), as pdftoppm does. */
const FPDF_ANNOT = 0x01;
const WHITE = 0xffffffff;

export function renderPage(open: OpenPdf, request: RenderRequest): RenderedImage {
  const { pdfium } = open;
  return withPage(open, request.pageNo, (page) => {
    const box = pageBox(pdfium, page);
    const rotate = (((pdfium.FPDFPage_GetRotation(page) * 90) % 360) + 360) % 360;
    const unrotated = { width: box.width, height: box.height };
    const shown = displayedSize(unrotated, rotate);
    const region = request.region ? displayedBox(request.region, rotate, unrotated) : { l: 0, b: 0, r: shown.width, t: shown.height };
    const wanted = request.longestSide ? (request.longestSide * 72) / Math.max(1, shown.width, shown.height) : request.dpi;
    const dpi = renderDpi({ width: region.r - region.l, height: region.t - region.b }, wanted);
    const scale = dpi / 72;
    const x = Math.max(0, Math.floor(region.l * scale));
    const y = Math.max(0, Math.floor((shown.height - region.t) * scale));
    const width = Math.max(1, Math.min(Math.ceil((region.r - region.l) * scale), Math.ceil(shown.width * scale) - x));
    const height = Math.max(1, Math.min(Math.ceil((region.t - region.b) * scale), Math.ceil(shown.height * scale) - y));
    const frame = { x, y, width, height, pageWidth: Math.round(shown.width * scale), pageHeight: Math.round(shown.height * scale) };
    const data = request.format === 'pgm' ? pgm(drawn(pdfium, page, frame, 'gray'), width, height) : png(drawn(pdfium, page, frame, 'rgb'), width, height);
    return { data, dpi, width, height };
  });
}

type Frame = { x: number; y: number; width: number; height: number; pageWidth: number; pageHeight: number };

/** fpdfview.h: FPDFBitmap_Gray (8 bits a pixel), FPDFBitmap_BGRx (32); FPDF_GRAYSCALE draws in gray. */
const BITMAP = { gray: 1, bgrx: 3 } as const;
const FPDF_GRAYSCALE = 0x08;

/** The frame's pixels drawn on white: 8-bit gray (1 byte each) or RGB (3 bytes each). */
function drawn(pdfium: Pdfium, page: number, frame: Frame, colours: 'gray' | 'rgb'): Uint8Array {
  const gray = colours === 'gray';
  const bitmap = pdfium.FPDFBitmap_CreateEx(frame.width, frame.height, gray ? BITMAP.gray : BITMAP.bgrx, 0, 0);
  if (bitmap === 0) throw new Error(`PDFium could not allocate a ${frame.width} × ${frame.height} image`);
  try {
    pdfium.FPDFBitmap_FillRect(bitmap, 0, 0, frame.width, frame.height, WHITE);
    // Rotation 0 here is "as the page is shown": PDFium adds the page's own /Rotate to it.
    pdfium.FPDF_RenderPageBitmap(bitmap, page, -frame.x, -frame.y, frame.pageWidth, frame.pageHeight, 0, FPDF_ANNOT | (gray ? FPDF_GRAYSCALE : 0));
    const stride = pdfium.FPDFBitmap_GetStride(bitmap);
    const start = pdfium.FPDFBitmap_GetBuffer(bitmap);
    const heap = heapU8(pdfium);
    const channels = gray ? 1 : 3;
    const out = new Uint8Array(frame.width * frame.height * channels);
    for (let row = 0; row < frame.height; row += 1) {
      const from = start + row * stride;
      if (gray) {
        out.set(heap.subarray(from, from + frame.width), row * frame.width);
        continue;
      }
      // BGRx to RGB.
      for (let col = 0, f = from, to = row * frame.width * 3; col < frame.width; col += 1, f += 4, to += 3) {
        out[to] = heap[f + 2] as number;
        out[to + 1] = heap[f + 1] as number;
        out[to + 2] = heap[f] as number;
      }
    }
    return out;
  } finally {
    pdfium.FPDFBitmap_Destroy(bitmap);
  }
}

/** Binary PGM (P5, 8-bit) — what OCR and the rule finder (ocr/image-rules.ts) read. */
function pgm(gray: Uint8Array, width: number, height: number): Uint8Array {
  const header = Buffer.from(`P5\n${width} ${height}\n255\n`, 'latin1');
  return Buffer.concat([header, gray]);
}

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n += 1) {
    let c = n;
    for (let k = 0; k < 8; k += 1) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const byte of bytes) c = (CRC_TABLE[(c ^ byte) & 0xff] ?? 0) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Uint8Array): Buffer {
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const out = Buffer.alloc(body.length + 8);
  out.writeUInt32BE(data.length, 0);
  body.copy(out, 4);
  out.writeUInt32BE(crc32(body), body.length + 4);
  return out;
}

/** A PNG (8-bit RGB, no filter, zlib level 6): PNG 1.2 §§ 4, 11. */
function png(rgb: Uint8Array, width: number, height: number): Uint8Array {
  const rows = Buffer.alloc((width * 3 + 1) * height);
  for (let row = 0; row < height; row += 1) Buffer.from(rgb.buffer, rgb.byteOffset + row * width * 3, width * 3).copy(rows, row * (width * 3 + 1) + 1);
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', header), chunk('IDAT', deflateSync(rows, { level: 6 })), chunk('IEND', new Uint8Array(0))]);
}
