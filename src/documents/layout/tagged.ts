// A tagged page laid out from its structure tree: each block-level element becomes a block with the
// role its tag names (H1–H6 → section_header with its level, LI → list_item, Table → table with
// spans and header cells, Figure → picture with its alt text, Caption, Note → footnote, Code),
// in the tree's order — the reading order the author set. Text the tags leave out (running heads,
// page numbers marked as artifacts, or untagged) goes through layout analysis and is placed by
// position. A tree that is missing, broken or clearly wrong gives undefined, and the page is laid
// out as an untagged one (page.ts).
import type { Block, BoundingBox, Page, Picture } from '../document.ts';
import { groupBlocks, SYMBOL_MARKER } from './blocks.ts';
import { readingOrder } from './columns.ts';
import { dominant, joinLines, overlapsX, similarSize, union, type PageContent, type TextRun } from './geometry.ts';
import { groupLines } from './lines.ts';
import { alignShortRows, gridOf, isLayoutGrid, placeCells, titleRows, withoutRows } from './tagged-table.ts';
import type { StructNode } from './structure-tree.ts';
import { hasRightToLeft } from './bidi.ts';
import { unitMcids, unitsOf, type Content, type TextUnit, type Unit } from './tagged-units.ts';
import { tableBlock } from './tables/grid.ts';

/**
 * The tags must carry at least this share of the page's characters: below it they are partial
 * (issue 31: "tags that cover a third of the page's text" are clearly wrong), and layout sees more.
 */
export const MIN_TAGGED_SHARE = 0.6;
/** At most this share of the elements may have types the standard does not name (and the role map does not map). */
const MAX_UNKNOWN_SHARE = 0.5;
/** Pages with at least this many text blocks all tagged P say nothing layout cannot (issue 31: "everything tagged P"). */
const ALL_P_MIN_UNITS = 3;

const chars = (runs: TextRun[]) => runs.reduce((n, run) => n + run.text.replace(/\s/gu, '').length, 0);

export type TagVerdict = { usable: true; units: Unit[] } | { usable: false; reason: string; allP?: true };

/** Whether the page's tags can be trusted for its roles and reading order, and why not. */
export function judgeTags(content: PageContent): TagVerdict {
  if (!content.structure || content.structure.length === 0) return { usable: false, reason: 'the page has no structure tree' };
  if (content.textSource === 'ocr') return { usable: false, reason: 'the page was read by OCR' };
  const { units, counts } = unitsOf(content.structure);
  if (counts.unknown > MAX_UNKNOWN_SHARE * counts.elements) return { usable: false, reason: 'most of its tags have no standard meaning' };
  const claimed = new Set(units.flatMap(unitMcids));
  const total = chars(content.runs);
  if (total === 0) return { usable: false, reason: 'the page has no text' };
  const tagged = chars(content.runs.filter((run) => run.mcid !== undefined && claimed.has(run.mcid)));
  if (tagged < MIN_TAGGED_SHARE * total) return { usable: false, reason: `its tags hold ${Math.round((100 * tagged) / total)} % of its text` };
  const textUnits = units.filter((unit) => unit.kind === 'text' && unit.role !== 'furniture' && unit.role !== 'caption');
  // Figures, tables and their captions aside: a page whose every text block is a P has tags that say nothing of its headings or lists.
  const plain = textUnits.every((unit) => unit.kind === 'text' && unit.tag === 'P');
  if (plain && textUnits.length >= ALL_P_MIN_UNITS) return { usable: false, reason: 'everything on it is tagged P', allP: true };
  return { usable: true, units };
}

