// Captions attached to the table or picture they describe.
import type { BoundingBox, Page } from '../document.ts';

/** "Table 2:", "Figure 3.", "Fig. 1", "表 1", "图 2": how captions start. */
// The label's number ("7-26", "2.1", "IV", "3b", an appendix's "A-1" or a supplement's "S2") is followed by punctuation, a capitalised word or
// nothing: "Table 2-2 Comparison of …" is a caption, "Table 2-2 shows a comparison …" a sentence.
// (No i flag: with it \p{Lu} would match any letter.)
const CAPTION = /^(?:(?:[Tt]able|TABLE|[Tt]ab\.|[Ff]igure|FIGURE|[Ff]ig\.|[Ll]isting|[Cc]hart|[Ee]xhibit)\s*(?:(?:[A-Z][-.–]?)?[\dIVX]+(?:[-.–]\d+)*[a-z]?)(?:\s*[.:](?:\s|$)|\s*[—–]|\s+-\s|\s+\p{Lu}|\s*$)|[表图圖]\s*\d+)/u;

/** Whether a text starts the way captions do ("Figure 1.", "Table 2:", "图 3"). */
export const isCaptionText = (text: string) => CAPTION.test(text.trim());

/** spec (issue 17): "caption (attached to its table or picture)" — the nearest one above or below. */
export function attachCaptions(page: Page): Page {
  const blocks = page.blocks.map((block) => ({ ...block }));
  const pictures = (page.pictures ?? []).map((picture) => ({ ...picture }));
  for (const block of blocks) {
    // A caption set small below a figure at the foot of a page was taken for a footnote; its words say otherwise.
    if ((block.label !== 'text' && block.label !== 'section_header' && block.label !== 'footnote') || !isCaptionText(block.text)) continue;
    const distance = (box: BoundingBox) => (box.t < block.bbox.b ? block.bbox.b - box.t : box.b > block.bbox.t ? box.b - block.bbox.t : 0);
    const targets = [
      ...blocks.map((b, index) => ({ kind: 'table' as const, index, box: b.bbox, ok: b.label === 'table' })),
      ...pictures.map((p, index) => ({ kind: 'picture' as const, index, box: p.bbox, ok: true })),
    ].filter((t) => t.ok && t.box.l < block.bbox.r && block.bbox.l < t.box.r && distance(t.box) <= 3 * block.fontSize);
    const nearest = targets.sort((a, b) => distance(a.box) - distance(b.box))[0];
    if (!nearest) continue;
    block.label = 'caption';
    delete block.level;
    block.captionOf = { kind: nearest.kind, index: nearest.index };
    const picture = nearest.kind === 'picture' ? pictures[nearest.index] : undefined;
    if (picture) picture.caption = block.text;
  }
  return page.pictures ? { ...page, blocks, pictures } : { ...page, blocks };
}
