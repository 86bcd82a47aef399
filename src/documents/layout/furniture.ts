// Page furniture: running heads and footers repeated across pages, page numbers, footnotes.
import type { Block, Page } from '../document.ts';
import { bodyStyle } from './headings.ts';

/** Page headers and footers sit in the top or bottom 8% of the page… */
const FURNITURE_ZONE = 0.08;

type FurnitureLabel = 'page_header' | 'page_footer';

function furnitureZone(block: Block, page: Page): FurnitureLabel | undefined {
  if (block.label === 'table') return undefined;
  if (block.bbox.b >= page.height * (1 - FURNITURE_ZONE)) return 'page_header';
  if (block.bbox.t <= page.height * FURNITURE_ZONE) return 'page_footer';
  return undefined;
}

/** "Page 3" and "Page 4" are the same footer: digits are compared as placeholders. */
const furnitureKey = (zone: FurnitureLabel, text: string) => `${zone}:${text.toLowerCase().replace(/\d+/g, '#').replace(/\s+/g, ' ').trim()}`;

/** …and repeat (the same text, or with a changing page number) on at least half the pages, and at least two. */
export function markFurniture(pages: Page[]): Page[] {
  const pagesWith = new Map<string, Set<number>>();
  for (const page of pages) {
    for (const block of page.blocks) {
      const zone = furnitureZone(block, page);
      if (!zone) continue;
      const key = furnitureKey(zone, block.text);
      pagesWith.set(key, (pagesWith.get(key) ?? new Set()).add(page.pageNo));
    }
  }
  const needed = Math.max(2, Math.ceil(pages.length / 2));
  return pages.map((page) => ({
    ...page,
    blocks: page.blocks.map((block) => {
      const zone = furnitureZone(block, page);
      const repeats = zone !== undefined && (pagesWith.get(furnitureKey(zone, block.text))?.size ?? 0) >= needed;
      return repeats ? { ...block, label: zone } : block;
    }),
  }));
}


/** "3", "iv", "Page 3", "3 of 18", "- 3 -", "7-45" (chapter 7, page 45), "A-3": a page number alone in its block. */
const PAGE_NUMBER = /^(?:page\s+)?[-–—]?\s*(?:\d{1,4}|[ivxlcdm]{1,7}|[\dA-Z]{1,3}[-–.]\d{1,4})\s*[-–—]?(?:\s*(?:of|\/)\s*\d{1,4})?$/iu;

/**
 * spec (issue 17): "page numbers ('1') … go to furniture, never the body". A page number is the
 * block nearest the bottom (or top) edge of its page with nothing else beside it, wherever the
 * document's margins put it.
 */
export function markPageNumbers(pages: Page[]): Page[] {
  return pages.map((page) => {
    const flow = page.blocks.filter((b) => b.label !== 'page_header' && b.label !== 'page_footer');
    const lowest = flow.reduce<Block | undefined>((low, b) => (!low || b.bbox.b < low.bbox.b ? b : low), undefined);
    const highest = flow.reduce<Block | undefined>((high, b) => (!high || b.bbox.t > high.bbox.t ? b : high), undefined);
    const blocks = page.blocks.map((block) => {
      if (!PAGE_NUMBER.test(block.text.trim())) return block;
      if (block === lowest && block.bbox.t < page.height / 4) return { ...block, label: 'page_footer' as const };
      if (block === highest && block.bbox.b > (page.height * 3) / 4) return { ...block, label: 'page_header' as const };
      return block;
    });
    return { ...page, blocks };
  });
}

/**
 * Footnotes: text set smaller than the body, below the last body-size text of the page, in its
 * lower half (a footnote mark or number usually starts it).
 */
export function markFootnotes(pages: Page[]): Page[] {
  const body = bodyStyle(pages);
  if (!body) return pages;
  return pages.map((page) => {
    const bodyBlocks = page.blocks.filter((b) => (b.label === 'text' || b.label === 'list_item' || b.label === 'table') && b.fontSize >= body.size * 0.95);
    const lowestBody = Math.min(...bodyBlocks.map((b) => b.bbox.b));
    const blocks = page.blocks.map((block) => {
      const small = (block.label === 'text' || block.label === 'list_item') && block.fontSize <= body.size * 0.9;
      return small && block.bbox.t <= lowestBody + 1 && block.bbox.t < page.height / 2 ? { ...block, label: 'footnote' as const } : block;
    });
    return { ...page, blocks };
  });
}
