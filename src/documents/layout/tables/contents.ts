// A table of contents: entries each ending in a page number, usually after a dot leader, set one
// a line. Read as a two-column table (entry | page) with the leaders removed, so they are neither
// dot soup in a paragraph nor mistaken for a table of many columns.
import type { Block, Table, TableCell } from '../../document.ts';
import { joinText, union, type TextRun } from '../geometry.ts';
import { baselineRows, tableBlock } from './grid.ts';

const runBox = (run: TextRun) => ({ l: run.x, r: run.x + run.width, t: run.y + 0.8 * run.size, b: run.y - 0.2 * run.size });

/** A page label: arabic or roman numerals, or an appendix page ("A-3", "B.12"). */
const PAGE = String.raw`(\d{1,4}|[ivxlcdm]{1,7}|[IVXLCDM]{1,7}|[A-Z][-.]\d{1,3})`;
/** An entry, a leader (three or more dots, middle dots or an ellipsis, spaced or not), the page. */
const LEADER_LINE = new RegExp(String.raw`^(.*?\S)\s*(?:[.·•…‥⋯]\s*){3,}\s*${PAGE}$`, 'u');
/** An entry without a leader: text, a gap, the page (a chapter line set in bold without dots). */
const PLAIN_LINE = new RegExp(String.raw`^(.*\D)\s+${PAGE}$`, 'u');
/** Entries that make a table of contents, at least. */
const MIN_ENTRIES = 3;
/** Rows of one table of contents are at most this far apart (em), a blank line between chapters included. */
const MAX_PITCH = 3;

type Line = { runs: TextRun[]; text: string; l: number; r: number; baseline: number; size: number };
type Entry = { lines: Line[]; entry: string; page: string };

const lineOf = (runs: TextRun[]): Line => {
  const box = union(runs.map(runBox));
  const text = runs.map((r) => r.text.trim()).filter((t) => t !== '').reduce(joinText, '');
  return { runs, text, l: box.l, r: box.r, baseline: Math.min(...runs.map((r) => r.y)), size: Math.max(...runs.map((r) => r.size)) };
};

/**
 * Tables of contents among the runs: three or more consecutive lines ending in a dot leader and a
 * page number; between them, lines ending in a page number at the leaders' right edge (entries set
 * without a leader) and lines without a page number just above an entry (an entry's first line,
 * wrapped) belong to it. Returns the tables and the runs left over.
 */
export function contentsTables(runs: TextRun[]): { tables: Block[]; rest: TextRun[] } {
  const lines = baselineRows(runs).map(lineOf);
  const tables: Block[] = [];
  const used = new Set<TextRun>();
  let i = 0;
  while (i < lines.length) {
    if (!LEADER_LINE.test(lines[i]?.text ?? '')) {
      i += 1;
      continue;
    }
    // Grow a region of lines around leader lines.
    const region: Line[] = [];
    let j = i;
    while (j < lines.length) {
      const line = lines[j];
      const above = region.at(-1);
      if (!line || (above && above.baseline - line.baseline > MAX_PITCH * Math.max(line.size, above.size))) break;
      region.push(line);
      j += 1;
    }
    const entries = entriesOf(region);
    const leadered = entries.filter((e) => e.lines.some((l) => LEADER_LINE.test(l.text))).length;
    const consumed = entries.reduce((n, e) => n + e.lines.length, 0);
    if (leadered >= MIN_ENTRIES) {
      tables.push(contentsBlock(entries));
      for (const e of entries) for (const l of e.lines) for (const r of l.runs) used.add(r);
    }
    i += Math.max(1, consumed);
  }
  return { tables, rest: runs.filter((r) => !used.has(r)) };
}

/** The entries from the top of the region until a line that fits none of the three kinds. */
function entriesOf(region: Line[]): Entry[] {
  const leaders = region.filter((l) => LEADER_LINE.test(l.text));
  const rights = leaders.map((l) => l.r).sort((a, b) => a - b);
  const right = rights[Math.floor(rights.length / 2)] ?? 0;
  const lefts = Math.min(...leaders.map((l) => l.l));
  const entries: Entry[] = [];
  let pending: Line[] = [];
  for (const [k, line] of region.entries()) {
    const leader = LEADER_LINE.exec(line.text);
    const plain = leader ? null : PLAIN_LINE.exec(line.text);
    const atRight = Math.abs(line.r - right) <= 0.6 * line.size && line.l >= lefts - 2 * line.size;
    const match = leader ?? (plain && atRight ? plain : null);
    if (match) {
      entries.push({ lines: [...pending, line], entry: [...pending.map((p) => p.text), match[1] ?? ''].reduce(joinText, ''), page: match[2] ?? '' });
      pending = [];
      continue;
    }
    // A wrapped entry's first line: no page, inside the region's left edge and short of its right, an entry just below.
    const next = region[k + 1];
    const wraps = pending.length < 2 && line.l >= lefts - 2 * line.size && line.r < right && next !== undefined && line.baseline - next.baseline <= 1.5 * line.size && LEADER_LINE.test(next.text);
    if (wraps) pending.push(line);
    else break;
  }
  return entries;
}

function contentsBlock(entries: Entry[]): Block {
  const cells: TableCell[] = entries.flatMap((e, row) => {
    const entryRuns = e.lines.flatMap((l) => l.runs);
    const box = union(entryRuns.map(runBox));
    return [
      { text: e.entry, bbox: { ...box, r: box.l + (box.r - box.l) * 0.8 }, row, col: 0, rowSpan: 1, colSpan: 1, columnHeader: false, rowHeader: false },
      { text: e.page, bbox: { ...box, l: box.r - e.page.length * (e.lines.at(-1)?.size ?? 10) * 0.6 }, row, col: 1, rowSpan: 1, colSpan: 1, columnHeader: false, rowHeader: false },
    ];
  });
  const table: Table = { numRows: entries.length, numCols: 2, cells };
  const runs = entries.flatMap((e) => e.lines.flatMap((l) => l.runs));
  return tableBlock(table, union(runs.map(runBox)), runs);
}
