// Column gutters, found before lines are formed: the vertical strips of whitespace that lines of
// text on both sides line up against, row after row (the "whitespace rivers" a reader's eye sees).
// A gutter can be narrower than the gap that separates table cells (1.5 em): an InDesign handbook
// sets 10-pt columns 1.2 em apart, and the two lines of a row are then read as one line across both
// columns unless the gutter is known. Justified word spaces are as wide, but they do not line up
// over several rows.
import { ASCENT, DESCENT, type TextRun } from './geometry.ts';

/** A column gutter: the strip between x = l and x = r from the top of its first row to the bottom of its last. */
export type Gutter = { l: number; r: number; t: number; b: number };

/** A gutter is at least this wide (in em of the row's text), and at least MIN_GUTTER_PT… */
const MIN_GUTTER_EM = 0.6;
const MIN_GUTTER_PT = 4;
/** …with text on both sides of it on at least this many rows… */
const MIN_ROWS_BESIDE = 3;
/** …each side holding at least this much text (in em): a column's line, not a list's bullet or number. */
const MIN_SIDE_EM = 3;

type Span = { l: number; r: number };
type Candidate = Gutter & { beside: number };

/** The runs' horizontal extents, overlapping ones merged, left to right. */
function spansOf(row: TextRun[]): Span[] {
  const spans: Span[] = [];
  for (const run of [...row].sort((a, b) => a.x - b.x)) {
    const last = spans.at(-1);
    if (last && run.x <= last.r) last.r = Math.max(last.r, run.x + run.width);
    else spans.push({ l: run.x, r: run.x + run.width });
  }
  return spans;
}

/** 1 when the row has a column's worth of text on both sides of the strip, else 0. */
function besideCount(spans: Span[], strip: Span, size: number): number {
  const width = (side: Span[]) => side.reduce((sum, s) => sum + s.r - s.l, 0);
  const minSide = MIN_SIDE_EM * size;
  return width(spans.filter((s) => s.r <= strip.l)) >= minSide && width(spans.filter((s) => s.l >= strip.r)) >= minSide ? 1 : 0;
}

/** The widest part of [l, r] that no span covers. */
function freePart(l: number, r: number, spans: Span[]): Span {
  let best: Span = { l, r: l };
  let from = l;
  for (const span of spans) {
    if (span.r <= from) continue;
    if (span.l >= r) break;
    if (span.l - from > best.r - best.l) best = { l: from, r: span.l };
    from = Math.max(from, span.r);
  }
  if (r - from > best.r - best.l) best = { l: from, r };
  return best;
}

/**
 * Gutters of a page from its rows of runs (top to bottom, as lines.ts forms them). A gap between
 * two runs of a row starts a candidate; each following row keeps it where it leaves the strip free
 * (narrowing it to its own free part), and it ends at a row that crosses it (a full-width title, a
 * figure's caption across both columns). It is a gutter when rows with text on both sides of it
 * number at least MIN_ROWS_BESIDE.
 */
export function findGutters(rows: TextRun[][]): Gutter[] {
  const found: Gutter[] = [];
  let active: Candidate[] = [];
  const close = (candidate: Candidate) => {
    if (candidate.beside >= MIN_ROWS_BESIDE) found.push({ l: candidate.l, r: candidate.r, t: candidate.t, b: candidate.b });
  };
  for (const row of rows) {
    const spans = spansOf(row);
    const size = Math.max(...row.map((run) => run.size));
    const minWidth = Math.max(MIN_GUTTER_PT, MIN_GUTTER_EM * size);
    const top = Math.max(...row.map((run) => run.y + ASCENT * run.size));
    const bottom = Math.min(...row.map((run) => run.y - DESCENT * run.size));
    const next: Candidate[] = [];
    for (const candidate of active) {
      const free = freePart(candidate.l, candidate.r, spans);
      if (free.r - free.l < minWidth) {
        close(candidate);
        continue;
      }
      next.push({ ...free, t: candidate.t, b: bottom, beside: candidate.beside + besideCount(spans, free, size) });
    }
    for (let i = 1; i < spans.length; i += 1) {
      const gap = { l: spans[i - 1]?.r ?? 0, r: spans[i]?.l ?? 0 };
      if (gap.r - gap.l < minWidth || next.some((c) => c.l < gap.r && gap.l < c.r)) continue;
      next.push({ ...gap, t: top, b: bottom, beside: besideCount(spans, gap, size) });
    }
    active = next;
  }
  active.forEach(close);
  return found;
}

/** Whether a gutter separates two runs of a row: it lies in the gap between them, at the row's height. */
export function gutterBetween(gutters: Gutter[], right: number, next: TextRun): boolean {
  return gutters.some((g) => g.l >= right - 0.5 && g.r <= next.x + 0.5 && next.y <= g.t && next.y >= g.b);
}
