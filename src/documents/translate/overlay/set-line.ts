// Measuring and drawing one line of a translation through the font chain (font-chain.ts): each
// stretch of characters in the first font that has them, one after the other on the baseline.
// The chain's fonts are registered once per pdfkit document as `chain-<i>` and `chain-<i>-bold`.
import type PDFDocument from 'pdfkit';
import { fontChain, segments, type ChainFont } from './font-chain.ts';

type Doc = InstanceType<typeof PDFDocument>;

export type LineStyle = { bold: boolean; size: number; wordSpacing?: number; characterSpacing?: number };

const registered = new WeakSet<Doc>();
const fontName = (index: number, bold: boolean) => `chain-${index}${bold ? '-bold' : ''}`;

/** Registers the chain's fonts in `pdf` (once). */
export function registerChain(pdf: Doc, chain: ChainFont[] = fontChain()): void {
  if (registered.has(pdf)) return;
  chain.forEach((font, i) => {
    pdf.registerFont(fontName(i, false), font.regular);
    pdf.registerFont(fontName(i, true), font.bold);
  });
  registered.add(pdf);
}

const spaces = (text: string) => (text.match(/ /g) ?? []).length;

/** The width of `text` set at `style`, every character in its font of the chain. */
export function widthOf(pdf: Doc, text: string, style: LineStyle): number {
  registerChain(pdf);
  let width = 0;
  for (const segment of segments(text)) {
    pdf.font(fontName(segment.font, style.bold)).fontSize(style.size);
    width += pdf.widthOfString(segment.text) + (style.wordSpacing ?? 0) * spaces(segment.text) + (style.characterSpacing ?? 0) * [...segment.text].length;
  }
  return width - (text.length > 0 ? (style.characterSpacing ?? 0) : 0);
}

/** Draws `text` from `x` on the baseline `y` (top-down points); returns where the pen stops. */
export function drawLine(pdf: Doc, text: string, x: number, y: number, style: LineStyle): number {
  registerChain(pdf);
  let pen = x;
  for (const segment of segments(text)) {
    pdf.font(fontName(segment.font, style.bold)).fontSize(style.size);
    const options = { lineBreak: false, baseline: 'alphabetic' as const, wordSpacing: style.wordSpacing ?? 0, characterSpacing: style.characterSpacing ?? 0 };
    pdf.text(segment.text, pen, y, options);
    pen += pdf.widthOfString(segment.text) + (style.wordSpacing ?? 0) * spaces(segment.text) + (style.characterSpacing ?? 0) * [...segment.text].length;
  }
  return pen;
}

/** A stretch of a line in one style (weight, slant, colour); unset fields take the block's. */
export type StyledText = { text: string; bold?: boolean; italic?: boolean; color?: string };

/**
 * The lines of a fitted translation cut by the spans' styles: the lines hold the text with its
 * spaces collapsed (fit.ts), so the spans' characters are matched to them one non-space character
 * at a time; a space takes the style of the character before it.
 */
export function styleLines(lines: string[], spans: StyledText[] | undefined): StyledText[][] {
  if (!spans || spans.length === 0) return lines.map((line) => [{ text: line }]);
  const styles: StyledText[] = [];
  for (const span of spans) for (const char of span.text) if (!/\s/u.test(char)) styles.push(span);
  let next = 0;
  return lines.map((line) => {
    const pieces: StyledText[] = [];
    let current: StyledText | undefined = styles[next];
    for (const char of line) {
      if (!/\s/u.test(char)) current = styles[next++] ?? current;
      // A span's weight and slant are its own (regular inside a bold block stays regular); its colour, when it has none, the block's.
      const bold = Boolean(current?.bold);
      const italic = Boolean(current?.italic);
      const color = current?.color;
      const last = pieces.at(-1);
      if (last && last.bold === bold && last.italic === italic && last.color === color) last.text += char;
      else pieces.push({ text: char, bold, italic, ...(color !== undefined ? { color } : {}) });
    }
    return pieces;
  });
}

/** '#rrggbb' → [r, g, b] for pdfkit, or undefined. */
export function rgbOf(color: string | undefined): [number, number, number] | undefined {
  const match = color ? /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(color) : null;
  return match ? [parseInt(match[1]!, 16), parseInt(match[2]!, 16), parseInt(match[3]!, 16)] : undefined;
}
