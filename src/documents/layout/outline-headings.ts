// Heading levels from the document outline (bookmarks): an entry names a heading and the page it is
// on, and its depth in the outline is the heading's depth in the document. Each entry is matched
// to a block on its page by text — tolerant of case, spacing, punctuation and the section number
// ("2.1", "Chapter 3", "IV.") that one side may leave out — and, where several blocks match, the one
// nearest the y the bookmark scrolls to. A block whose level came from its tags keeps it (issue 31,
// item 3: "the outline's entries … give heading levels where the tags don't"; issue 32, item 4).
import type { Block, ParsedDocument } from '../document.ts';
import { FURNITURE } from '../document.ts';
import type { OutlineEntry } from './structure-tree.ts';

/** "Chapter ", "Part ", "Anhang ": a word that may introduce a heading's number. */
const NUMBER_WORD = /^(?:chapter|section|part|appendix|kapitel|abschnitt|teil|anhang|chapitre|partie|annexe)\s+(?:[\dA-Z]{1,4}|[IVXLC]{1,6})(?:[.\-–]\d{1,3})*[.:)]?\s*/iu;
/** "2.1.3 ", "IV. ", "iv) ", "B. ": a leading number one side may print and the other leave out. */
const NUMBER = /^(?:\d{1,3}(?:[.\-–]\d{1,3})*\.?|[IVXLC]{1,6}\.?|[ivxlc]{1,6}[.)]|[A-Z][.)])\s+/u;

/** A heading's text as compared: NFKC, lower case, letters and digits only, the leading number left out. */
export function headingKey(text: string): string {
  const plain = text.normalize('NFKC').replace(/\s+/gu, ' ').trim();
  const numbered = NUMBER_WORD.test(plain) ? plain.replace(NUMBER_WORD, '') : plain.replace(NUMBER, '');
  return numbered.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '');
}

/** No heading runs longer than this many characters past its bookmark's title (a run-in heading with its sentence is not one). */
const MAX_EXTRA_CHARS = 12;

const candidate = (block: Block) => !FURNITURE.has(block.label) && !block.inPicture && (block.label === 'text' || block.label === 'section_header' || block.label === 'list_item' || block.label === 'title');

/**
 * The document with its outline's entries applied: each matched block becomes a section header
 * at the entry's depth — one level below the title when the title is not itself a bookmark.
 */
export function headingsFromOutline(doc: ParsedDocument, outline: OutlineEntry[]): ParsedDocument {
  if (outline.length === 0) return doc;
  const pages = new Map(doc.pages.map((page) => [page.pageNo, page]));
  const matches: Array<{ block: Block; depth: number }> = [];
  const taken = new Set<Block>();
  for (const entry of outline) {
    const key = headingKey(entry.title);
    if (key === '') continue;
    const page = pages.get(entry.pageNo);
    const found = (page?.blocks ?? []).filter((block) => {
      if (taken.has(block) || !candidate(block)) return false;
      const text = headingKey(block.text);
      return text === key || (text.length <= key.length + MAX_EXTRA_CHARS && key.length >= 4 && (text.startsWith(key) || key.startsWith(text)) && text.length * 2 >= key.length);
    });
    const best = entry.y === undefined ? found[0] : found.sort((a, b) => Math.abs(a.bbox.t - (entry.y ?? 0)) - Math.abs(b.bbox.t - (entry.y ?? 0)))[0];
    if (!best) continue;
    taken.add(best);
    matches.push({ block: best, depth: entry.depth });
  }
  if (matches.length === 0) return doc;
  const title = doc.pages[0]?.blocks.find((b) => b.label === 'title');
  const shift = title && !taken.has(title) ? 1 : 0;
  const levels = new Map(matches.map(({ block, depth }) => [block, Math.min(6, depth + shift)]));
  return {
    ...doc,
    pages: doc.pages.map((page) => ({
      ...page,
      blocks: page.blocks.map((block) => {
        const level = levels.get(block);
        if (level === undefined || block.label === 'title') return block;
        // A level the structure tree gave is the author's own; the outline only fills in where tags say nothing.
        if (block.tag !== undefined && block.label === 'section_header' && block.level !== undefined) return block;
        const { marker, markerColor: _colour, markerBox: _box, ...rest } = block;
        return { ...rest, label: 'section_header' as const, text: marker === undefined ? block.text : `${marker} ${block.text}`, level };
      }),
    })),
  };
}
