// Glyph positions inside a text-showing operation, so the kept-text copy (keep.ts) keeps exactly the
// glyphs inside a kept region: one TJ of a typeset table row often holds a number and the words
// beside it ("4   CARD32 FIRST_MATCHLET_OFFSET"), and only the number is to be kept.
// Widths come from the font dictionary (simple fonts: FirstChar/Widths; Type0: DW/W), as PDF 32000
// §9.2.4 computes a glyph's displacement: tx = (w0 × Tfs + Tc + Tw) × Th.
import { PDFArray, PDFDict, PDFName, PDFNumber, type PDFContext } from 'pdf-lib';

/** `known` is false for a font without widths (the standard 14 fonts): its operations are kept or removed whole, by where they start. */
export type FontMetrics = { bytesPerCode: 1 | 2; known: boolean; width(code: number): number };

const num = (value: unknown) => (value instanceof PDFNumber ? value.asNumber() : undefined);

/** The metrics of each font of a resources dictionary, by resource name. */
export function fontMetrics(context: PDFContext, resources: PDFDict | undefined): Map<string, FontMetrics> {
  const result = new Map<string, FontMetrics>();
  const fonts = resources?.lookupMaybe(PDFName.of('Font'), PDFDict);
  if (!fonts) return result;
  for (const [name, ref] of fonts.entries()) {
    const font = context.lookup(ref);
    if (font instanceof PDFDict) result.set(name.asString().slice(1), metricsOf(context, font));
  }
  return result;
}

function metricsOf(context: PDFContext, font: PDFDict): FontMetrics {
  if (font.lookupMaybe(PDFName.of('Subtype'), PDFName)?.asString() === '/Type0') {
    const descendants = font.lookupMaybe(PDFName.of('DescendantFonts'), PDFArray);
    const cid = descendants ? context.lookup(descendants.get(0)) : undefined;
    const widths = new Map<number, number>();
    let fallback = 1000;
    if (cid instanceof PDFDict) {
      fallback = num(cid.lookup(PDFName.of('DW'))) ?? 1000;
      const w = cid.lookupMaybe(PDFName.of('W'), PDFArray)?.asArray().map((item) => context.lookup(item)) ?? [];
      for (let i = 0; i < w.length;) {
        const first = num(w[i]);
        const next = w[i + 1];
        if (first === undefined) break;
        if (next instanceof PDFArray) {
          next.asArray().forEach((value, k) => widths.set(first + k, num(context.lookup(value)) ?? fallback));
          i += 2;
        } else {
          const last = num(next) ?? first;
          const width = num(w[i + 2]) ?? fallback;
          for (let code = first; code <= last && code - first < 65536; code++) widths.set(code, width);
          i += 3;
        }
      }
    }
    return { bytesPerCode: 2, known: true, width: (code) => widths.get(code) ?? fallback };
  }
  const firstChar = num(font.lookup(PDFName.of('FirstChar'))) ?? 0;
  const widths = font.lookupMaybe(PDFName.of('Widths'), PDFArray)?.asArray().map((v) => num(context.lookup(v)) ?? 0) ?? [];
  const descriptor = font.lookupMaybe(PDFName.of('FontDescriptor'), PDFDict);
  const missing = num(descriptor?.lookup(PDFName.of('MissingWidth'))) ?? (widths.length > 0 ? 0 : 500);
  return { bytesPerCode: 1, known: widths.length > 0, width: (code) => widths[code - firstChar] ?? missing };
}

/** The bytes of a PDF string token: `(literal)` with its escapes, or `<hex>`. */
export function stringBytes(token: string): number[] {
  if (token.startsWith('<')) {
    const hex = token.slice(1, -1).replace(/[^0-9a-fA-F]/g, '');
    const padded = hex.length % 2 ? `${hex}0` : hex;
    return Array.from({ length: padded.length / 2 }, (_, i) => parseInt(padded.slice(2 * i, 2 * i + 2), 16));
  }
  const body = token.slice(1, -1);
  const bytes: number[] = [];
  const escapes: Record<string, number> = { n: 10, r: 13, t: 9, b: 8, f: 12, '(': 40, ')': 41, '\\': 92 };
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== '\\') { bytes.push(c.charCodeAt(0) & 0xff); continue; }
    const next = body[++i];
    if (next === undefined) break;
    if (/[0-7]/.test(next)) {
      let octal = next;
      while (octal.length < 3 && /[0-7]/.test(body[i + 1] ?? '')) octal += body[++i];
      bytes.push(parseInt(octal, 8) & 0xff);
    } else if (next === '\r' || next === '\n') {
      if (next === '\r' && body[i + 1] === '\n') i++;
    } else {
      bytes.push(escapes[next] ?? next.charCodeAt(0));
    }
  }
  return bytes;
}

/** The elements of a TJ array token: strings and numbers, in order. */
export function arrayElements(token: string): Array<string | number> {
  const elements: Array<string | number> = [];
  const pattern = /\((?:\\[\s\S]|[^\\)])*?\)|<[0-9a-fA-F\s]*>|[+-]?(?:\d+\.?\d*|\.\d+)/g;
  // Literal strings may hold balanced parentheses; those are rare in TJ arrays and read as one string here.
  for (const match of token.slice(1, -1).matchAll(pattern)) {
    const text = match[0];
    elements.push(text.startsWith('(') || text.startsWith('<') ? text : Number(text));
  }
  return elements;
}

export type TextState = { size: number; charSpacing: number; wordSpacing: number; scale: number };

/**
 * Splits a show operation's elements into glyphs with their start offsets in text space, and
 * returns the operation rewritten to hold only the glyphs `keep` accepts (removed glyphs become
 * equal displacements), plus the total advance.
 */
export function filterShow(elements: Array<string | number>, font: FontMetrics, state: TextState, keep: (x: number) => boolean): { rewritten: string | undefined; kept: number; advance: number; all: boolean } {
  const h = state.scale / 100;
  const whole = font.known ? undefined : keep(0);
  const out: string[] = [];
  let x = 0;
  let pending = 0; // removed displacement, in text space
  let kept = 0;
  let total = 0;
  let run: number[] = [];
  const flush = () => {
    if (run.length === 0) return;
    out.push(`<${run.map((b) => b.toString(16).padStart(2, '0')).join('')}>`);
    run = [];
  };
  const move = () => {
    if (pending === 0) return;
    flush();
    out.push(String(Math.round(((-pending * 1000) / (state.size * h || 1)) * 1000) / 1000));
    pending = 0;
  };
  for (const element of elements) {
    if (typeof element === 'number') {
      const dx = (-element / 1000) * state.size * h;
      x += dx;
      pending += dx;
      continue;
    }
    const bytes = stringBytes(element);
    for (let i = 0; i + font.bytesPerCode <= bytes.length; i += font.bytesPerCode) {
      const code = font.bytesPerCode === 2 ? (bytes[i]! << 8) | bytes[i + 1]! : bytes[i]!;
      const space = font.bytesPerCode === 1 && code === 32 ? state.wordSpacing : 0;
      const dx = ((font.width(code) / 1000) * state.size + state.charSpacing + space) * h;
      total++;
      if (whole ?? keep(x)) {
        move();
        run.push(...bytes.slice(i, i + font.bytesPerCode));
        kept++;
      } else {
        flush();
        pending += dx;
      }
      x += dx;
    }
  }
  // Removed glyphs still move the pen, so later operations on the same line land where they did.
  move();
  flush();
  return { rewritten: out.length > 0 ? `[${out.join(' ')}] TJ` : undefined, kept, advance: x, all: kept === total };
}
