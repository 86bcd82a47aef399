// Page furniture: running heads and footers repeated across pages, page numbers, footnotes.
import type { Block, Page } from '../document.ts';
import { isCaptionText } from './captions.ts';
import { bodyStyle, pageBodySize } from './headings.ts';

/** Page headers and footers sit in the top or bottom 8% of the page… */
const FURNITURE_ZONE = 0.08;

type FurnitureLabel = 'page_header' | 'page_footer';

function furnitureZone(block: Block, page: Page): FurnitureLabel | undefined {
  if (block.label === 'table') return undefined;
  // A line that starts in the zone (its top in the top 8%, or its bottom in the bottom 8%): a running
  // head set 50 pt below the top of a landscape page is still the one set 50 pt below a portrait page's.
  if (block.bbox.t >= page.height * (1 - FURNITURE_ZONE)) return 'page_header';
  if (block.bbox.b <= page.height * FURNITURE_ZONE) return 'page_footer';
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
  const samePlace = samePlaceRepeats(pages);
  return pages.map((page) => ({
    ...page,
    blocks: page.blocks.map((block) => {
      const zone = furnitureZone(block, page);
      const repeats = zone !== undefined && (pagesWith.get(furnitureKey(zone, block.text))?.size ?? 0) >= needed;
      if (repeats) return { ...block, label: zone };
      if (block.label !== 'table' && (samePlace.get(placeKey(block))?.size ?? 0) >= needed) return { ...block, label: (block.bbox.t + block.bbox.b) / 2 > page.height / 2 ? 'page_header' : 'page_footer' };
      return block;
    }),
  }));
}

/** The same text in the same box, to a few points: a slide master's or page template's line. */
const PLACE_GRID = 4;
const placeKey = (block: Block) => `${[block.bbox.l, block.bbox.t, block.bbox.r].map((v) => Math.round(v / PLACE_GRID)).join(',')}:${block.text.replace(/\s+/g, ' ').trim()}`;
/** Outside the head and foot zones a line is furniture only in documents of at least this many pages. */
const SAME_PLACE_MIN_PAGES = 3;

/**
 * spec (issue 41): "lines that repeat at the same place across pages (page headers, footers, page
 * numbers, running titles, slide footers)" — wherever the template puts them (a slide deck's site
 * address and author line in its side band): the same text, in the same box, on half the pages or
 * more, in a document of three pages or more.
 */
function samePlaceRepeats(pages: Page[]): Map<string, Set<number>> {
  const at = new Map<string, Set<number>>();
  if (pages.length < SAME_PLACE_MIN_PAGES) return at;
  for (const page of pages) {
    for (const block of page.blocks) {
      if (block.label === 'table' || block.text.trim() === '') continue;
      const key = placeKey(block);
      at.set(key, (at.get(key) ?? new Set()).add(page.pageNo));
    }
  }
  return at;
}

/** "3", "iv", "Page 3", "3 of 18", "- 3 -", "7-45" (chapter 7, page 45), "A-3": a page number alone in its block. */
const PAGE_NUMBER = /^(?:page\s+)?[-–—]?\s*(?:\d{1,4}|[ivxlcdm]{1,7}|[\dA-Z]{1,3}[-–.]\d{1,4})\s*[-–—]?(?:\s*(?:of|\/)\s*\d{1,4})?$/iu;

/** Two blocks on one band of the page: their bottoms within half a line of each other. */
const sameBand = (a: Block, b: Block) => Math.abs(a.bbox.b - b.bbox.b) <= 0.5 * Math.max(a.fontSize, b.fontSize);
/** A running head or foot beside a page number is one line, no larger than this many points over the page number. */
const RUNNING_LINE = 1.6;

/**
 * spec (issue 17): "page numbers ('1') … go to furniture, never the body". A page number is a
 * block with nothing above it (or below it) but what shares its band, in the top (or bottom)
 * quarter of its page, wherever the document's margins put it. spec (issue 25): "running heads …
 * recognised … on a single page by position": the one-line blocks on the page number's band (a
 * paper's running title beside its page number) are furniture with it.
 */
