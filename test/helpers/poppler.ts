// Reading PDFs the way a person's tools do, for checking translated PDFs: poppler's pdftotext (with
// word boxes) and pdftoppm, and ghostscript's text filter, on temporary files.
import { execFile, spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { renderPage, type Raster } from '../../src/documents/translate/overlay/background.ts';

const run = promisify(execFile);

/** A word as `pdftotext -bbox` reports it: top-down page coordinates in points. */
export type Word = { text: string; xMin: number; yMin: number; xMax: number; yMax: number };

async function withFile<T>(pdf: Uint8Array, use: (file: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(path.join(tmpdir(), 'signet-poppler-'));
  try {
    const file = path.join(dir, 'doc.pdf');
    await writeFile(file, pdf);
    return await use(file);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export function pageText(pdf: Uint8Array, pageNo: number): Promise<string> {
  return withFile(pdf, async (file) => (await run('pdftotext', ['-f', String(pageNo), '-l', String(pageNo), file, '-'], { timeout: 30_000 })).stdout);
}

export function pageWords(pdf: Uint8Array, pageNo: number): Promise<Word[]> {
  return withFile(pdf, async (file) => {
    const { stdout } = await run('pdftotext', ['-bbox', '-f', String(pageNo), '-l', String(pageNo), file, '-'], { timeout: 30_000, maxBuffer: 32 * 1024 * 1024 });
    const unescape = (s: string) => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, '&');
    return [...stdout.matchAll(/<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)<\/word>/g)].map((m) => ({
      xMin: Number(m[1]), yMin: Number(m[2]), xMax: Number(m[3]), yMax: Number(m[4]), text: unescape(m[5]!),
    }));
  });
}

/** The lines `pdftotext -bbox-layout` finds on a page: each line's box and its words' text. */
export function pageLines(pdf: Uint8Array, pageNo: number): Promise<Word[]> {
  return withFile(pdf, async (file) => {
    const { stdout } = await run('pdftotext', ['-bbox-layout', '-f', String(pageNo), '-l', String(pageNo), file, '-'], { timeout: 30_000, maxBuffer: 32 * 1024 * 1024 });
    return [...stdout.matchAll(/<line xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([\s\S]*?)<\/line>/g)].map((m) => ({
      xMin: Number(m[1]), yMin: Number(m[2]), xMax: Number(m[3]), yMax: Number(m[4]),
      text: [...m[5]!.matchAll(/<word[^>]*>([^<]*)<\/word>/g)].map((w) => w[1]).join(' '),
    }));
  });
}

export function render(pdf: Uint8Array, pageNo: number, dpi = 72): Promise<Raster> {
  return withFile(pdf, (file) => renderPage(file, pageNo, dpi));
}

/** The PDF without its text, by ghostscript's own filter: what is left is drawings, images and backgrounds. */
export function withoutText(pdf: Uint8Array): Promise<Uint8Array> {
  return withFile(pdf, async (file) => {
    const out = `${file}.notext.pdf`;
    await run('gs', ['-q', '-dSAFER', '-dBATCH', '-dNOPAUSE', '-sDEVICE=pdfwrite', '-dFILTERTEXT', `-sOutputFile=${out}`, file], { timeout: 60_000 });
    const { readFile } = await import('node:fs/promises');
    return new Uint8Array(await readFile(out));
  });
}

/** Pixels (of w × h) whose colour differs by more than `tolerance` in any channel. */
export function differingPixels(a: Raster, b: Raster, tolerance = 24): number {
  if (a.width !== b.width || a.height !== b.height) return Number.POSITIVE_INFINITY;
  let count = 0;
  for (let i = 0; i < a.data.length; i += 3) {
    if (Math.abs(a.data[i]! - b.data[i]!) > tolerance || Math.abs(a.data[i + 1]! - b.data[i + 1]!) > tolerance || Math.abs(a.data[i + 2]! - b.data[i + 2]!) > tolerance) count++;
  }
  return count;
}

export function ghostscriptUnavailableReason(): string | undefined {
  const probe = spawnSync('gs', ['--version'], { encoding: 'utf8' });
  return probe.error ? `ghostscript (gs) is not installed (${probe.error.message})` : undefined;
}

export function popplerUnavailableReason(): string | undefined {
  const probe = spawnSync('pdftotext', ['-v'], { encoding: 'utf8' });
  return probe.error ? `poppler-utils (pdftotext) is not installed (${probe.error.message})` : undefined;
}
