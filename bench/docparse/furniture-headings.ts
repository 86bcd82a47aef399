// Issue 41's target "No running head, footer or page number as a heading anywhere in the corpus",
// checked on every document's Markdown: a heading whose text (digits as placeholders, so "Chapter 3"
// and "Chapter 4" are one) comes back on two pages or more of a document, or a heading that is only a
// page number. Running heads and page numbers left in the body as headings show up here; a document's
// title restated on a later page or a chapter title page and its first page do too, so the list is
// for a reader to judge (the corpus notes say which are which), not a pass or fail.
import { markdownPages } from './score.ts';

/** "3", "iv", "Page 3", "3 of 18", "- 3 -": a page number alone (as layout/furniture.ts). */
const PAGE_NUMBER = /^(?:page\s+)?[-–—]?\s*(?:\d{1,3}|[ivxlcdm]{1,7})\s*[-–—]?(?:\s*(?:of|\/)\s*\d{1,4})?$/iu;

export type FurnitureHeading = { text: string; pages: number[]; why: 'repeated' | 'page number' };

export function furnitureHeadings(markdown: string): FurnitureHeading[] {
  const seen = new Map<string, { text: string; pages: Set<number> }>();
  const found: FurnitureHeading[] = [];
  for (const [page, md] of markdownPages(markdown)) {
    for (const match of md.matchAll(/^#{1,6}\s+(.*)$/gm)) {
      const text = (match[1] ?? '').replace(/\s+/g, ' ').trim();
      if (PAGE_NUMBER.test(text)) found.push({ text, pages: [page], why: 'page number' });
      const key = text.toLowerCase().replace(/\d+/g, '#');
      const entry = seen.get(key) ?? { text, pages: new Set<number>() };
      entry.pages.add(page);
      seen.set(key, entry);
    }
  }
  for (const { text, pages } of seen.values()) if (pages.size >= 2) found.push({ text, pages: [...pages].sort((a, b) => a - b), why: 'repeated' });
  return found;
}
