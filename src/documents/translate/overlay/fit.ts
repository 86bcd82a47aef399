// Setting a translation into its source block's box (issue 18, "Text fitting"): the source's size
// where it fits, shrunk in small steps down to a floor, then wrapped beyond the box only downwards
// into free space, never over another block.
//
// The order of moves follows BabelDOC's typesetter (midend/typesetting.py, read for this): it
// scales a paragraph down in 0.05 steps, below 0.7 first lets the box grow down into the empty space
// under it, then to the right, and only then shrinks further. Here the floor is the 70 %,
// growing right (to the column's measure) is done by the caller (draw.ts) only below the floor, and
// the line height stays proportional to the size. Below the floor the caller may first make room by
// moving the blocks below down (reflow.ts, with `floorHeight`). What still does not fit is never set
// smaller (issue 34): the lines that fit stay at the floor, a marker ends the last of them, and the
// rest of the text is handed back (`overflow`) for the notes page (notes.ts). Pure: the caller
// measures text.

export type Measure = (text: string, size: number) => number;

export type FitInput = {
  text: string;
  /** Box in top-down page coordinates: x, y of the top left corner, width, height. */
  box: { x: number; y: number; width: number; height: number };
  fontSize: number;
  /** Baseline distance of the source lines, when known; 1.2 × size otherwise. */
  lineHeight?: number;
  /** How far down (top-down y) the text may grow: the top of the next block below, or the page's bottom margin. */
  limitY: number;
  measure: Measure;
  /** What ends the last line when the text continues on the notes page ("→12"): its width is kept free. */
  marker?: string;
  /**
   * Issue 42: a block that never moves to a notes page (a table cell, a list item, a caption, a
   * label, a heading, a callout) — below the floor it uses the free space below first, then shrinks
   * further, down to this share of its size; running text leaves it unset and continues on the notes page.
   */
  minScale?: number;
  /** Issue 42, for the blocks that stay in place: the free space below is used before the text shrinks (wrap, space, then shrink). */
  spaceFirst?: boolean;
  /**
   * Issue 42: "a narrow block (sidebar, margin note) keeps its width and breaks lines proportionally" —
   * where the source's lines broke, as shares (0–1) of its text: the translation breaks near the same
   * shares of its own text, and each part wraps on its own in the box.
   */
  breaks?: number[];
};

export type FitResult = {
  size: number;
  lineHeight: number;
  lines: string[];
  /** The height the lines take: lines × lineHeight. */
  height: number;
  /** Not whole at the floor: even the free space below was too small (the rest is in `overflow`). */
  belowFloor: boolean;
  /** When below the floor (or, for a block that stays in place, set smaller than the floor): the height the lines would take at the floor, for the caller to make room (reflow.ts). */
  floorHeight?: number;
  /** The text that did not fit, to be continued on the notes page; the last line ends with room for `marker`. */
  overflow?: string;
  /** A block that never goes to a notes page and did not fit even at its least size: all its lines, taller than its room. */
  overfull?: boolean;
  /** A word of the text is wider than the box at the size set, so a line breaks inside it. */
  brokenWord?: boolean;
};

export const SHRINK_STEP = 0.05;
export const SHRINK_FLOOR = 0.7;
const DEFAULT_LINE_FACTOR = 1.2;

