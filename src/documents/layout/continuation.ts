// A paragraph that runs from the bottom of one column to the top of the next is one paragraph
// (spec, issue 25: "a paragraph that continues from the bottom of one column to the top of the next
// is one paragraph"). Its two pieces stay two blocks — each has its own box, so a translation is
// set in each column and never across the gutter — and the second is marked `continues`, which the
// Markdown joins into the first.
import type { Block, Page } from '../document.ts';
import { similarSize } from './geometry.ts';

/** Where a paragraph has ended: closing punctuation, possibly inside quotes or brackets. */
const ENDED = /[.!?:;。！？：；…][\s"'”’»)\]）」』]*$/u;
/** How a continuation starts: a lowercase letter, a digit or punctuation of running text, or CJK. */
const CONTINUING = /^[\p{Ll}\d,;(\[“‘"'\p{Script=Han}\p{Script=Hangul}\p{Script=Hiragana}\p{Script=Katakana}]/u;
/** What may lie between the two pieces in reading order: a figure's caption, a footnote, furniture. */
const ASIDE = new Set<Block['label']>(['caption', 'footnote', 'page_header', 'page_footer', 'picture']);

/** How far above a block's bottom (em) the top of its last line lies, with slack: a block whose top is no higher stands on that line. */
const LAST_LINE = 1.2;

/**
 * Whether `next` continues `piece` in the next column: to its right and higher on the page, same
 * style, the sentence open. Text to the right on the piece's own last line is not higher: it is a
 * label set on the same line (issue 41: "issue-67-zh p. 3: a heading joined with a far-right label
 * on the same baseline"), never the top of the next column.
 */
export function continuesInNextColumn(piece: Block, next: Block): boolean {
  if (piece.label !== 'text' || next.label !== 'text') return false;
  if (next.bbox.l < piece.bbox.r - 1 || next.bbox.t <= piece.bbox.b + LAST_LINE * piece.fontSize) return false;
  if (!similarSize(piece.fontSize, next.fontSize) || piece.bold !== next.bold || Boolean(piece.italic) !== Boolean(next.italic)) return false;
  return !ENDED.test(piece.text) && CONTINUING.test(next.text);
}

/** The page with each block that continues a paragraph of the previous column marked. */
export function markContinuations(page: Page): Page {
  let open: Block | undefined;
  const blocks = page.blocks.map((block) => {
    if (block.inPicture || ASIDE.has(block.label)) return block;
    const marked = open && continuesInNextColumn(open, block) ? { ...block, continues: true } : block;
    open = block;
    return marked;
  });
  return { ...page, blocks };
}
