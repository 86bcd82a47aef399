// Where a translation that does not fit goes depends on what kind of block it is (issue 42, "Where
// overflow goes, by kind of block"): only running text continues on a notes page; a table cell, a
// list item, a caption, a label, a heading or a callout stays in place — wrapped, in the free space
// beside and below it, then smaller, down to a least size (never below the page's smallest source
// size × 0.8, never below 5 pt, never below half its own size).
import type { Block, Page } from '../../document.ts';
import { SHRINK_FLOOR } from './fit.ts';

export type OverflowKind = 'running text' | 'table cell' | 'list item' | 'caption' | 'heading' | 'label';

/** A paragraph of the body has more words than this; a shorter text block is a label or a callout. */
const LABEL_WORDS = 8;
/** "never below 5 pt" */
export const LEAST_POINTS = 5;
/** "shrink to as little as 50 %" */
export const LEAST_SCALE = 0.5;
/** "never below the page's smallest source size × 0.8" */
const SMALLEST_SHARE = 0.8;

const words = (text: string) => text.split(/\s+/).filter((w) => /[\p{L}\p{N}]/u.test(w)).length;

/** The kind of a block for the overflow rule; `cell` when the text is one of a table's cells. */
export function overflowKind(block: Block, cell = false): OverflowKind {
  if (cell || block.label === 'table') return 'table cell';
  if (block.label === 'list_item') return 'list item';
  if (block.label === 'caption') return 'caption';
  if (block.label === 'title' || block.label === 'section_header') return 'heading';
  if ((block.label === 'text' || block.label === 'footnote') && !block.inPicture && words(block.text) > LABEL_WORDS) return 'running text';
  return 'label';
}

/** The smallest source size on a page: its blocks' and its table cells' sizes. */
export function smallestSourceSize(page: Page): number {
  const sizes = page.blocks.flatMap((b) => [b.fontSize, ...(b.table?.cells ?? []).map((c) => c.fontSize ?? 0)]).filter((s) => s > 0);
  return sizes.length > 0 ? Math.min(...sizes) : 0;
}

/** The least share of `size` a block that stays in place may shrink to on `page`; at most the 70 % floor. */
export function leastScale(page: Page, size: number, smallest = smallestSourceSize(page)): number {
  const least = Math.max(LEAST_POINTS, smallest * SMALLEST_SHARE);
  return Math.min(SHRINK_FLOOR, Math.max(LEAST_SCALE, least / size));
}
