// A ruled frame that is not a table: rules drawn round side-by-side panels of running text or of
// listings (a precinct bulletin's four ruled columns of contests, each contest a few lines and a
// blank line). Read as a grid, every printed line of such a panel becomes a row of its own, and the
// lines of the four panels are zipped into one table. The test is the one tabula-java's
// SpreadsheetExtractionAlgorithm.isTabular makes — the structure the rules define has to agree
// with the structure the text defines — taken down to what tells the two apart here: a table's
// rows run across all its columns, so the blank space between its records runs across the table
// too; side-by-side flows break their paragraphs each at its own height.
import type { BoundingBox } from '../../document.ts';
import { firstAtLeast, type Ruling, type TextRun } from '../geometry.ts';
import { baselineRows, isNumeric, segmentsOf } from './grid.ts';
import { drawn, type Grid } from './grids.ts';

/** A panel holds at least this many printed lines before its breaks are compared with its neighbours'. */
const MIN_PANEL_LINES = 8;
/** A break is a gap between two lines of a panel at least this many times its usual line pitch. */
const BREAK_PITCH = 1.6;
/** Of the breaks in a panel, at most this share may run across the neighbouring panels for them to be separate flows. */
const MAX_SHARED_BREAKS = 0.5;

type Band = { top: number; bottom: number };

/** A run with the point panelOf places it by: its centre across, a third of its size above its baseline. */
type Placed = { y: number; cx: number; cy: number };

/** The baselines of the runs placed inside one cell (`placed`: those of its row), top to bottom, runs on one baseline counted once. */
function baselinesIn(placed: Placed[], box: BoundingBox): number[] {
  const ys = placed
    .filter((p) => p.cx > box.l && p.cx < box.r && p.cy > box.b && p.cy < box.t)
    .map((p) => p.y)
    .sort((a, b) => b - a);
  const out: number[] = [];
  for (const y of ys) if (out.length === 0 || (out.at(-1) ?? y) - y > 1) out.push(y);
  return out;
}

/** The blank bands between paragraphs of one panel: gaps well over its usual line pitch. */
function breaksOf(baselines: number[]): Band[] {
  const gaps = baselines.slice(1).map((y, i) => (baselines[i] ?? y) - y);
  const pitch = [...gaps].sort((a, b) => a - b)[Math.floor(gaps.length / 2)] ?? 0;
  const out: Band[] = [];
  gaps.forEach((gap, i) => {
    if (gap >= BREAK_PITCH * pitch) out.push({ top: baselines[i] ?? 0, bottom: baselines[i + 1] ?? 0 });
  });
  return out;
}

/**
 * The cells of a ruled grid as panels of their own when some ruled row holds two or more panels of
 * text side by side whose paragraph breaks fall at different heights; otherwise undefined (a
 * table). Panels are returned top to bottom, left to right.
 */
export function framedPanels(runs: TextRun[], grid: Grid, vertical: Ruling[]): BoundingBox[] | undefined {
  const { ys } = grid;
  // Each ruled row's panels: between the column rules drawn down that row (a title row with none is one panel).
  const rows = ys.slice(1).map((bottom, r) => {
    const top = ys[r] ?? 0;
    const edges = grid.xs.filter((x, i) => i === 0 || i === grid.xs.length - 1 || drawn(vertical, 'y', x, bottom, top));
    return edges.slice(1).map((right, c) => ({ l: edges[c] ?? 0, r: right, t: top, b: bottom }));
  });
  // Each run placed once, sorted by height: a row's cells look only at the runs of that row (binary search), not at every run of the page.
  const placed: Placed[] = runs.map((run) => ({ y: run.y, cx: run.x + run.width / 2, cy: run.y + 0.3 * run.size })).sort((a, b) => a.cy - b.cy);
  let separate = false;
  for (const row of rows) {
    const first = row[0];
    const inRow = first === undefined ? [] : placed.slice(firstAtLeast(placed, (p) => p.cy, first.b), firstAtLeast(placed, (p) => p.cy, first.t) + 1);
    const panels = row.map((box) => baselinesIn(inRow, box));
    const full = panels.filter((lines) => lines.length >= MIN_PANEL_LINES);
    if (full.length < 2) continue;
    // A break of one panel runs across its neighbour when the neighbour has no line inside it.
    const crosses = (band: Band, other: number[]) => !other.some((y) => y < band.top - 1 && y > band.bottom + 1);
    const own = full.map((lines) => {
      const breaks = breaksOf(lines);
      if (breaks.length < 2) return false;
      const shared = breaks.filter((band) => full.every((other) => other === lines || crosses(band, other))).length;
      return shared <= MAX_SHARED_BREAKS * breaks.length;
    });
    if (own.filter(Boolean).length >= 2) separate = true;
  }
  return separate ? rows.flat() : undefined;
}

/** The index of the panel a run stands in (its centre), or -1. */
export function panelOf(panels: BoundingBox[], run: TextRun): number {
  const cx = run.x + run.width / 2;
  const cy = run.y + 0.3 * run.size;
  return panels.findIndex((box) => cx > box.l && cx < box.r && cy > box.b && cy < box.t);
}

/** A value set apart on its line: a figure, or a short code in capitals (a party, a unit). */
const VALUE = /^(?:[A-Z]{1,4}|[A-Z]{1,4}\s+\S+)$/u;
/** A wide gap between the pieces of a line (em), as the line stage cuts at. */
const WIDE_GAP = 1.5;
/** This share of the pieces after a line's first must be values for the panel to be a listing. */
const LISTING_SHARE = 0.8;

/**
 * A panel is a listing when the lines cut by wide gaps carry, after their label, only values —
 * figures and short codes ("NEEL KASHKARI   REP   247"): each printed line is one entry, read
 * across, not two or three narrow columns read one after the other.
 */
export function isListing(runs: TextRun[]): boolean {
  const rows = baselineRows(runs).map((row) => segmentsOf(row, WIDE_GAP));
  const after = rows.flatMap((row) => row.slice(1));
  if (after.length < 3) return false;
  const values = after.filter((s) => isNumeric(s.text) || VALUE.test(s.text.trim()) || s.text.trim().split(/\s+/u).every((w) => isNumeric(w)));
  return values.length >= LISTING_SHARE * after.length;
}