/** The page laid out from its tags, or undefined when they are not usable (see judgeTags). */
export function layoutTaggedPage(content: PageContent): Page | undefined {
  const verdict = judgeTags(content);
  if (!verdict.usable) return undefined;
  const runs = withLineEndHyphens(content.runs);
  const byMcid = new Map<number, TextRun[]>();
  for (const run of runs) {
    if (run.mcid === undefined) continue;
    const list = byMcid.get(run.mcid);
    if (list) list.push(run);
    else byMcid.set(run.mcid, [run]);
  }
  const used = new Set<number>();
  const runsOf = (items: Content[]): TextRun[] =>
    items.flatMap((item) => {
      const ids = typeof item === 'number' ? [item] : item.mcids;
      const runs = ids.filter((id) => !used.has(id)).flatMap((id) => (used.add(id), byMcid.get(id) ?? []));
      // /ActualText replaces the glyphs it covers (a ligature, a word drawn in pieces).
      if (typeof item === 'number' || runs.length === 0) return runs;
      const [first] = runs as [TextRun];
      return [{ ...first, text: item.actualText, width: runs.reduce((right, r) => Math.max(right, r.x + r.width), -Infinity) - first.x }];
    });
  const blocks: Block[] = [];
  const pictures: Picture[] = [];
  const labels: Block[] = [];
  const captions = new Map<Block, number>();
  for (const [at, unit] of verdict.units.entries()) {
    if (unit.kind === 'table') {
      blocks.push(...tableFrom(unit, runsOf, byMcid));
    } else if (unit.kind === 'figure') {
      const runs = runsOf(unit.content);
      const box = unit.node.graphicsBox ?? (runs.length > 0 ? runsBox(runs) : undefined);
      if (box) pictures.push({ bbox: box, file: '', ...(unit.node.alt ? { caption: unit.node.alt } : {}) });
      // Words drawn inside a figure are its labels, never the page's paragraphs.
      labels.push(...groupBlocks(groupLines(runs)).map((b) => ({ ...b, inPicture: true, tag: unit.tag })));
    } else {
      const made = textBlocks(unit, runsOf(unit.label ?? []), runsOf(unit.content), content.height);
      if (unit.role === 'caption') for (const block of made) captions.set(block, at);
      blocks.push(...made);
    }
  }
  attachTaggedCaptions(verdict.units, captions, blocks, pictures);
  const merged = joinLineParagraphs(blocks);
  const rest = runs.filter((run) => run.mcid === undefined || !used.has(run.mcid));
  const untagged = readingOrder(groupBlocks(groupLines(rest)));
  return { pageNo: content.pageNo, width: content.width, height: content.height, blocks: [...placeUntagged(merged, untagged, content.height), ...labels], pictures, tags: 'used' };
}

/** A line this close under the one above (in em of its size, box to box) is the next line of its paragraph. */
const LINE_GAP_EM = 0.6;

/**
 * Word writes each line ended by a line break (Shift+Enter) as a P of its own: a one-line P directly
 * under another P, one line further down, in the same size and weight, is the next line of the
 * same paragraph — as layout would have grouped them (blocks.ts).
 */
function joinLineParagraphs(blocks: Block[]): Block[] {
  const out: Block[] = [];
  let lastJoined = false;
  for (const block of blocks) {
    const above = out.at(-1);
    const oneLine = (b: Block) => b.bbox.t - b.bbox.b < 1.6 * b.fontSize;
    const gap = above ? above.bbox.b - block.bbox.t : Infinity;
    const joins: boolean =
      above !== undefined &&
      above.tag === 'P' &&
      block.tag === 'P' &&
      above.label === 'text' &&
      block.label === 'text' &&
      (oneLine(above) || lastJoined) &&
      oneLine(block) &&
      gap > -0.2 * block.fontSize &&
      gap <= LINE_GAP_EM * block.fontSize &&
      similarSize(above.fontSize, block.fontSize) &&
      above.bold === block.bold &&
      overlapsX(above.bbox, block.bbox);
    if (joins && above) out[out.length - 1] = { ...above, text: joinLines(above.text, block.text), bbox: union([above.bbox, block.bbox]) };
    else out.push(block);
    lastJoined = joins;
  }
  return out;
}

/** Dot leaders before a page number at the end of a contents line. */
const DOT_LEADER = /\s*(?:[.…·‥_]\s*){4,}(?=\d{1,4}$)/u;

