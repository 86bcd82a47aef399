// Tesseract 5 (Debian's tesseract-ocr with tesseract-ocr-eng and -chi-sim) as an OcrEngine: one
// run per page image, hOCR output — words with boxes and confidences, and per line the baseline and
// the text size tesseract measured (x_size), so headings keep their size on scans — under
// runLimited's limits.
import { execFile } from 'node:child_process';
import { isInstalled, runLimited } from '../limited.ts';
import type { OcrEngine, OcrOptions, OcrWord } from './ocr.ts';

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", '#39': "'" };
const decode = (text: string) => text.replace(/<[^>]*>/g, '').replace(/&(amp|lt|gt|quot|apos|#39|#x[0-9a-f]+|#\d+);/gi, (m, name: string) => {
  if (name.startsWith('#x')) return String.fromCodePoint(parseInt(name.slice(2), 16));
  if (name.startsWith('#') && name !== '#39') return String.fromCodePoint(Number(name.slice(1)));
  return ENTITIES[name.toLowerCase()] ?? m;
});

const numbers = (title: string, key: string): number[] | undefined => {
  const found = new RegExp(`(?:^|;)\\s*${key}\\s+([-\\d.\\s]+)`).exec(title);
  return found?.[1]?.trim().split(/\s+/).map(Number);
};

/**
 * Words of tesseract's hOCR, each with its line's id, baseline (pixels from the top, at the word's
 * left edge) and text size (x_size, pixels). Lines are ocr_line and its kinds (header, caption, float).
 */
export function parseHocr(hocr: string): OcrWord[] {
  const words: OcrWord[] = [];
  let line: { id: string; left: number; bottom: number; slope: number; offset: number; size: number | undefined } | undefined;
  // A line's opening tag, or a whole word (words hold no nested spans).
  const span = /<span class=['"](ocr_line|ocr_header|ocr_caption|ocr_textfloat)['"] id=['"]([^'"]+)['"] title=(?:"([^"]*)"|'([^']*)')[^>]*>|<span class=['"](ocrx_word)['"] id=['"]([^'"]+)['"] title=(?:"([^"]*)"|'([^']*)')[^>]*>((?:(?!<\/span>)[\s\S])*)<\/span>/g;
  for (const m of hocr.matchAll(span)) {
    const kind = m[1] ?? m[5];
    const id = m[2] ?? m[6] ?? '';
    const titleA = m[3] ?? m[7];
    const titleB = m[4] ?? m[8];
    const inner = m[9] ?? '';
    const title = titleA ?? titleB ?? '';
    const [l = 0, t = 0, r = 0, b = 0] = numbers(title, 'bbox') ?? [];
    if (kind !== 'ocrx_word') {
      const [slope = 0, offset = 0] = numbers(title, 'baseline') ?? [];
      line = { id, left: l, bottom: b, slope, offset, size: numbers(title, 'x_size')?.[0] };
      continue;
    }
    const text = decode(inner).trim();
    const confidence = numbers(title, 'x_wconf')?.[0] ?? 0;
    if (text === '') continue;
    const word: OcrWord = { text, left: l, top: t, width: r - l, height: b - t, confidence, line: line?.id ?? id };
    if (line) {
      word.baseline = line.bottom + line.offset + line.slope * (l - line.left);
      if (line.size) word.lineSize = line.size;
    }
    words.push(word);
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
    const args = [imageFile, 'stdout', '-l', options.languages.join('+'), '--dpi', String(options.dpi), '--psm', '3', 'hocr'];
    const out = await runLimited(this.program, args, { timeoutMs: options.timeoutMs, memoryBytes: options.memoryBytes, signal: options.signal });
    return joinCjk(parseHocr(out.toString('utf8')));
  }
}

/**
 * The language names tesseract has data for (`tesseract --list-langs`: a heading line, then one name
 * a line; tesseract 3 wrote them on stderr), or undefined when tesseract is not installed.
 */
export function tesseractLanguages(program = 'tesseract'): Promise<string[] | undefined> {
  return new Promise((resolve) => {
    execFile(program, ['--list-langs'], { shell: false, timeout: 10_000 }, (error, stdout, stderr) => {
      if (error && (error as NodeJS.ErrnoException).code === 'ENOENT') return resolve(undefined);
      const lines = `${stdout}\n${stderr}`.split('\n').map((line) => line.trim());
      resolve(lines.filter((line) => /^[A-Za-z0-9_-]+$/.test(line)));
    });
  });
}
