// A PNG encoder for the images the reader draws (PNG 1.2 §§ 4, 11): 8-bit gray or RGB, no
// interlace, filter 0 on every row, zlib's default compression. Node's zlib gives deflate and CRC-32.
import { crc32, deflateSync } from 'node:zlib';

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function chunk(type: string, data: Uint8Array): Buffer {
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const out = Buffer.alloc(body.length + 8);
  out.writeUInt32BE(data.length, 0);
  body.copy(out, 4);
  out.writeUInt32BE(crc32(body), body.length + 4);
  return out;
}

/** `pixels`: rows top to bottom, `channels` bytes a pixel (1 gray, 3 RGB). */
export function encodePng(pixels: Uint8Array, width: number, height: number, channels: 1 | 3): Buffer {
  const stride = width * channels;
  const rows = Buffer.alloc((stride + 1) * height);
  for (let row = 0; row < height; row += 1) rows.set(pixels.subarray(row * stride, (row + 1) * stride), row * (stride + 1) + 1);
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, channels === 1 ? 0 : 2, 0, 0, 0], 8);
  return Buffer.concat([SIGNATURE, chunk('IHDR', header), chunk('IDAT', deflateSync(rows)), chunk('IEND', new Uint8Array(0))]);
}