/** A hyphen, alone in its run. */
const HYPHEN = /^[-\u00ad\u2010\u2011]$/u;

/**
 * PDF/UA marks the hyphen of a word broken at the line's end as an artifact, outside the tags: it
 * joins the run it ends (that run's id), so the word is closed up again as on any other page.
 */
function withLineEndHyphens(runs: TextRun[]): TextRun[] {
  // Tagged runs by baseline (to the point), so each hyphen looks only at its own line.
  const byLine = new Map<number, TextRun[]>();
  for (const run of runs) {
    if (run.mcid === undefined) continue;
    const key = Math.round(run.y);
    const line = byLine.get(key);
    if (line) line.push(run);
    else byLine.set(key, [run]);
  }
  return runs.map((run) => {
    if (run.mcid !== undefined || !HYPHEN.test(run.text.trim())) return run;
    const key = Math.round(run.y);
    const near = [...(byLine.get(key - 1) ?? []), ...(byLine.get(key) ?? []), ...(byLine.get(key + 1) ?? [])];
    const host = near.find((r) => Math.abs(r.y - run.y) < 0.3 * r.size && run.x >= r.x + r.width - 1 && run.x <= r.x + r.width + 0.5 * r.size);
    return host?.mcid === undefined ? run : { ...run, mcid: host.mcid };
  });
}

const runsBox = (runs: TextRun[]): BoundingBox => union(runs.map((r) => ({ l: r.x, r: r.x + r.width, t: r.y + 0.8 * r.size, b: r.y - 0.2 * r.size })));

/**
 * A unit's runs as blocks: the lines of each column it runs through (text going back up the page
 * starts a new column), each column's piece one block, later pieces marked as continuing.
 */
function textBlocks(unit: TextUnit, labelRuns: TextRun[], runs: TextRun[], pageHeight: number): Block[] {
  const pieces: TextRun[][] = [];
  for (const run of runs) {
    const piece = pieces.at(-1);
    const previous = piece?.at(-1);
    if (piece && previous && !(run.y > previous.y + 1.5 * Math.max(run.size, previous.size))) piece.push(run);
    else pieces.push([run]);
  }
  const marker = lineText(labelRuns);
  return pieces.flatMap((piece, index) => {
    const parts = groupBlocks(groupLines(piece));
    const [first] = parts;
    if (!first) return [];
    const joined = parts.map((p) => (p.marker !== undefined && unit.role !== 'list_item' ? `${p.marker} ${p.text}` : p.text)).reduce(joinLines);
    // A contents entry (TOCI, or a P in a Word TOC) keeps its page number, not the dot leader before it.
    const text = joined.replace(DOT_LEADER, ' ');
    const block: Block = { ...first, text, bbox: union(parts.map((p) => p.bbox)), tag: unit.tag, label: blockLabel(unit, first, pageHeight) };
    // Parts of one line each, centred on one axis (an author block): the block is centred.
    if (parts.length >= 2 && parts.every((p) => p.lineBreaks === undefined || p.align === 'center')) {
      const centres = parts.map((p) => (p.bbox.l + p.bbox.r) / 2);
      const lefts = parts.map((p) => p.bbox.l);
      const spread = (xs: number[]) => Math.max(...xs) - Math.min(...xs);
      if ((spread(lefts) > first.fontSize || parts.some((p) => p.align === 'center')) && spread(centres) <= 0.5 * first.fontSize) block.align = 'center';
    }
    // Where the printed lines start in the joined text (issue 42: a narrow block breaks its lines proportionally).
    delete block.lineBreaks;
    if (text === joined && parts.length <= 8) {
      const texts = parts.map((p) => (p.marker !== undefined && unit.role !== 'list_item' ? `${p.marker} ${p.text}` : p.text));
      const breaks = parts.flatMap((part, k) => {
        const start = k === 0 ? 0 : texts.slice(0, k + 1).reduce(joinLines).length - texts[k]!.length;
        return [...(k > 0 ? [start] : []), ...(part.lineBreaks ?? []).map((b) => start + b + (texts[k]!.length - part.text.length))];
      });
      if (breaks.length > 0 && breaks.length < 12 && breaks.every((b, k) => b > (breaks[k - 1] ?? 0) && b < text.length)) block.lineBreaks = breaks;
    }
    delete block.marker;
    delete block.markerColor;
    delete block.markerBox;
    if (unit.role === 'list_item') {
      const own = marker || first.marker;
      if (own) block.marker = own;
      // The Lbl's own glyph and colour (issue 42), else what the lines gave.
      const label = labelRuns.find((r) => r.text.trim() !== '');
      if (marker && label) {
        if (label.color) block.markerColor = label.color;
        if (SYMBOL_MARKER.test(marker)) block.markerBox = { l: label.x - 0.5, r: label.x + label.size / 3, t: label.y + label.size * 0.8, b: label.y - label.size * 0.2 };
      } else if (!marker && first.marker) {
        if (first.markerColor) block.markerColor = first.markerColor;
        if (first.markerBox) block.markerBox = first.markerBox;
      }
    } else if (first.marker !== undefined && parts.length === 1) block.text = `${first.marker} ${first.text}`;
    if (unit.role === 'section_header' && unit.level !== undefined) block.level = unit.level;
    else delete block.level;
    if (index > 0) block.continues = true;
    return [block];
  });
}