export function fitText(input: FitInput): FitResult {
  const lineFactor = input.lineHeight && input.lineHeight >= input.fontSize * 0.9 ? input.lineHeight / input.fontSize : DEFAULT_LINE_FACTOR;
  // A line's glyphs may reach a little below its box (descenders): half a point of slack.
  const boxBottom = input.box.height + 0.5;
  const freeBottom = Math.max(boxBottom, input.limitY - input.box.y);
  // Words that fit a line unbroken at the least size allowed: a broken one at a larger size means "smaller" (a long URL that never fits may break).
  const leastSize = input.fontSize * Math.min(SHRINK_FLOOR, input.minScale ?? SHRINK_FLOOR);
  const words = tokenize(input.text).filter((t) => t !== ' ' && !CJK.test(t) && input.measure(t, leastSize) <= input.box.width);
  const attempt = (scale: number) => {
    const size = input.fontSize * scale;
    const widthOf = (t: string) => input.measure(t, size);
    const lines = input.breaks && input.breaks.length > 0 ? proportionalParts(input.text, input.breaks).flatMap((part) => wrap(part, input.box.width, widthOf)) : wrap(input.text, input.box.width, widthOf);
    // The first line needs one size, every further line one line height. A word cut inside itself
    // (one word wider than the line) counts as not fitting: smaller comes before a broken word.
    const broken = words.some((t) => widthOf(t) > input.box.width + 0.01);
    const height = size + (lines.length - 1) * size * lineFactor + (broken ? Infinity : 0);
    // A word no size allowed fits unbroken ("NO" → "Núm" in a 12 pt box): the caller may find it a wider measure.
    const cutWord = tokenize(input.text).some((t) => t !== ' ' && !CJK.test(t) && widthOf(t) > input.box.width + 0.01);
    return { size, lineHeight: size * lineFactor, lines, height, belowFloor: false, ...(cutWord ? { brokenWord: true } : {}) };
  };
  // 1. Shrink in steps down to the floor while the text fits the box (or, space first, the box and the free space below it).
  const room = input.spaceFirst ? freeBottom : boxBottom;
  for (let scale = 1; scale >= SHRINK_FLOOR - 1e-9; scale -= SHRINK_STEP) {
    const result = attempt(scale);
    if (result.height <= room) return result;
  }
  // 2. At the floor, grow downwards into free space.
  const atFloor = attempt(SHRINK_FLOOR);
  if (atFloor.height <= freeBottom) return atFloor;
  if (input.minScale !== undefined && input.minScale < SHRINK_FLOOR) {
    // 2b. A block that stays in place (issue 42): smaller, in the free space, down to its own least size.
    // `floorHeight` tells the caller (reflow.ts) the room the text would need at the floor, so the
    // blocks below may move down before it is set smaller.
    for (let scale = SHRINK_FLOOR - SHRINK_STEP; scale >= input.minScale - 1e-9; scale -= SHRINK_STEP) {
      const result = attempt(scale);
      if (result.height <= freeBottom) return { ...result, floorHeight: finite(atFloor, lineFactor) };
    }
    const least = attempt(input.minScale);
    if (least.height <= freeBottom) return { ...least, floorHeight: finite(atFloor, lineFactor) };
  }
  if (input.minScale !== undefined) {
    // Nothing smaller is allowed and nothing goes to the notes page: the whole text at its least size,
    // as many lines as it takes (`overfull`, for the caller to know).
    const least = attempt(Math.min(SHRINK_FLOOR, input.minScale));
    return { ...least, height: finite(least, lineFactor), overfull: true, floorHeight: finite(atFloor, lineFactor) };
  }
  // 3. Still too long: never smaller, never over another block — the lines that fit at the floor stay,
  // ending with the marker, and the rest continues elsewhere.
  return { ...cut({ ...atFloor, height: finite(atFloor, lineFactor) }, freeBottom, input), belowFloor: true, floorHeight: finite(atFloor, lineFactor) };
}

/** The height of a fit's lines, a broken word aside. */
const finite = (fit: { size: number; lineHeight: number; lines: string[] }, _factor: number) => fit.size + (fit.lines.length - 1) * fit.lineHeight;

/**
 * The text cut near the same shares of its length as the source's lines (`shares`, 0–1): at the
 * space nearest each share, or between two CJK characters; never an empty part.
 */
export function proportionalParts(text: string, shares: number[]): string[] {
  const clean = text.replace(/\s+/g, ' ').trim();
  const cuts: number[] = [];
  for (const share of shares) {
    const target = Math.round(share * clean.length);
    let best = -1;
    for (let i = 1; i < clean.length; i++) {
      const canBreak = clean[i] === ' ' || (CJK.test(clean[i]!) && CJK.test(clean[i - 1]!));
      if (canBreak && i > (cuts.at(-1) ?? 0) && (best < 0 || Math.abs(i - target) < Math.abs(best - target))) best = i;
    }
    if (best > 0) cuts.push(best);
  }
  const parts = [...cuts, clean.length].map((end, k) => clean.slice(k === 0 ? 0 : cuts[k - 1], end).trim());
  return parts.filter((p) => p !== '');
}

/** The text after the characters of `kept` (spaces aside): line breaks inside a word leave no space behind. */
function after(text: string, kept: string): string {
  let count = (kept.match(/\S/gu) ?? []).length;
  const chars = [...text.replace(/\s+/g, ' ').trim()];
  let i = 0;
  while (i < chars.length && count > 0) {
    if (chars[i] !== ' ') count--;
    i++;
  }
  return chars.slice(i).join('').trim();
}

/** The marker's room when the caller gives none: a digit or two after an arrow. */
const DEFAULT_MARKER = '→99';

