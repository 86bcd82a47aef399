// Stage 3 — blocks → reading order: columns and full-width bands found per page.
import type { Block } from '../document.ts';
import { union } from './geometry.ts';
import { isTurnedBlock } from './turned.ts';

/** A column gutter is at least this wide (points). */
const MIN_GUTTER = 5;

const topThenLeft = (a: Block, b: Block) => b.bbox.t - a.bbox.t || a.bbox.l - b.bbox.l;

/**
 * Orders blocks the way a person reads them, by recursive cuts (after docling's and marker's
 * column handling). Where vertical gutters that no block crosses split the blocks into side-by-side
 * groups, each column is read top to bottom, left column first. Otherwise the region is cut into
 * horizontal bands at whitespace, and consecutive bands are read as one region for as long as they
 * still form columns together: two columns whose paragraph breaks line up are then read column by
 * column (A1 A2 B1 B2, not A1 B1 A2 B2), and a column running longer than its neighbour stays in
 * its column. A block crossing the gutter (a title above the columns, a closing paragraph below)
 * starts a new region, so it keeps its place.
 */
export function readingOrder(blocks: Block[]): Block[] {
  // A line set up or down the margin of an upright page (a printer's slug, a turned label) is as tall
  // as the page's text and would stand in every cut between its bands: it is read after the page's text.
  const turned = blocks.filter(isTurnedBlock);
  if (turned.length === 0 || turned.length === blocks.length) return orderRegion(blocks);
  return [...orderRegion(blocks.filter((b) => !turned.includes(b))), ...turned.sort(topThenLeft)];
}

function orderRegion(blocks: Block[]): Block[] {
  if (blocks.length <= 1) return [...blocks];
  const columns = columnsOf(blocks);
  if (columns) return columns.flatMap(orderRegion);
  const bands = bandsOf(blocks);
  const regions: Block[][] = [];
  let previousIsCards = false;
  for (const band of bands) {
    const previous = regions.at(-1);
    const cards = isRowOfCards(band);
    if (previous && !cards && !previousIsCards && !crossesGutters(previous, band) && columnsOf([...previous, ...band])) previous.push(...band);
    else regions.push([...band]);
    previousIsCards = cards;
  }
  // One region would mean the blocks form columns after all, which was ruled out above; if the
  // region is the whole input anyway, stop cutting rather than recurse on the same blocks.
  if (regions.length <= 1) return [...blocks].sort(topThenLeft);
  return regions.flatMap(orderRegion);
}

/**
 * A band of centred blocks side by side (a paper's authors with their affiliations, a row of
 * captioned logos) is a row read left to right, not the top of the columns below it: it is never
 * merged with the bands around it, whose gutter it may happen to share.
 */
function isRowOfCards(band: Block[]): boolean {
  return band.length >= 2 && band.every((b) => b.align === 'center');
}

/**
 * spec (issue 17): "full-width titles and figures in between columns placed where they belong" —
 * a region that crosses the gutter between the columns of the band below it (a centred title over
 * two column headings) is above those columns, not one of them, even when it happens to leave a
 * narrow gap of its own beside a short heading.
 */
function crossesGutters(region: Block[], band: Block[]): boolean {
  const columns = columnsOf(band);
  if (!columns) return false;
  const spans = columns.map((c) => union(c.map((b) => b.bbox)));
  const gutters = spans.slice(1).map((span, i) => ({ l: spans[i]?.r ?? span.l, r: span.l }));
  // Justified lines of one column end a fraction of a point apart: reaching into the gutter by less
  // than a third of its least width is still beside it.
  const slack = MIN_GUTTER / 3;
  return region.some((b) => gutters.some((g) => b.bbox.l < g.r - slack && b.bbox.r > g.l + slack));
}

/** Side-by-side groups separated by vertical gutters, left to right; undefined when there are none. */
function columnsOf(blocks: Block[]): Block[][] | undefined {
  const groups: Block[][] = [];
  let right = -Infinity;
  for (const block of [...blocks].sort((a, b) => a.bbox.l - b.bbox.l)) {
    const group = groups.at(-1);
    if (group && block.bbox.l <= right + MIN_GUTTER) group.push(block);
    else groups.push([block]);
    right = Math.max(right, block.bbox.r);
  }
  if (groups.length < 2) return undefined;
  // Groups that do not sit beside each other (one wholly above the other) are not columns.
  const spans = groups.map((g) => union(g.map((b) => b.bbox)));
  for (let i = 1; i < spans.length; i += 1) {
    const [before, after] = [spans[i - 1], spans[i]];
    if (!before || !after || after.b >= before.t || before.b >= after.t) return undefined;
  }
  return groups;
}

/** Blocks split at horizontal whitespace that crosses the whole region, top to bottom. */
function bandsOf(blocks: Block[]): Block[][] {
  const bands: Block[][] = [];
  let bottom = Infinity;
  for (const block of [...blocks].sort(topThenLeft)) {
    const band = bands.at(-1);
    const overlapsBand = block.bbox.t > bottom + 1;
    if (band && overlapsBand) {
      band.push(block);
      bottom = Math.min(bottom, block.bbox.b);
    } else {
      bands.push([block]);
      bottom = block.bbox.b;
    }
  }
  return bands;
}
