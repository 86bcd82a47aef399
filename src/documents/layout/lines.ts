// Stage 1 — runs → lines: runs sharing a baseline, ordered by x, split where the gap is column-wide;
// sub- and superscripts attached to the line they belong to.
import { logicalLine } from './bidi.ts';
import type { BoundingBox } from '../document.ts';
import { ASCENT, CJK, DESCENT, dominant, joinText, union, type Line, type TextRun } from './geometry.ts';
import { findGutters, gutterBetween, type Gutter } from './gutters.ts';
import { linePieces } from './styles.ts';

/** Runs whose baselines differ by less than this (in em) are on one line; covers sub- and superscripts. */
const BASELINE_TOLERANCE = 0.35;
/** A horizontal gap wider than this (in em) separates columns or table cells, not words. */
const COLUMN_GAP = 1.5;
/** …and this much less when pdf.js marked the left run as ending its line (hasEOL). */
const EOL_GAP = 0.8;
/** A gap wider than this (in em) between runs is a word space. */
const WORD_GAP = 0.12;
/** …and in a monospaced font, wider than this. */
const MONO_WORD_GAP = 0.3;

/** Groups runs into lines: same baseline within tolerance, ordered by x, split where the gap is column-wide. */
export function groupLines(runs: TextRun[], options: { readAcross?: boolean } = {}): Line[] {
  return lineRuns(runs, options).map(toLine);
}

/** The texts of the lines groupLines makes of `runs`, without the rest of each line (its box, size, style, pieces). */
export function lineTexts(runs: TextRun[]): string[] {
  return lineRuns(runs, {}).map((line) => lineText(line).text);
}

/** The runs of each line, in reading order: groupLines's grouping. */
function lineRuns(runs: TextRun[], options: { readAcross?: boolean }): TextRun[][] {
  const sorted = runs.filter((run) => run.text.trim() !== '').sort((a, b) => b.y - a.y || a.x - b.x);
  const rows: TextRun[][] = [];
  for (const run of sorted) {
    // Text set up or down the margin never shares a row with upright text on its baseline (a printer's slug beside the page's last line).
    const row = rows.slice(-2).reverse().find((r) => r[0]?.direction === run.direction);
    const anchor = row?.[0];
    if (row && anchor && Math.abs(anchor.y - run.y) <= BASELINE_TOLERANCE * Math.min(anchor.size, run.size)) row.push(run);
    else rows.push([run]);
  }
  const withScripts = attachScripts(rows);
  const gutters = findGutters(withScripts);
  // A listing's entry (a name, then its code and figures far to the right) is read across as one line.
  if (options.readAcross) return withScripts.map((row) => row.sort((a, b) => a.x - b.x));
  return withScripts.flatMap((row) => splitAtGaps(row.sort((a, b) => a.x - b.x), gutters));
}

/** A run this much smaller than its neighbours' text is a superscript, subscript or a logo's raised letter. */
const SCRIPT_SIZE = 0.85;

/**
 * Rows of small text that sit within the height of a larger row and touch one of its runs (a
 * footnote mark, an exponent, the raised "A" of the LaTeX logo) are part of that row, so they
 * never become lines, headings or paragraphs of their own.
 */
export function attachScripts(rows: TextRun[][]): TextRun[][] {
  const kept: TextRun[][] = [];
  // Each row's largest size, measured once: a row attached to a host is smaller than the host's text, so the host's stays.
  const largest = new Map(rows.map((row) => [row, Math.max(...row.map((r) => r.size))]));
  const small = (row: TextRun[]) => largest.get(row) ?? 0;
  for (const row of rows) {
    const size = small(row);
    const host = rows.find((other) => {
      if (other === row || small(other) * SCRIPT_SIZE < size || other[0]?.direction !== row[0]?.direction) return false;
      const anchor = other[0];
      if (!anchor) return false;
      const top = anchor.y + ASCENT * anchor.size;
      const bottom = anchor.y - 0.45 * anchor.size;
      return row.every((run) => run.y <= top && run.y >= bottom && other.some((o) => run.x <= o.x + o.width + 0.6 * o.size && run.x + run.width >= o.x - 0.6 * o.size));
    });
    if (host) host.push(...row);
    else kept.push(row);
  }
  return kept;
}