export function markPageNumbers(pages: Page[]): Page[] {
  return pages.map((page) => {
    const flow = page.blocks.filter((b) => b.label !== 'page_header' && b.label !== 'page_footer' && !b.inPicture);
    const edge = (block: Block, side: 'top' | 'bottom') =>
      flow.every((other) => other === block || sameBand(other, block) || (side === 'top' ? other.bbox.t <= block.bbox.b + 1 : other.bbox.b >= block.bbox.t - 1));
    const labels = new Map<Block, 'page_header' | 'page_footer'>();
    // A page number or running line the repeats already found furniture still takes the rest of its
    // band with it — a running head's changing chapter title beside its constant "User Guide" (spec,
    // issue 41: "No running head, footer or page number as a heading anywhere in the corpus").
    const known = page.blocks.filter((b) => (b.label === 'page_header' || b.label === 'page_footer') && furnitureZone(b, page) !== undefined);
    for (const block of [...known, ...flow]) {
      if (!known.includes(block) && !PAGE_NUMBER.test(block.text.trim())) continue;
      const label = known.includes(block) ? (block.label as 'page_header' | 'page_footer') : block.bbox.t < page.height / 4 && edge(block, 'bottom') ? 'page_footer' : block.bbox.b > (page.height * 3) / 4 && edge(block, 'top') ? 'page_header' : undefined;
      if (!label) continue;
      labels.set(block, label);
      for (const other of flow) {
        const oneLine = other.bbox.t - other.bbox.b <= RUNNING_LINE * Math.max(other.fontSize, block.fontSize);
        if (other !== block && sameBand(other, block) && oneLine && other.label === 'text') labels.set(other, label);
      }
    }
    for (const block of runningLines(page, flow, labels)) labels.set(block, 'page_footer');
    return { ...page, blocks: page.blocks.map((block) => (labels.has(block) ? { ...block, label: labels.get(block) ?? block.label } : block)) };
  });
}

/** A footnote starts with its mark: a number or a symbol. */
const FOOTNOTE_MARK = /^[\d*†‡§¶¹²³⁴⁵⁶⁷⁸⁹⁰]/u;
/** "16 FY 2011 Annual Report", "Annual Report 47", "Appendix 5 Page 8 of 11": a foot line holding its page number. */
const NUMBERED_FOOT = /^\d{1,4}\s+\p{L}|\p{L}\s+\d{1,4}$|\bpage\s+\d{1,4}(?:\s+of\s+\d{1,4})?\b/iu;

/**
 * spec (issue 41): "No running head, footer or page number as a heading anywhere in the corpus" — on a
 * single page, where nothing repeats: the one-line blocks set wholly inside the foot zone, below all of
 * the page's body, are its running foot when the page's number is down there too ("Prospective New
 * Awardee Guide … June 2011" over "26"), or when the line holds the page number itself ("46 FY 2011
 * Annual Report"). A line starting with a footnote mark is a footnote, and a caption stays a caption.
 */
function runningLines(page: Page, flow: Block[], labels: Map<Block, FurnitureLabel>): Block[] {
  const zone = page.height * FURNITURE_ZONE;
  const numberBelow = [...labels].some(([b, label]) => label === 'page_footer' && PAGE_NUMBER.test(b.text.trim())) || page.blocks.some((b) => b.label === 'page_footer' && PAGE_NUMBER.test(b.text.trim()));
  const bodyAbove = (block: Block) => flow.every((other) => other === block || other.bbox.t <= zone || other.bbox.b >= block.bbox.t - 1);
  return flow.filter((block) => {
    if (labels.has(block) || block.label !== 'text' || block.bbox.t > zone || block.bbox.t - block.bbox.b > RUNNING_LINE * block.fontSize) return false;
    const text = block.text.trim();
    if (FOOTNOTE_MARK.test(text) && !NUMBERED_FOOT.test(text)) return false;
    if (isCaptionText(text)) return false;
    return bodyAbove(block) && (numberBelow || NUMBERED_FOOT.test(text));
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
    // spec (issue 41): smaller than the body of its own page — a brochure page bound in 7-pt type has
    // its paragraphs and lists in that size, and its footnotes (if any) below it.
    const size = Math.min(body.size, pageBodySize(page) ?? body.size);
    const bodyBlocks = page.blocks.filter((b) => (b.label === 'text' || b.label === 'list_item' || b.label === 'table') && b.fontSize >= size * 0.95);
    const lowestBody = Math.min(...bodyBlocks.map((b) => b.bbox.b));
    const blocks = page.blocks.map((block) => {
      const small = (block.label === 'text' || block.label === 'list_item') && !block.inPicture && block.fontSize <= size * 0.9;
      return small && block.bbox.t <= lowestBody + 1 && block.bbox.t < page.height / 2 ? { ...block, label: 'footnote' as const } : block;
    });
    return { ...page, blocks };
  });
}
