// Text set up or down the page inside a table (a narrow column's header turned on its side, as in
// IBM's Redbooks' comparison tables). The table stages place text by its upright box — start, advance
// to the right, font size upwards — which for a turned run reaches sideways across the next columns.
// Before tables are found, each turned line (its runs along one baseline, joined in the order they
// are read) stands in as one upright run where its glyphs really lie: as wide as its font size, its
// baseline at its foot, so a header turned in each column keeps to its column and headers of one
// row share a baseline. Runs no table takes go back to the flow as they were read.
import { joinText, type TextRun } from '../geometry.ts';

/** Runs of one turned line are this far apart across the line at most (points). */
const SAME_LINE = 1;
/** A gap along the line wider than this share of the font size is a space between words. */
const WORD_GAP = 0.15;

export type StandIns = { runs: TextRun[]; originals: Map<TextRun, TextRun[]> };

/**
 * spec (issue 41): "Vertical text inside cells needs a run's writing direction in PageContent" — runs
 * written bottom-to-top (90) or top-to-bottom (270) become one upright stand-in per turned line, its
 * text in reading order, placed over the glyphs' own footprint.
 */
export function uprightStandIns(runs: TextRun[]): StandIns {
  const turned = runs.filter((r) => r.direction === 90 || r.direction === 270);
  if (turned.length === 0) return { runs, originals: new Map() };
  const lines: TextRun[][] = [];
  for (const run of [...turned].sort((a, b) => (a.direction ?? 0) - (b.direction ?? 0) || a.x - b.x)) {
    const line = lines.at(-1);
    const anchor = line?.[0];
    if (line && anchor && anchor.direction === run.direction && Math.abs(anchor.x - run.x) <= SAME_LINE) line.push(run);
    else lines.push([run]);
  }
  const originals = new Map<TextRun, TextRun[]>();
  const standIns = lines.flatMap((line) => splitAlong(line)).map((line) => {
    const standIn = standInFor(line);
    originals.set(standIn, line);
    return standIn;
  });
  const taken = new Set(turned);
  return { runs: [...runs.filter((r) => !taken.has(r)), ...standIns], originals };
}

/** The runs given back: each stand-in replaced by the runs it stands for. */
export function asRead(runs: TextRun[], originals: Map<TextRun, TextRun[]>): TextRun[] {
  return originals.size === 0 ? runs : runs.flatMap((r) => originals.get(r) ?? [r]);
}

/** A turned line's runs in reading order (up the page for 90, down it for 270), cut where a gap wider than a line's height parts them. */
function splitAlong(line: TextRun[]): TextRun[][] {
  const up = line[0]?.direction === 90;
  const ordered = [...line].sort((a, b) => (up ? a.y - b.y : b.y - a.y));
  const parts: TextRun[][] = [];
  let end = NaN;
  for (const run of ordered) {
    const part = parts.at(-1);
    const gap = up ? run.y - end : end - run.y;
    if (part && gap <= 1.5 * run.size) part.push(run);
    else parts.push([run]);
    end = up ? run.y + run.width : run.y - run.width;
  }
  return parts;
}

function standInFor(line: TextRun[]): TextRun {
  const first = line[0] as TextRun;
  const up = first.direction === 90;
  const size = Math.max(...line.map((r) => r.size));
  let text = '';
  let end = NaN;
  for (const run of line) {
    const gap = up ? run.y - end : end - run.y;
    text = Number.isNaN(end) ? run.text : gap > WORD_GAP * run.size ? joinText(text.trimEnd(), run.text.trimStart()) : text + run.text;
    end = up ? run.y + run.width : run.y - run.width;
  }
  // Up the page the glyphs' tops face left of the baseline, down the page right of it.
  const left = up ? first.x - 0.8 * size : first.x - 0.2 * size;
  const foot = up ? first.y : Math.min(...line.map((r) => r.y - r.width));
  const { direction: _turned, ...style } = first;
  return { ...style, text, x: left, y: foot, width: size, size, hasEOL: false };
}
