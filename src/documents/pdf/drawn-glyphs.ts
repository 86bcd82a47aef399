// The glyphs a page's text-showing operators draw, per font and in drawn order, each as the text its
// ToUnicode map gives: what layout/bidi.ts needs to keep a ligature's letters together (pdf.js's text
// items no longer show where one glyph ends and the next begins).
import { normalizeUnicode, OPS } from 'pdfjs-dist/legacy/build/pdf.mjs';
import type { DrawnGlyphs } from '../layout/bidi.ts';

export function drawnGlyphs(fnArray: number[], argsArray: unknown[][]): DrawnGlyphs[] {
  const drawn: DrawnGlyphs[] = [];
  const fonts: string[] = [];
  let font = '';
  let annotation = 0;
  fnArray.forEach((fn, index) => {
    const args = argsArray[index] ?? [];
    if (fn === OPS.save) fonts.push(font);
    else if (fn === OPS.restore) font = fonts.pop() ?? font;
    else if (fn === OPS.setFont) font = String(args[0]);
    // Annotation appearances are drawn but are not part of the page's text content.
    else if (fn === OPS.beginAnnotation) annotation++;
    else if (fn === OPS.endAnnotation) annotation--;
    else if (fn === OPS.showText && annotation === 0 && Array.isArray(args[0])) {
      const glyphs = args[0].flatMap((glyph: unknown) => {
        const unicode = typeof glyph === 'object' && glyph !== null && 'unicode' in glyph ? glyph.unicode : undefined;
        // pdf.js normalises an item's text (NFKC of some presentation forms) before anything else: so here.
        return typeof unicode === 'string' ? [normalizeUnicode(unicode)] : [];
      });
      drawn.push({ font, glyphs });
    }
  });
  return drawn;
}
