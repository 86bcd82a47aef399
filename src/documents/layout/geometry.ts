// The shared vocabulary of the layout stages: what the PDF reader (or OCR) hands over — runs, rulings, image
// regions — and the measures every stage uses. Lengths are in PDF points with the origin at the
// bottom left, so a larger y is higher on the page. Pure: no pdf.js here, so fixtures can be built by hand.
import type { BoundingBox, TextSource } from '../document.ts';
import type { StructNode } from './structure-tree.ts';

/** A piece of text as pdf.js placed it: x and y are the start of its baseline. */
export type TextRun = {
  text: string;
  x: number;
  y: number;
  width: number;
  size: number;
  bold: boolean;
  hasEOL: boolean;
  italic?: boolean;
  /** Set in a monospaced font (code). */
  mono?: boolean;
  /** Set in a mathematics font (CMMI, CMSY, STIX, Cambria Math…): part of a formula. */
  math?: boolean;
  /** The glyphs' height in points when known (OCR boxes); otherwise estimated from the size. */
  height?: number;
  /** The run's fill colour as '#rrggbb' (a run never mixes colours). */
  color?: string;
  /** The marked-content id (MCID) of the run's text in a tagged PDF: its link to the structure tree (a run never mixes ids). */
  mcid?: number;
  /**
   * The run's writing direction in the unrotated page, counter-clockwise degrees to the nearest
   * quarter turn: 90 runs up the page, 270 down it, 180 upside down; absent when it runs left to right.
   */
  direction?: 90 | 180 | 270;
  /** Drawn as a tagged PDF's /Artifact (running heads, footers, page numbers): page furniture, never body text. */
  artifact?: boolean;
};

/** An image or figure region drawn on the page. */
export type ImageRegion = { bbox: BoundingBox };

/** A straight rule drawn on the page (a table border), normalised so x1 ≤ x2 and y1 ≤ y2. */
export type Ruling = { x1: number; y1: number; x2: number; y2: number };

/** One line of text: runs sharing a baseline with no column-wide gap between them. */
export type Line = {
  text: string; bbox: BoundingBox; baseline: number; size: number; bold: boolean; mono?: boolean; italic?: boolean; math?: boolean; /** Reads right to left (layout/bidi.ts). */ rtl?: boolean;
  /** Its runs' texts with their style (weight, slant, fill colour), in order (layout/styles.ts). */
  pieces?: Array<{ text: string; bold?: boolean; italic?: boolean; color?: string; math?: boolean }>;
};

// Glyph boxes are estimated from the font size (pdf.js gives no per-glyph heights): ascenders reach
export const ASCENT = 0.8;
export const DESCENT = 0.2;
/** Consecutive lines of one paragraph are at most this far apart, baseline to baseline (in em). */
export const LINE_PITCH = 1.5;
/** Font sizes within this ratio count as the same size. */
export const SAME_SIZE = 1.15;

export const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u3000-\u303f\uff00-\uffef]/u;

const SOFT_HYPHEN = '\u00ad';

/**
 * Joins two pieces of running text. CJK needs no space. A soft hyphen at the break is a
 * hyphenation point: it goes, the word closes up. A hard hyphen before a lowercase word stays, with
 * no space ("well-known"); a hyphenated break ("manip-ulation") is kept as printed rather than
 * guessed at, since dropping it would also break real compounds.
 */
export function joinText(left: string, right: string): string {
  if (left === '') return right;
  if (right === '') return left;
  const last = left.at(-1) ?? '';
  const first = right[0] ?? '';
  if (last === SOFT_HYPHEN) return left.slice(0, -1) + right;
  if (CJK.test(last) && CJK.test(first)) return left + right;
  if (/\p{L}-$/u.test(left) && /^\p{Ll}/u.test(first)) return left + right;
  return `${left} ${right}`;
}

/** The words that follow a hyphen left hanging on purpose ("pre- and post-processing"). */
const HANGING_HYPHEN_FOLLOWER = /^(?:and|or|nor|to|und|oder|bis|et|ou|y|o|e)\b/u;

/**
 * Joins two printed lines of one paragraph. spec (issue 25): "hyphenation undone" — a word broken
 * at the line's end with a hyphen ("eir-" / "mod") is closed up, as pdftotext, PyMuPDF and
 * docling read it, unless the piece before is a single letter ("e-" / "mail") or the next line
 * goes on with a conjunction ("pre-" / "and post-processing"). The rare compound broken exactly at
 * its own hyphen loses it; keeping every hyphen would break far more words. Otherwise as joinText.
 */
export function joinLines(above: string, below: string): string {
  if (/\p{L}[-\u2010]$/u.test(above) && HANGING_HYPHEN_FOLLOWER.test(below)) return `${above} ${below}`;
  if (/\p{Ll}{2}[-\u2010]$/u.test(above) && /^\p{Ll}/u.test(below)) return above.slice(0, -1) + below;
  return joinText(above, below);
}

/** The value carrying the most weight, e.g. the font size covering the most characters. */
export function dominant<T>(entries: Array<[T, number]>): T | undefined {
  const totals = new Map<T, number>();
  for (const [value, weight] of entries) totals.set(value, (totals.get(value) ?? 0) + weight);
  let best: T | undefined;
  let bestWeight = -1;
  for (const [value, weight] of totals) if (weight > bestWeight) [best, bestWeight] = [value, weight];
  return best;
}

/** The smallest box holding all of `boxes` (at least one). */
export function union(boxes: BoundingBox[]): BoundingBox {
  return boxes.reduce((u, b) => ({ l: Math.min(u.l, b.l), t: Math.max(u.t, b.t), r: Math.max(u.r, b.r), b: Math.min(u.b, b.b) }), {
    l: Infinity,
    t: -Infinity,
    r: -Infinity,
    b: Infinity,
  });
}


export const overlapsX = (a: BoundingBox, b: BoundingBox) => a.l < b.r && b.l < a.r;
export const similarSize = (a: number, b: number) => Math.max(a, b) <= SAME_SIZE * Math.min(a, b);

/** What the reader hands the layout stages for one page. */
/** An AcroForm field's kind (fpdf_formfill.h's FPDF_FORMFIELD_*). */
export type FormFieldType = 'text' | 'checkbox' | 'radio' | 'combobox' | 'listbox' | 'button' | 'signature';

/**
 * One widget of a form field as the reader gives it: the field's full name, kind and value (for a
 * check box or radio button the name of its chosen state, "Off" when none), the widget's box and,
 * for a check box or radio button, the state name this widget stands for (on when it equals the value).
 */
export type FormField = { name: string; type: FormFieldType; value: string; bbox: BoundingBox; tooltip?: string; exportValue?: string; checked?: boolean };

export type PageContent = {
  pageNo: number;
  width: number;
  height: number;
  runs: TextRun[];
  rulings: Ruling[];
  images?: ImageRegion[];
  textSource?: TextSource;
  notes?: string[];
  /** A tagged PDF's structure elements on this page, in the tree's order (layout/tagged.ts reads them). */
  structure?: StructNode[];
  /** The page's AcroForm widgets (pdf/form-fields.ts), when it has any. */
  fields?: FormField[];
};

/** The index of the first item of `sorted` (ascending by `key`) whose key is at least `value`: a binary search. */
export function firstAtLeast<T>(sorted: readonly T[], key: (item: T) => number, value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (key(sorted[mid]!) < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
