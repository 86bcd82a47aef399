// Right-to-left scripts (Arabic, Hebrew, Persian…) in logical order. A PDF draws glyphs in visual
// order, left to right; pdf.js reorders the text inside each of its items, but the layout stage meets
// a line as runs sorted by x, and a run of Latin words or digits inside an Arabic line sits at the
// left of the Arabic that precedes it. The Unicode Bidirectional Algorithm (UAX #9, here bidi-js)
// resolves a line's visual string into levels; reversing each run of odd level gives the order it
// was typed in, as pdf.js and poppler do for a single item. Pure: runs in, text out.
import bidiModule from 'bidi-js';
import type { Line, TextRun } from './geometry.ts';

// bidi-js is CommonJS (module.exports is the factory) while its typings declare an ES default export.
const bidiFactory = bidiModule as unknown as typeof bidiModule.default;
const bidi = bidiFactory();

/** A quick test for characters of a right-to-left script or their presentation forms; lines without any skip the algorithm. */
const RTL_RANGE = /[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefc]|[\u{10800}-\u{10fff}\u{1e800}-\u{1efff}]/u;

const isRtlStrong = (char: string) => {
  const type = bidi.getBidiCharTypeName(char);
  return type === 'R' || type === 'AL';
};
const isLtrStrong = (char: string) => bidi.getBidiCharTypeName(char) === 'L';

/** Whether `text` holds any letter of a right-to-left script. */
export function hasRightToLeft(text: string): boolean {
  return RTL_RANGE.test(text) && [...text].some(isRtlStrong);
}

/**
 * Presentation forms (U+FB1D–FDFF, U+FE70–FEFC: Hebrew and Arabic glyph shapes — isolated, initial,
 * medial, final forms and ligatures such as lam-alef) as the letters they show (NFKC), so the text can
 * be searched and translated. Run after reordering: a ligature is one character until then, and NFKC
 * spells it out in logical order (U+FEFB → lam, alef).
 */
export function normalizePresentationForms(text: string): string {
  return text.replace(/[\ufb1d-\ufdff\ufe70-\ufefc]+/gu, (forms) => forms.normalize('NFKC'));
}

/** A line's base direction. UAX #9 (P2) takes the first strong character in logical order, which is the
 * left end of a left-to-right line and the right end of a right-to-left one: where only one reading is
 * consistent with the line's two ends it is that one; otherwise the direction of most of its letters. */
export function baseDirection(visual: string): 'ltr' | 'rtl' {
  const strong = [...visual].filter((c) => isRtlStrong(c) || isLtrStrong(c));
  const first = strong[0];
  const last = strong.at(-1);
  if (first === undefined || last === undefined) return 'ltr';
  const ltrConsistent = isLtrStrong(first);
  const rtlConsistent = isRtlStrong(last);
  if (ltrConsistent !== rtlConsistent) return ltrConsistent ? 'ltr' : 'rtl';
  const rtl = strong.filter(isRtlStrong).length;
  return rtl * 2 > strong.length ? 'rtl' : 'ltr';
}

/**
 * The logical text of a visual string (characters as drawn, left to right). UAX #9 maps logical text to
 * visual order; to go back, its levels are resolved on the text as close to logical order as the page
 * tells: a right-to-left line read from its right end (so a number finds the letters that precede it
 * in reading, rule W2, and "2-5" stays one number, rule W4), a left-to-right line as drawn. Then every
 * run above the base level is reversed from the highest level down (rule L2, which undoes itself).
 * Brackets keep the character the PDF gives: rule L4 draws a "(" typed in Hebrew with the glyph of ")",
 * but Word and PowerPoint map that glyph to the character typed ("סעיף 15(ב)(4)" on pdf.js's
 * issue11656 page, "(2024 - 2026)" on docling's right_to_left_02), as pdf.js and poppler assume too.
 */