function blockLabel(unit: TextUnit, block: Block, pageHeight: number): Block['label'] {
  if (unit.role === 'furniture') return (block.bbox.b + block.bbox.t) / 2 > pageHeight / 2 ? 'page_header' : 'page_footer';
  return unit.role;
}

/** A label's text (a list item's "•" or "3."), lines joined. */
function lineText(runs: TextRun[]): string {
  return groupLines(runs)
    .map((line) => line.text)
    .join(' ')
    .trim();
}

/**
 * A Table element as a table block — its cells in each row ordered left to right as drawn (Excel
 * writes them out of order), a sheet's title rows above it as paragraphs — or, when it is a layout
 * grid (tagged-table.ts), its cells as paragraphs in order.
 */
function tableFrom(unit: Extract<Unit, { kind: 'table' }>, runsOf: (items: Content[]) => TextRun[], runsByMcid: Map<number, TextRun[]>): Block[] {
  const left = (node: StructNode) => mcidsUnder(node).reduce((min, id) => (runsByMcid.get(id) ?? []).reduce((m, r) => Math.min(m, r.x), min), Infinity);
  const byX = (cells: StructNode[]) => {
    const xs = cells.map(left);
    return xs.every(Number.isFinite) && !cells.some((c) => hasRightToLeft(mcidsUnder(c).flatMap((id) => runsByMcid.get(id) ?? []).map((r: TextRun) => r.text).join(''))) ? [...cells].sort((a, b) => left(a) - left(b)) : cells;
  };
  const placed = placeCells(unit.node, byX);
  if (!placed) return [];
  const cellRuns = new Map(placed.cells.map((cell) => [cell, runsOf(contentOfCell(cell.node))]));
  const all = [...cellRuns.values()].flat();
  if (all.length === 0) return [];
  const box = runsBox(all);
  const drawn = gridOf(
    placed,
    (cell) => {
      const runs = cellRuns.get(cell) ?? [];
      if (runs.length === 0) return { text: '' };
      const text = groupBlocks(groupLines(runs))
        .map((b) => (b.marker !== undefined ? `${b.marker} ${b.text}` : b.text))
        .reduce(joinLines, '');
      return { text, bbox: runsBox(runs) };
    },
    box,
  );
  // A layout cell may hold a heading over its paragraph: its blocks are found as on an untagged page.
  const paragraphs = (cells: typeof placed.cells) => cells.flatMap((cell) => groupBlocks(groupLines(cellRuns.get(cell) ?? [])).map((b) => ({ ...b, tag: cell.node.type })));
  // A layout grid's text is laid out as an untagged region (its columns read one after the other, as
  // printed), in the place the tags give the grid.
  const region = () => readingOrder(groupBlocks(groupLines(all))).map((b) => ({ ...b, tag: 'TD' }));
  const table = alignShortRows(drawn);
  const title = titleRows(table);
  const data = withoutRows(table, title);
  if (isLayoutGrid(data)) return region();
  const dataRuns = placed.cells.filter((c) => c.row >= title).flatMap((c) => cellRuns.get(c) ?? []);
  if (dataRuns.length === 0) return region();
  const dataBox = runsBox(dataRuns);
  const block = { ...tableBlock(data, dataBox, dataRuns), tag: 'Table', fontSize: dominant(dataRuns.map((r): [number, number] => [r.size, r.text.length])) ?? 0 };
  return [...paragraphs(placed.cells.filter((c) => c.row < title)), block];
}