/** A row's runs cut into lines where the gap is column-wide, or where a column gutter runs between them. */
function splitAtGaps(row: TextRun[], gutters: Gutter[]): TextRun[][] {
  const lines: TextRun[][] = [];
  let current: TextRun[] = [];
  let right = -Infinity;
  for (const run of row) {
    const previous = current.at(-1);
    if (previous) {
      const limit = (previous.hasEOL ? EOL_GAP : COLUMN_GAP) * Math.max(previous.size, run.size);
      // In a listing the gap between two monospaced tokens is spaces lining the code up ("SELECT   user_name"), not a column.
      // The strip such gaps leave down the listing (its comments lined up at one column) is no page gutter either.
      const spaces = previous.mono === true && run.mono === true && !CJK.test(previous.text + run.text);
      if (!spaces && (run.x - right > limit || gutterBetween(gutters, right, run))) {
        lines.push(current);
        current = [];
        right = -Infinity;
      }
    }
    const doubled = previous && previous.text === run.text && Math.abs(previous.x - run.x) < 1;
    if (!doubled) current.push(run); // some generators fake bold by drawing the text twice
    right = Math.max(right, run.x + run.width);
  }
  if (current.length > 0) lines.push(current);
  return lines;
}

/** Text advances at most about this many em per character on average (Courier: 0.6). */
const MAX_ADVANCE_EM = 0.65;

/**
 * The sizes a line's runs are set in. pdf.js reports the size of a run's first glyph, so a run that
 * starts with the small denominator of a fraction ("4 inch, the" after a raised "1") claims 5.5 pt
 * for 10-pt text. Its glyphs' advances tell: a run too wide for its claimed size (never CJK, whose
 * glyphs are a full em) takes the size of the line's other text.
 */
function textSizes(runs: TextRun[]): number[] {
  const implausible = (run: TextRun) => {
    const chars = [...run.text].length;
    return chars >= 4 && !CJK.test(run.text) && run.width > MAX_ADVANCE_EM * run.size * chars;
  };
  const plausible = runs.filter((run) => !implausible(run)).map((run) => run.size);
  const lineSize = plausible.length > 0 ? Math.max(...plausible) : undefined;
  return runs.map((run) => (lineSize !== undefined && implausible(run) && lineSize > run.size ? lineSize : run.size));
}

/**
 * A run's box on the page. A run set up or down an upright page (a printer's slug in the margin)
 * advances along y: its width is its length that way, and its glyphs rise to the left (up) or to the right (down).
 */
function runBox(r: TextRun): BoundingBox {
  if (r.direction === 90) return { l: r.x - ASCENT * r.size, r: r.x + DESCENT * r.size, b: r.y, t: r.y + r.width };
  if (r.direction === 270) return { l: r.x - DESCENT * r.size, r: r.x + ASCENT * r.size, b: r.y - r.width, t: r.y };
  return { l: r.x, r: r.x + r.width, t: r.y + ASCENT * r.size, b: r.y - DESCENT * r.size };
}

/** A line's text (words spaced by their gaps, a right-to-left line in reading order) and its logical order when it has one. */
function lineText(runs: TextRun[]): { text: string; logical: ReturnType<typeof logicalLine> } {
  let text = '';
  let right = -Infinity;
  for (const run of runs) {
    const gap = run.x - right;
    // In a monospaced font a space is a whole character (0.6 em): the small gaps a listing package
    // leaves between tokens ("add(a, b)" set token by token) are no spaces.
    const spaced = gap > (run.mono ? MONO_WORD_GAP : WORD_GAP) * run.size && !/\s$/.test(text) && !/^\s/.test(run.text);
    text = spaced ? joinText(text, run.text) : text + run.text;
    right = Math.max(right, run.x + run.width);
  }
  const logical = logicalLine(runs, WORD_GAP); // a line holding Arabic or Hebrew, in the order it reads
  if (logical) text = logical.text;
  // A soft hyphen inside a line is invisible; one at the end marks where the word was split.
  return { text: text.replace(/\s+/g, ' ').trim().replace(/\u00ad(?!$)/g, ''), logical };
}

function toLine(runs: TextRun[]): Line {
  const { text, logical } = lineText(runs);
  const sizes = textSizes(runs);
  const size = dominant(runs.map((r, i): [number, number] => [sizes[i] ?? r.size, r.text.length])) ?? 0;
  const boldChars = runs.reduce((n, r) => n + (r.bold ? r.text.length : 0), 0);
  const chars = runs.reduce((n, r) => n + r.text.length, 0);
  return {
    text,
    bbox: union(runs.map(runBox)),
    baseline: runs.reduce((lowest, r) => Math.min(lowest, r.y), Infinity),
    size,
    bold: boldChars * 2 > chars,
    // CJK fonts are fixed-pitch by nature: their text is not code.
    mono: runs.reduce((n, r) => n + (r.mono && !CJK.test(r.text) ? r.text.length : 0), 0) * 2 > chars,
    italic: runs.reduce((n, r) => n + (r.italic ? r.text.length : 0), 0) * 2 > chars,
    ...(runs.some((r) => r.math) ? { math: true } : {}),
    ...(logical?.direction === 'rtl' ? { rtl: true } : {}),
    ...(logical ? {} : { pieces: linePieces(runs) }),
  };
}
