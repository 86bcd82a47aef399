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

/** Runs this much longer than the shortest that agree with it are told apart from averaging. */
const LENGTH_RATIO = 3;
/** …and then may spread only this share of their mean (a listing's runs agree to a hundredth of a point). */
const EXACT_SPREAD = 0.01;

const spreadWithin = (values: number[], share: number) => {
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  return Math.max(...values) - Math.min(...values) <= share * mean;
};

/**
 * spec (issue 41): "a listing whose lines are long is monospaced when its short pieces (a comment's
 * `/*`, an `END`) advance exactly as its long lines do": in a proportional font two signs and a
 * forty-letter line never agree to a hundredth, whereas justified prose, whose long lines do agree,
 * has no short runs among them.
 */
function exactlyAdvancing(runs: TextRun[]): boolean {
  const counted = runs.filter((run) => run.text === run.text.trim() && run.text.length >= 2 && !CJK.test(run.text) && run.size > 0);
  const words = counted.filter((run) => /\p{L}/u.test(run.text));
  if (words.length < MIN_RUNS || new Set(words.map((run) => run.text.replace(/\d/gu, '0'))).size < MIN_RUNS) return false;
  const lengths = counted.map((run) => run.text.length);
  if (Math.min(...lengths) * LENGTH_RATIO > Math.max(...lengths)) return false;
  if (counted.filter((run) => run.text.length <= MAX_CHARS).length < 2) return false;
  return spreadWithin(counted.map(advance), EXACT_SPREAD);
}

/** spec (issue 41): a code listing is read by its glyph widths where its font is not marked monospaced. */
export function evenlyAdvancing(runs: TextRun[]): boolean {
  return shortRunsAgree(runs) || exactlyAdvancing(runs);
}

function shortRunsAgree(runs: TextRun[]): boolean {
  const short = runs.filter((run) => {
    const chars = run.text.trim().length;
    return run.text === run.text.trim() && chars >= MIN_CHARS && chars <= MAX_CHARS && /\p{L}/u.test(run.text) && !CJK.test(run.text) && run.size > 0;
  });
  // Different words, not one label numbered over and over ("Cell 1 item 1", "Cell 2 item 1"), which agree in any font.
  if (short.length < MIN_RUNS || new Set(short.map((run) => run.text.replace(/\d/gu, '0'))).size < MIN_RUNS) return false;
  return spreadWithin(short.map(advance), SPREAD);
}

/** Monospaced text: most of it in a font marked so, or advancing evenly. */
export function isMonospaced(runs: TextRun[]): boolean {
  const chars = runs.reduce((n, run) => n + run.text.length, 0);
  return runs.reduce((n, run) => n + (run.mono ? run.text.length : 0), 0) * 2 > chars || evenlyAdvancing(runs);
}

/** Signs of program text (as headings.ts reads a display line): brackets, operators, underscores, statement ends. */
const CODE_SIGNS = /[{}[\]<>=;#$\\|_]|\(\)|::|->|\/\/|\/\*|\*\//u;
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