export function logicalFromVisual(visual: string, direction: 'ltr' | 'rtl' = baseDirection(visual)): string {
  if (!hasRightToLeft(visual)) return visual;
  const text = direction === 'rtl' ? [...visual].reverse().join('') : visual;
  // bidi-js works on UTF-16 indices; a surrogate pair reversed with its run is put back in order below.
  const units = bidi.getReorderedIndices(text, bidi.getEmbeddingLevels(text, direction)).map((index) => text[index] ?? '');
  // On a right-to-left line the algorithm's last step reverses the whole line, which reading it from
  // the right end has already done: undone here, so only the runs above the base level are reversed.
  if (direction === 'rtl') units.reverse();
  return normalizePresentationForms(units.join('').replace(/([\udc00-\udfff])([\ud800-\udbff])/g, '$2$1'));
}

/**
 * The visual order of one run's text. pdf.js has already put each item's text in logical order,
 * choosing the item's direction by its share of RTL letters (30 %); applying the algorithm again with
 * the same direction gives back the order the glyphs were drawn in.
 */
export function visualFromRun(text: string): string {
  if (!hasRightToLeft(text)) return text;
  const chars = [...text];
  const rtl = chars.filter((c) => isRtlStrong(c) || bidi.getBidiCharTypeName(c) === 'AN').length;
  const direction = rtl / chars.length < 0.3 && chars.length > 4 ? 'ltr' : 'rtl';
  // Indices, not bidi-js's reordered string, which also mirrors brackets (see logicalFromVisual).
  return bidi.getReorderedIndices(text, bidi.getEmbeddingLevels(text, direction)).map((index) => text[index]).join('');
}

/**
 * A Latin (or other left-to-right) letter touching an Arabic or Hebrew one where two runs meet is a
 * word boundary: letters of the two directions never join into one word, and Word, laying out
 * "R و Python من", draws the space after "Python" on its other side, leaving "Python" against "من".
 */
function scriptsMeet(left: string, right: string): boolean {
  return (isLtrStrong(left) && isRtlStrong(right)) || (isRtlStrong(left) && isLtrStrong(right));
}

/**
 * A line whose runs (sorted left to right) hold right-to-left script: its text in logical order and its
 * base direction; undefined when no run does (the caller joins left to right as before). Runs are laid
 * side by side in the order they are drawn, with a space where the gap between two is wider than
 * `wordGap` em, and the line is resolved as one paragraph: the Latin words and digits of an Arabic line
 * keep their own order and their place in the sentence ("بلغة R و Python", not "Python و R").
 */
export function logicalLine(runs: TextRun[], wordGap: number): { text: string; direction: 'ltr' | 'rtl' } | undefined {
  if (!runs.some((run) => hasRightToLeft(run.text))) return undefined;
  let visual = '';
  let right = -Infinity;
  for (const run of runs) {
    const piece = visualFromRun(run.text);
    const gap = run.x - right;
    const touching = visual !== '' && !/\s$/.test(visual) && !/^\s/.test(piece);
    const spaced = touching && (gap > wordGap * run.size || scriptsMeet(visual.at(-1) ?? '', piece[0] ?? ''));
    visual += (spaced ? ' ' : '') + piece;
    right = Math.max(right, run.x + run.width);
  }
  const direction = baseDirection(visual);
  return { text: logicalFromVisual(visual, direction), direction };
}

/**
 * A right-to-left line seen in a mirror: its box flipped left for right, so that a rule written for
 * lines that start at their left edge (a first-line indent, a list item's wrapped lines indented
 * under its text) reads a right-to-left paragraph, which starts at its right edge, the same way.
 */
export function mirrorLine(line: Line): Line {
  const { rtl: _, ...rest } = line;
  return { ...rest, bbox: { ...line.bbox, l: -line.bbox.r, r: -line.bbox.l } };
}

/** The glyphs one text-showing operator drew, in drawn order, each as the text its ToUnicode maps it to. */
export type DrawnGlyphs = { font: string; glyphs: string[] };
/** A pdf.js text item: its text already reordered (`dir` says which way), its font's loaded name. */
export type ReorderedItem = { str: string; dir: string; fontName: string };

