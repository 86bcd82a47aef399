// Stage 5 — roles across the whole document: furniture, headings and levels, the title, captions.
import type { Block, ParsedDocument } from '../document.ts';
import { attachCaptions } from './captions.ts';
import { markContinuations } from './continuation.ts';
import { markFootnotes, markFurniture, markPageNumbers } from './furniture.ts';
import { demoteSubtitles, joinWrappedHeadings } from './heading-groups.ts';
import { asHeading, bodyStyle, isHeading, levelsBySize, sectionNumber } from './headings.ts';
import { demoteCoverMatter, demoteMasthead, demoteTitleMatter, inUpperHalf, largestOnFirstPage } from './title-page.ts';
import { SAME_SIZE } from './geometry.ts';
import { shiftTaggedLevels, taggedTitle, untagged } from './tagged-roles.ts';

/**
 * The labels only the whole document can decide: repeated page headers and footers; headings with
 * levels; and `title` for the document's one largest heading when it is on page 1 and set larger
 * than the body text.
 */
/** Tags that say little: a generator's default (P), Word's numbered heading (LI), a form's layout cell (TD, TH). */
const WEAK_TAGS: ReadonlySet<string> = new Set(['P', 'LI', 'TD', 'TH']);

export function labelDocument(doc: ParsedDocument): ParsedDocument {
  const pages = markFootnotes(markPageNumbers(markFurniture(doc.pages)));
  const body = bodyStyle(pages);
  if (!body) return { ...doc, pages: pages.map((page) => markContinuations(attachCaptions(page))) };
  // A block from a tagged page's structure tree keeps the role and level its tag gave it (layout/tagged.ts).
  // P is every generator's default tag and Word tags a numbered heading as LI, so in a document with no
  // heading tags a block tagged P or LI may still be found a heading; H1–H6, Table, Caption and the
  // rest are the author's word.
  // Where the author tagged headings (H, H1–H6) anywhere, the other tags are taken at their word too.
  const authored = pages.some((p) => p.blocks.some((b) => b.tag !== undefined && /^H[1-6]?$/.test(b.tag)));
  // spec (issue 41): "where the tags are trusted, heading levels and titles come from them and nothing untagged is
  // promoted to a heading" — in a document whose author tagged headings, a page laid out from its tags, or one
  // whose tree tagged all its text P, has no headings but the tagged ones.
  const tagsSpeak = (page: ParsedDocument['pages'][number]) => authored && page.tags !== undefined;
  const guessed = (b: Block, page: ParsedDocument['pages'][number]) => !tagsSpeak(page) && (b.tag === undefined || (!authored && WEAK_TAGS.has(b.tag))) && isHeading(b, body, page);
  const headingSizes = pages.flatMap((p) => p.blocks.filter((b) => guessed(b, p) && sectionNumber(b) === undefined).map((b) => b.fontSize));
  const numberedSizes = new Map<number, number>();
  for (const page of pages) {
    for (const block of page.blocks) {
      const depth = guessed(block, page) ? sectionNumber(block) : undefined;
      if (depth !== undefined) numberedSizes.set(Math.round(block.fontSize * 2) / 2, depth);
    }
  }
  const bySize = levelsBySize(headingSizes);
  // spec (issue 17): "numbered headings such as '2.1 …' get their depth from the number"; an
  // unnumbered heading set in the size of a numbered level takes that level.
  // Levels are Markdown depths: the title is 1, so a numbered section "2.1" is 3.
  const numbered = (depth: number | undefined) => (depth === undefined ? undefined : Math.min(6, depth + 1));
  const level = (block: Block) => numbered(sectionNumber(block) ?? numberedSizes.get(Math.round(block.fontSize * 2) / 2)) ?? bySize(block.fontSize);
  const labelled = pages.map((page) =>
    demoteSubtitles(joinWrappedHeadings({
      ...page,
      blocks: page.blocks.map((b) => (guessed(b, page) ? asHeading(b, level(b)) : b)),
    })),
  );
  const topLevel = labelled.flatMap((page) => page.blocks.filter((b) => b.level === 1).map((block) => ({ page, block })));
  const [only] = topLevel;
  // A bold line at the body size is a heading, but too weak a signal for the document's title.
  if (topLevel.length === 1 && only?.page.pageNo === 1 && only.block.fontSize >= body.size * SAME_SIZE && inUpperHalf(only.block, only.page)) only.block.label = 'title';
  const title = labelled[0]?.blocks.find((b) => b.label === 'title') ?? largestOnFirstPage(untagged(labelled[0]), body) ?? taggedTitle(labelled[0], body);
  if (title) {
    title.label = 'title';
    title.level = 1;
    if (labelled[0]) {
      demoteTitleMatter(labelled[0], title);
      demoteCoverMatter(labelled[0], title, body);
      demoteMasthead(labelled[0], title);
    }
    shiftTaggedLevels(labelled, title);
  }
  return { ...doc, pages: labelled.map((page) => markContinuations(attachCaptions(page))) };
}