/** The first lines of `fit` that fit in `height`, the last one shortened until the marker fits after it; the rest as `overflow`. */
function cut(fit: Omit<FitResult, 'overflow'>, height: number, input: FitInput): FitResult {
  const room = (n: number) => fit.size + (n - 1) * fit.lineHeight;
  let count = 0;
  while (count < fit.lines.length && room(count + 1) <= height) count++;
  const lines = fit.lines.slice(0, count);
  const markerWidth = input.measure(` ${input.marker ?? DEFAULT_MARKER}`, fit.size);
  // Words leave the last line for the notes page until the marker fits beside what stays.
  while (lines.length > 0) {
    const last = lines[lines.length - 1]!;
    if (input.measure(last, fit.size) + markerWidth <= input.box.width) break;
    const tokens = tokenize(last);
    let moved = 0;
    while (tokens.length > 1 && input.measure(tokens.join('').trimEnd(), fit.size) + markerWidth > input.box.width) { tokens.pop(); moved++; }
    if (moved === 0 || tokens.join('').trim() === '') lines.pop();
    else lines[lines.length - 1] = tokens.join('').trimEnd();
  }
  const overflow = after(input.text, lines.join(''));
  const height_ = lines.length === 0 ? fit.size : room(lines.length);
  return { ...fit, lines: lines.length === 0 ? [''] : lines, height: height_, ...(overflow ? { overflow } : {}) };
}

const CJK = /[\u3000-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]/u;

/**
 * Breaks text into lines no wider than `width`: at spaces, between CJK characters (which have no
 * spaces), and inside a word only when the word alone is wider than the line.
 */
export function wrap(text: string, width: number, widthOf: (text: string) => number): string[] {
  const tokens = tokenize(text);
  const lines: string[] = [];
  let line = '';
  for (const token of tokens) {
    if (line === '' && token === ' ') continue;
    const candidate = line + token;
    if (line === '' || widthOf(candidate.trimEnd()) <= width) {
      line = candidate;
      if (widthOf(line.trimEnd()) > width && token !== ' ') {
        // One word wider than the whole line: split it by characters.
        const pieces = splitWord(line, width, widthOf);
        lines.push(...pieces.slice(0, -1));
        line = pieces.at(-1) ?? '';
      }
      continue;
    }
    lines.push(line.trimEnd());
    line = token === ' ' ? '' : token;
    if (widthOf(line) > width) {
      const pieces = splitWord(line, width, widthOf);
      lines.push(...pieces.slice(0, -1));
      line = pieces.at(-1) ?? '';
    }
  }
  if (line.trim() !== '') lines.push(line.trimEnd());
  return lines.length > 0 ? lines : [''];
}

/**
 * Line-breaking rules for CJK (kinsoku shori, as JIS X 4051 and the Chinese typesetting guidelines
 * state them, and as PDFMathTranslate/BabelDOC's typesetter applies them): closing punctuation never
 * starts a line, opening brackets never end one. Latin words are never broken (unless one alone is
 * wider than the line).
 */
const NO_LINE_START = /[，。、；：！？）」』》】〕〉”’．・…—～ー々ゝゞぁぃぅぇぉっゃゅょゎァィゥェォッャュョヮヵヶ%‰℃,.;:!?)\]}]/u;
const NO_LINE_END = /[（「『《【〔〈“‘([{]/u;

/** Words, single spaces and single CJK characters (each a place a line may break), with kinsoku applied. */
export function tokenize(text: string): string[] {
  const tokens: string[] = [];
  let word = '';
  let openPending = '';
  const push = (token: string) => {
    const last = tokens.at(-1);
    // Closing punctuation stays on the line of what it closes.
    if (last !== undefined && last !== ' ' && NO_LINE_START.test(token[0]!) && (CJK.test(token[0]!) || CJK.test(last.at(-1)!))) tokens[tokens.length - 1] = last + token;
    else tokens.push(token);
  };
  const emit = (token: string) => {
    // An opening bracket goes to the next line with what it opens.
    if (token !== ' ' && [...token].every((c) => NO_LINE_END.test(c)) && CJK.test(token)) { openPending += token; return; }
    push(openPending + token);
    openPending = '';
  };
  for (const char of text.replace(/\s+/g, ' ').trim()) {
    if (char === ' ' || CJK.test(char)) {
      if (word) emit(word);
      word = '';
      emit(char);
    } else {
      word += char;
    }
  }
  if (word) emit(word);
  if (openPending) push(openPending);
  return tokens;
}

function splitWord(word: string, width: number, widthOf: (text: string) => number): string[] {
  const pieces: string[] = [];
  let piece = '';
  for (const char of word) {
    if (piece !== '' && widthOf(piece + char) > width) {
      pieces.push(piece);
      piece = '';
    }
    piece += char;
  }
  pieces.push(piece);
  return pieces;
}