/** Letters that sit at the right-to-left level of a line: R and AL letters, and the marks of those scripts. */
const isRtlLetter = (char: string) => isRtlStrong(char) || (RTL_RANGE.test(char) && bidi.getBidiCharTypeName(char) === 'NSM');
/** Characters pdf.js never puts into an item's text (spaces are re-inferred, format marks skipped, < > dropped by its bidi). */
const countable = (text: string) => [...text].filter((char) => !/[\s\p{Cf}<>]/u.test(char)).length;
/** A glyph that stands for several right-to-left letters: the lam-alef ligature, "لإ" in one glyph. */
const isLigature = (glyph: string) => [...glyph].filter(isRtlLetter).length > 1;

/**
 * Item texts with every glyph that stands for several right-to-left letters kept whole. A ToUnicode map
 * gives a ligature's letters in logical order (lam-alef as lam, alef: "لإ"); pdf.js joins the glyphs'
 * texts in drawn order and reverses the item character by character, turning that into "إل" —
 * "اإلنتاجية" for "الإنتاجية". The text alone cannot tell a reversed ligature from a real alef-lam
 * ("إلى"), so the glyphs are read from the operator list: per font, glyphs are taken in drawn order
 * until they hold the item's characters; where pdf.js's reversal of them gives exactly the item's
 * right-to-left letters, each ligature's letters are put back in their own order. An item that does not
 * match is left as pdf.js gave it, and so is the rest of that font's text on the page.
 */
export function keepGlyphsWhole(items: ReorderedItem[], drawn: DrawnGlyphs[]): string[] {
  // Most pages draw no glyph standing for two right-to-left letters: nothing to match.
  if (!drawn.some(({ glyphs }) => glyphs.some((glyph) => glyph.length > 1 && RTL_RANGE.test(glyph) && isLigature(glyph)))) return items.map((item) => item.str);
  const streams = new Map<string, string[]>();
  for (const { font, glyphs } of drawn) {
    let stream = streams.get(font);
    if (!stream) streams.set(font, (stream = []));
    for (const glyph of glyphs) if (countable(glyph) > 0) stream.push(glyph);
  }
  const fontsWithLigatures = new Set([...streams].filter(([, stream]) => stream.some(isLigature)).map(([font]) => font));
  const cursors = new Map<string, number>();
  return items.map((item) => {
    const stream = streams.get(item.fontName);
    let at = cursors.get(item.fontName) ?? 0;
    const needed = countable(item.str);
    if (!stream || at < 0 || needed === 0) return item.str;
    const glyphs: string[] = [];
    let taken = 0;
    for (; taken < needed && at < stream.length; at++) {
      const glyph = stream[at] ?? '';
      glyphs.push(glyph);
      taken += countable(glyph);
    }
    cursors.set(item.fontName, taken === needed ? at : -1);
    if (taken !== needed || !fontsWithLigatures.has(item.fontName) || !glyphs.some(isLigature)) return item.str;
    return restoreLigatures(item.str, item.dir === 'rtl', glyphs) ?? item.str;
  });
}

/** `text` (pdf.js's reordering of `glyphs`) with each ligature's letters in glyph order, or undefined if the glyphs do not explain it. */
function restoreLigatures(text: string, rightToLeft: boolean, glyphs: string[]): string | undefined {
  // pdf.js reverses every stretch of right-to-left letters: the whole item when it is right-to-left,
  // else each stretch between left-to-right letters.
  const stretches: Array<Array<{ char: string; glyph: number }>> = [[]];
  glyphs.forEach((glyph, index) => {
    for (const char of glyph) {
      if (isRtlLetter(char)) stretches.at(-1)?.push({ char, glyph: index });
      else if (!rightToLeft && isLtrStrong(char)) stretches.push([]);
    }
  });
  const expected = stretches.flatMap((stretch) => stretch.reverse());
  const letters = [...text].filter(isRtlLetter);
  if (letters.join('') !== expected.map((e) => e.char).join('')) return undefined;
  const fixed = expected.map((e) => e.char);
  for (let start = 0; start < expected.length; ) {
    let end = start;
    while (end + 1 < expected.length && expected[end + 1]?.glyph === expected[start]?.glyph) end++;
    fixed.splice(start, end - start + 1, ...fixed.slice(start, end + 1).reverse());
    start = end + 1;
  }
  let next = 0;
  return [...text].map((char) => (isRtlLetter(char) ? (fixed[next++] ?? char) : char)).join('');
}
