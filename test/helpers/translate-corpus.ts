// The translate bench's corpus (bench/translate-pdf/corpus/, sources in its manifest.json) for tests
// on its real pages: a file's bytes, one page cut out as a PDF of its own, and whether Apertium's
// eng-spa mode and the PDF tools are here.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PDFDocument } from 'pdf-lib';
import { ghostscriptUnavailableReason, popplerUnavailableReason } from './poppler.ts';

export const corpusDir = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../bench/translate-pdf/corpus');
export const corpus = (file: string) => new Uint8Array(readFileSync(path.join(corpusDir, file)));

/** Why the layout-keeping translation through Apertium cannot run here, if it cannot. */
export function apertiumMissing(): string | undefined {
  const apertium = spawnSync('apertium', ['-l'], { encoding: 'utf8' });
  if (apertium.error || !/^\s*eng-spa\s*$/m.test(apertium.stdout)) return 'apertium with the eng-spa mode is not installed';
  return ghostscriptUnavailableReason() ?? popplerUnavailableReason();
}

/** Page `n` of a corpus file as a PDF of its own. */
export async function onePage(file: string, n: number): Promise<Uint8Array> {
  const source = await PDFDocument.load(corpus(file), { ignoreEncryption: true, updateMetadata: false });
  const out = await PDFDocument.create();
  const [page] = await out.copyPages(source, [n - 1]);
  out.addPage(page!);
  return out.save();
}
