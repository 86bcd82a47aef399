// Headings that belong together: one heading wrapped onto two lines of two sizes, a heading and its subtitle.
import type { Block, Page } from '../document.ts';
import { SAME_SIZE, similarSize, union } from './geometry.ts';
import { MAX_HEADING_CHARS, SENTENCE_END, sectionNumber } from './headings.ts';

/**
 * spec (issue 41): a heading wrapped onto a second line set a size smaller (a cover's "Row and Column
 * Access Control" over "Support in IBM DB2 for i") is one heading: two heading lines one right under
 * the other, starting at the same left edge, in the same weight and colour and a similar size, with
 * no more than a line's gap between them and the first not ending like a sentence.
 */
export function joinWrappedHeadings(page: Page): Page {
  const blocks: Block[] = [];
  for (const block of page.blocks) {
    const above = blocks.at(-1);
    if (above !== undefined && wrapsOnto(above, block)) {
      blocks[blocks.length - 1] = {
        ...above,
        text: `${above.text} ${block.text}`,
        bbox: union([above.bbox, block.bbox]),
        fontSize: Math.max(above.fontSize, block.fontSize),
        level: Math.min(above.level ?? 6, block.level ?? 6),
        lineBreaks: [above.text.length + 1],
        lineHeight: Math.round((above.bbox.b - block.bbox.b) * 100) / 100,
      };
    } else blocks.push(block);
  }
  return blocks.length === page.blocks.length ? page : { ...page, blocks };
}

function wrapsOnto(above: Block, below: Block): boolean {
  const heading = (b: Block) => b.label === 'section_header' && b.tag === undefined && b.lineBreaks === undefined && b.spans === undefined && b.marker === undefined;
  if (!heading(above) || !heading(below) || above.bold !== below.bold || above.color !== below.color || !similarSize(above.fontSize, below.fontSize)) return false;
  const size = Math.max(above.fontSize, below.fontSize);
  const gap = above.bbox.b - below.bbox.t;
  return Math.abs(above.bbox.l - below.bbox.l) <= 0.25 * size && gap >= -0.2 * size && gap <= 0.5 * size && !SENTENCE_END.test(above.text) && sectionNumber(below) === undefined && above.text.length + below.text.length <= MAX_HEADING_CHARS;
}

/**
 * spec (issue 41): a heading's subtitle — the line right under it (no more than half a line between),
 * set smaller, in italic and not bold ("DB2 for i Center of Excellence" over "Expert help to achieve your
 * business requirements") — belongs to the heading and opens no section of its own.
 */
export function demoteSubtitles(page: Page): Page {
  let changed = false;
  const blocks = page.blocks.map((block, i) => {
    const above = page.blocks[i - 1];
    if (above === undefined || block.label !== 'section_header' || block.tag !== undefined || (above.label !== 'section_header' && above.label !== 'title')) return block;
    const gap = above.bbox.b - block.bbox.t;
    if (!(block.italic === true && !block.bold && above.italic !== true && block.fontSize < above.fontSize / SAME_SIZE && gap >= -0.2 * block.fontSize && gap <= 0.5 * block.fontSize)) return block;
    changed = true;
    const { level: _level, ...rest } = block;
    return { ...rest, label: 'text' as const };
  });
  return changed ? { ...page, blocks } : page;
}
