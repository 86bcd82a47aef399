// What every export writes of a page, in reading order: the body's blocks (page headers and footers
// only where the document still holds them: documents/document.ts withoutFurniture takes them out
// before every export unless they are kept), consecutive list items as one list, a paragraph continued from the previous column
// joined to the piece it continues, and each picture before the first block that starts below its
// top. markdown.ts, html.ts and text.ts each render these parts; none decides again what is body.
import { FURNITURE, type Block, type Page, type Picture } from '../document.ts';
import { joinLines } from '../layout/geometry.ts';

export type BodyPart =
  /** A block that is not a list item; `text` is its text with any continuation pieces joined; `index` its place in `page.blocks`. */
  | { kind: 'block'; block: Block; index: number; text: string }
  /** Consecutive list items (the model keeps no nesting, so a list is flat). */
  | { kind: 'list'; items: Block[] }
  /** A picture with a result file; its caption (if any) is `picture.caption`, and the caption block is not repeated as a part. */
  | { kind: 'picture'; picture: Picture };

/** The page's body in reading order (see the file's head). */
export function pageBody(page: Page): BodyPart[] {
  const parts: BodyPart[] = [];
  let list: Block[] = [];
  const endList = () => {
    if (list.length > 0) parts.push({ kind: 'list', items: list });
    list = [];
  };
  // Pictures go before the first block that starts below their top; a picture's caption goes with it.
  const pictures = [...(page.pictures ?? [])].filter((p) => p.file !== '').sort((a, b) => b.bbox.t - a.bbox.t);
  const captioned = new Set(page.blocks.filter((b) => b.captionOf?.kind === 'picture'));
  let paragraph: Extract<BodyPart, { kind: 'block' }> | undefined;
  for (const [index, block] of page.blocks.entries()) {
    while (pictures[0] && pictures[0].bbox.t >= block.bbox.t && !FURNITURE.has(block.label)) {
      endList();
      parts.push({ kind: 'picture', picture: pictures.shift() as Picture });
    }
    // Page headers and footers reach here only when kept (`--furniture keep`): the document goes through
    // withoutFurniture (documents/document.ts) before every export otherwise. Kept, each is a line as printed.
    if (FURNITURE.has(block.label)) {
      endList();
      parts.push({ kind: 'block', block, index, text: block.text });
      paragraph = undefined;
      continue;
    }
    if (captioned.has(block) || block.inPicture) continue; // a picture's labels are part of its image
    if (block.label === 'list_item') {
      list.push(block);
      continue;
    }
    endList();
    // A paragraph continued from the previous column is joined to the piece it continues.
    if (block.continues && paragraph !== undefined) {
      paragraph.text = joinLines(paragraph.text, block.text);
      continue;
    }
    const part = { kind: 'block' as const, block, index, text: block.text };
    parts.push(part);
    // A caption or footnote between the two pieces (the figure at the foot of the first column) stays where it is.
    if (block.label === 'text') paragraph = part;
    else if (block.label !== 'caption' && block.label !== 'footnote') paragraph = undefined;
  }
  endList();
  parts.push(...pictures.map((picture) => ({ kind: 'picture' as const, picture })));
  return parts;
}

/** The numbers of a numbered list item's marker ("3.", "(3)", "3)"), else undefined. */
export function markerNumber(marker: string | undefined): number | undefined {
  const number = /^\(?(\d+)[.)]$/.exec(marker ?? '');
  return number ? Number(number[1]) : undefined;
}

/** A marker with a letter ("a)", "(iv)", "B.") — kept as printed by every export. */
export const isLettered = (marker: string | undefined) => marker !== undefined && /[A-Za-z]/.test(marker);
