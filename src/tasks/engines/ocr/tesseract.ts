// Tesseract 5 (Debian's tesseract-ocr with tesseract-ocr-eng and -chi-sim) as an OcrEngine: one
// run per page image, TSV output (words with boxes and confidences), under runLimited's limits.
import { isInstalled, runLimited } from '../limited.ts';
import type { OcrEngine, OcrOptions, OcrWord } from './ocr.ts';

/** TSV level 5 is a word: level page block par line word left top width height conf text. */
export function parseTsv(tsv: string): OcrWord[] {
  const words: OcrWord[] = [];
  for (const row of tsv.split('\n')) {
    const cols = row.split('\t');
    if (cols[0] !== '5' || cols.length < 12) continue;
    const text = cols.slice(11).join('\t').trim();
    const confidence = Number(cols[10]);
    if (text === '' || !(confidence >= 0)) continue;
    const [left, top, width, height] = cols.slice(6, 10).map(Number) as [number, number, number, number];
    words.push({ text, left, top, width, height, confidence, line: `${cols[1]}.${cols[2]}.${cols[3]}.${cols[4]}` });
  }
  return words;
}

/** Tesseract writes Chinese with a space between every character; they are one run of text. */
function joinCjk(words: OcrWord[]): OcrWord[] {
  return words.map((w) => ({ ...w, text: w.text.replace(/(?<=[\p{Script=Han}\u3000-\u303f\uff00-\uffef])\s+(?=[\p{Script=Han}\u3000-\u303f\uff00-\uffef])/gu, '') }));
}

export class TesseractEngine implements OcrEngine {
  readonly name = 'tesseract';
  private readonly program: string;
  constructor(program = 'tesseract') {
    this.program = program;
  }

  async available(): Promise<boolean> {
    return isInstalled(this.program);
  }

  async recognize(imageFile: string, options: OcrOptions): Promise<OcrWord[]> {
    // --psm 3: automatic page segmentation (columns, blocks); one thread per page (OMP_THREAD_LIMIT
    // in runLimited), as a worker core is the unit the service is sized by.
    const args = [imageFile, 'stdout', '-l', options.languages.join('+'), '--dpi', String(options.dpi), '--psm', '3', 'tsv'];
    const out = await runLimited(this.program, args, { timeoutMs: options.timeoutMs, memoryBytes: options.memoryBytes, signal: options.signal });
    return joinCjk(parseTsv(out.toString('utf8')));
  }
}
