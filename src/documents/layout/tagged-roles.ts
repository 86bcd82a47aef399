// The document-wide roles of blocks that came from a tagged PDF's structure tree: the title when
// the tags call it a plain paragraph, and heading levels as Markdown depths below that title.
import type { Block, Page } from '../document.ts';
import type { BodyStyle } from './headings.ts';

/** A title is set at least this much larger than the body… */
const TITLE_SIZE = 1.4;
/** …and is short. */
const MAX_TITLE_CHARS = 200;

/**
 * The document's title on a tagged first page whose tags say only "P" for it (PDF/UA allows Title
 * or H1, but many generators write P): the largest short tagged paragraph on page 1, set well
 * above the body size.
 */
export function taggedTitle(page: Page | undefined, body: BodyStyle): Block | undefined {
  const candidates = (page?.blocks ?? []).filter((b) => b.tag === 'P' && (b.label === 'text' || b.label === 'section_header') && !b.inPicture && b.fontSize >= TITLE_SIZE * body.size && b.text.length <= MAX_TITLE_CHARS && !isLetterhead(b.text));
  return candidates.reduce<Block | undefined>((big, b) => (!big || b.fontSize > big.fontSize ? b : big), undefined);
}

/** A web or mail address, or a phone or fax number: what a letterhead or address block holds and a title never does. */
const CONTACT = /\b(?:www\.|https?:\/\/)|[\w.+-]+@[\w-]+\.\w|\b(?:phone|tel|fax|telefon)\b\.?\s*:?\s*\+?\d/iu;

/** spec (issue 41): "a letterhead or address block is never a heading" (the tagged invoice's company name, address, phone and web). */
export const isLetterhead = (text: string) => CONTACT.test(text);

/** The page with only its untagged blocks: a tagged heading is the title only when tagged Title or the document's one H1. */
export const untagged = (page: Page | undefined): Page | undefined => page && { ...page, blocks: page.blocks.filter((b) => b.tag === undefined) };

/**
 * Levels are Markdown depths and the title is 1 (roles.ts): when the title is not itself one of
 * the tagged headings, the tags' H1 is the first level under it (2), H2 the next, and so on.
 */
export function shiftTaggedLevels(pages: Page[], title: Block): void {
  if (title.tag !== undefined && /^(?:H1?|Title)$/.test(title.tag)) return;
  for (const page of pages) {
    for (const block of page.blocks) {
      if (block !== title && block.tag !== undefined && block.label === 'section_header' && block.level !== undefined) block.level = Math.min(6, block.level + 1);
    }
  }
}
