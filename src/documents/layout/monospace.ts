// Whether text is set in a monospaced font when the font does not say so (no "Courier" or "Mono" in
// its name, no FixedPitch flag): every character advances the same width, so short runs of any
// letters — "SELECT", "user_name," — are each as wide per character as the others. In a
// proportional font capitals and small letters differ (an "M" is twice an "l"), so a few short
// words never agree that closely; long runs do, by averaging, and are not counted.
import { CJK, type TextRun } from './geometry.ts';

/** A run of this many characters or fewer (and at least MIN_CHARS) is short enough to tell. */
const MAX_CHARS = 20;
const MIN_CHARS = 3;
/** At least this many short runs must agree. */
const MIN_RUNS = 4;
/** Their advance per character and em may spread this share of its mean, no more. */
const SPREAD = 0.03;

const advance = (run: TextRun) => run.width / (run.text.length * run.size);

/** spec (issue 41): a code listing is read by its glyph widths where its font is not marked monospaced. */
export function evenlyAdvancing(runs: TextRun[]): boolean {
  const short = runs.filter((run) => {
    const chars = run.text.trim().length;
    return run.text === run.text.trim() && chars >= MIN_CHARS && chars <= MAX_CHARS && /\p{L}/u.test(run.text) && !CJK.test(run.text) && run.size > 0;
  });
  // Different words, not one label numbered over and over ("Cell 1 item 1", "Cell 2 item 1"), which agree in any font.
  if (short.length < MIN_RUNS || new Set(short.map((run) => run.text.replace(/\d/gu, '0'))).size < MIN_RUNS) return false;
  const values = short.map(advance);
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  return Math.max(...values) - Math.min(...values) <= SPREAD * mean;
}

/** Monospaced text: most of it in a font marked so, or advancing evenly. */
export function isMonospaced(runs: TextRun[]): boolean {
  const chars = runs.reduce((n, run) => n + run.text.length, 0);
  return runs.reduce((n, run) => n + (run.mono ? run.text.length : 0), 0) * 2 > chars || evenlyAdvancing(runs);
}

/** Signs of program text (as headings.ts reads a display line): brackets, operators, underscores, statement ends. */
const CODE_SIGNS = /[{}[\]<>=;#$\\|_]|\(\)|::|->|\/\//u;
/** A listing has few numbers: at most this share of its runs are figures (a table set in Courier is mostly figures). */
const MAX_FIGURES = 0.2;

/**
 * spec (issue 41): a code listing — monospaced (by its font or its glyph widths), with program
 * signs on two lines or more and few figures. A table set in a typewriter face, column after column
 * of figures, is still a table.
 */
export function isCodeListing(runs: TextRun[]): boolean {
  if (runs.length === 0 || !isMonospaced(runs)) return false;
  const figures = runs.filter((run) => /^[-+−(]?[$€£]?\d[\d,.]*%?\)?$/u.test(run.text.trim())).length;
  if (figures > MAX_FIGURES * runs.length) return false;
  const lines = new Set(runs.filter((run) => CODE_SIGNS.test(run.text)).map((run) => Math.round(run.y)));
  return lines.size >= 2;
}
