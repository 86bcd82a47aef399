// The title page's roles: which heading is the title, and what around it is title matter, masthead or
// a cover's tag lines rather than headings (roles.ts calls these once the headings are found).
import type { Block, Page } from '../document.ts';
import { SAME_SIZE, union } from './geometry.ts';
import { sectionNumber, type BodyStyle } from './headings.ts';

/**
 * spec (issue 41): a title stands in the top half of its page — a larger word below it (a
 * publisher's series name set as a logo at the foot of a cover, "Redpaper") is not the title.
 */
export const inUpperHalf = (block: Block, page: Page) => block.bbox.t > page.height / 2;

export function largestOnFirstPage(page: Page | undefined, body: BodyStyle): Block | undefined {
  const candidates = (page?.blocks ?? []).filter((b) => b.label === 'section_header' && b.fontSize >= body.size * 1.4 && inUpperHalf(b, page as Page));
  return candidates.reduce<Block | undefined>((big, b) => (!big || b.fontSize > big.fontSize ? b : big), undefined);
}

/**
 * Below the title and before the first real section, the centred author, address and date lines
 * of a title page are set larger than the body but are not headings: a bold, numbered or
 * left-aligned heading ends the title matter.
 */
export function demoteTitleMatter(page: Page, title: Block): void {
  // Centred on the text area (margins need not be equal), not necessarily on the paper.
  const area = union(page.blocks.map((b) => b.bbox));
  const middle = (area.l + area.r) / 2;
  // …or on the title itself, where the title page is set off-centre (a binding offset).
  const centre = (b: Block) => (b.bbox.l + b.bbox.r) / 2;
  const indented = (b: Block) => b.bbox.l > area.l + page.width * 0.02;
  const onAxis = (b: Block) => Math.abs(centre(b) - middle) < page.width * 0.04 || (indented(b) && Math.abs(centre(b) - centre(title)) < page.width * 0.02);
  const centred = (b: Block) => onAxis(b) && b.bbox.r - b.bbox.l < (area.r - area.l) * 0.9;
  for (const block of page.blocks) {
    if (block === title || block.bbox.t > title.bbox.b + 1) continue;
    if (block.label !== 'section_header') continue;
    // A title set in bold makes bold title matter (author, affiliation) possible; under a regular
    // title a bold centred line ("Abstract") is the first heading.
    if ((block.bold && !title.bold) || sectionNumber(block) !== undefined || !centred(block)) break;
    block.label = 'text';
    delete block.level;
  }
}

/**
 * spec (issue 41): above the title on page 1, a line set smaller than the title is its masthead — a
 * series name, an issue number, a journal's name ("이슈와 논점", "제1695호", "Working Papers on
 * Information Systems") — not a heading: the document's headings start at its title.
 */
export function demoteMasthead(page: Page, title: Block): void {
  for (const block of page.blocks) {
    if (block === title || block.label !== 'section_header' || block.tag !== undefined || block.bbox.b < title.bbox.t - 1 || block.fontSize >= title.fontSize) continue;
    block.label = 'text';
    delete block.level;
  }
}

/**
 * spec (issue 41): a cover — a first page with no line at the body's size, everything on it set
 * larger (or in pictures) — has one heading, its title: its tag lines, author names and series
 * name are title matter.
 */
export function demoteCoverMatter(page: Page, title: Block, body: BodyStyle): void {
  const bodyText = page.blocks.some((b) => (b.label === 'text' || b.label === 'list_item') && !b.inPicture && b.fontSize < body.size * SAME_SIZE);
  if (bodyText) return;
  for (const block of page.blocks) {
    if (block === title || block.label !== 'section_header' || block.tag !== undefined) continue;
    block.label = 'text';
    delete block.level;
  }
}