const contentOfCell = (node: Parameters<typeof placeCells>[0]): Content[] => {
  const out: Content[] = [];
  const walk = (n: typeof node) => {
    for (const kid of n.kids) {
      if (typeof kid === 'number') out.push(kid);
      else if (kid.actualText !== undefined) out.push({ actualText: kid.actualText, mcids: mcidsUnder(kid) });
      else walk(kid);
    }
  };
  walk(node);
  return out;
};
const mcidsUnder = (node: Parameters<typeof placeCells>[0]): number[] => node.kids.flatMap((kid) => (typeof kid === 'number' ? [kid] : mcidsUnder(kid)));

/** A Caption element names the table or figure just before or after it in the tree. */
function attachTaggedCaptions(units: Unit[], captions: Map<Block, number>, blocks: Block[], pictures: Picture[]): void {
  let tables = -1;
  let figures = -1;
  const targets = units.map((unit) => (unit.kind === 'table' ? { kind: 'table' as const, index: (tables += 1) } : unit.kind === 'figure' ? { kind: 'picture' as const, index: (figures += 1) } : undefined));
  const tableBlocks = blocks.flatMap((block, index) => (block.label === 'table' ? [index] : []));
  const captioned = new Set<Picture>();
  for (const [block, at] of captions) {
    const near = targets[at - 1] ?? targets[at + 1];
    const table = near?.kind === 'table' ? tableBlocks[near.index] : undefined;
    if (table !== undefined) block.captionOf = { kind: 'table', index: table };
    const picture = near?.kind === 'picture' ? pictures[near.index] : undefined;
    if (picture && near) {
      // A caption in two pieces (turned text, two columns) is one caption.
      picture.caption = block.captionOf?.kind === 'picture' || !captioned.has(picture) ? block.text : joinLines(picture.caption ?? '', block.text);
      captioned.add(picture);
      block.captionOf = { kind: 'picture', index: near.index };
    }
  }
}

/**
 * Blocks the tags left out, placed among the tagged ones: above every tagged block a running
 * head, below every one a footer line; otherwise after the last tagged block that starts above it
 * in the same column.
 */
function placeUntagged(tagged: Block[], untagged: Block[], pageHeight: number): Block[] {
  if (tagged.length === 0) return untagged;
  const top = tagged.reduce((t, b) => Math.max(t, b.bbox.t), -Infinity);
  const bottom = tagged.reduce((m, b) => Math.min(m, b.bbox.b), Infinity);
  const out = [...tagged];
  const head: Block[] = [];
  const foot: Block[] = [];
  for (const block of untagged) {
    if (block.bbox.b >= top - 1 && block.bbox.b > pageHeight / 2) head.push({ ...block, label: 'page_header' });
    else if (block.bbox.t <= bottom + 1 && block.bbox.t < pageHeight / 2) foot.push({ ...block, label: 'page_footer' });
    else {
      const before = out.findLastIndex((b) => b.bbox.t >= block.bbox.t && b.bbox.l < block.bbox.r && block.bbox.l < b.bbox.r);
      out.splice(before + 1, 0, block);
    }
  }
  return [...head, ...out, ...foot];
}
