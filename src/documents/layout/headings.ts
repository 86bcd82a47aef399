// Roles by style: the body text's style, headings and their levels (the title page's rules are in title-page.ts).
import type { Block, Page } from '../document.ts';
import { numberedHeadingLine } from './blocks.ts';
import { isCaptionText } from './captions.ts';
import { dominant, LINE_PITCH, SAME_SIZE, similarSize } from './geometry.ts';
import { isTurnedBlock } from './turned.ts';

/** Headings are short: a larger-font block of more than this many characters is a lead paragraph. */
export const MAX_HEADING_CHARS = 150;
const MAX_BOLD_HEADING_CHARS = 100;
const MAX_WRAPPED_BOLD_HEADING_CHARS = 60;

/**
 * Table cells count towards the body's size when they hold this many times the text of the flow
 * (spec, issue 41: an office document of tables under headings has its body in the cells, and its
 * headings are what is set larger than them).
 */
const TABLE_BODY_SHARE = 2;
const TABLE_HALF_WEIGHT = 0.5;

/** `inCells`: the body is the tables' cells (they hold the most text), not the lines between them. */
export type BodyStyle = { size: number; bold: boolean; italic?: boolean; inCells?: boolean };

/** The body text's size: the most common font size weighted by characters; and whether body text is bold. */
export function bodyStyle(pages: Page[]): BodyStyle | undefined {
  const flow = pages.flatMap((p) => p.blocks).filter((b) => b.label === 'text' || b.label === 'list_item');
  // A document that is mostly tables (a statistics sheet under its title) has its body in the
  // cells: weighed with the few lines of text around them, the title would be the body.
  const tables = pages.flatMap((p) => p.blocks).filter((b) => b.label === 'table');
  // A table's characters are its cells' (not the separators its text is written with).
  const length = (b: Block) => (b.cells ? b.cells.reduce((n, row) => n + row.reduce((m, cell) => m + cell.length, 0), 0) : b.text.length);
  const chars = (blocks: Block[]) => blocks.reduce((n, b) => n + length(b), 0);
  // Otherwise the cells still count at half their weight: a few pages of tables under long
  // headings (a Writer sample, "Lists with different numIds in different cells") would have the
  // headings' size as the body's when only the lines between the tables were weighed.
  const tableWeight = chars(flow) * TABLE_BODY_SHARE < chars(tables) ? 1 : TABLE_HALF_WEIGHT;
  const weighed = [...flow.map((b): [Block, number] => [b, 1]), ...tables.map((b): [Block, number] => [b, tableWeight])];
  const size = dominant(weighed.map(([b, w]): [number, number] => [Math.round(b.fontSize * 2) / 2, w * length(b)]));
  if (size === undefined) return undefined;
  const atSize = flow.filter((b) => similarSize(b.fontSize, size) && b.fontSize < size * SAME_SIZE);
  const weigh = (flag: (b: Block) => boolean) => dominant(atSize.map((b): [boolean, number] => [flag(b), b.text.length])) ?? false;
  return { size, bold: weigh((b) => b.bold), italic: weigh((b) => b.italic === true), ...(tableWeight === 1 ? { inCells: true } : {}) };
}

/**
 * How headings are numbered. A multi-level number ("2.1") or a CJK chapter or section mark
 * ("第一章", "第3节", "一、", "제1장") says "heading" by itself; a single number ("(1)", "1", "A.",
 * "IV.") is also how list items start, so its line must be set apart from the body as well. A
 * heading's number is followed by its title, which does not end like a sentence.
 */
const SELF_EVIDENT_NUMBER = [
  /^\d{1,2}(?:\.\d{1,2}){1,4}\.?\s+[\p{Lu}\p{Lo}]/u,
  /^第[一二三四五六七八九十百千\d]+[章节節條条部篇回]/u,
  /^[一二三四五六七八九十]{1,3}[、.]/u,
  /^제\s?\d{1,2}\s?[장절조편]/u,
];
const LIST_LIKE_NUMBER = [/^\(\d{1,2}\)\s*[\p{Lu}\p{Lo}「『“"]/u, /^\d{1,2}\.?\s+[\p{Lu}\p{Lo}]/u, /^(?:[A-H]|[IVX]{1,4})\.\s+\p{Lu}/u];
export const SENTENCE_END = /[.,;:!?。，；：！？]$/u;
/** "Label: value": a label of a few words without digits (a numbered "Chapter 3: …" is a heading), a colon, then the value. */
const FIELD_WITH_VALUE = /^[\p{L}][\p{L}'’()/ -]{0,40}(?<!\s):\s+\S/u;
const isField = (block: Block) => block.marker === undefined && FIELD_WITH_VALUE.test(block.text);
/** A page with this many field lines or more is a form. */
const MIN_FORM_FIELDS = 3;
/**
 * spec (issue 41): "double-spaced CJK lines joined into their paragraphs" — a paragraph ending with an
 * ideographic full stop (or ！ ？) is a sentence, however large its type: no heading.
 */
const CJK_SENTENCE_END = /[。！？]$/u;
/** A numbered heading fits on a line: at most this many characters. */
const MAX_NUMBERED_HEADING_CHARS = 80;
/** An italic heading at the body size is a few words. */
const MAX_ITALIC_HEADING_WORDS = 8;

/** "Source: …", "Sources: …", "Note: …", "Notes: …": the note under a table or figure. */
const SOURCE_NOTE = /^(?:sources?|notes?)\s*:\s*\S/iu;

/** A web address or mail address and nothing else: "https://…", "www.x.org", "ibm.com/redbooks", "info@x.com". */
const WEB_ADDRESS = /^(?:(?:https?:\/\/|www\.)\S+|[\w-]+(?:\.[\w-]+)+\/\S*|[\w.+-]+@[\w-]+(?:\.[\w-]+)+)$/iu;

/** ". . . . 12" or "………": the leaders of a table of contents. */
const DOT_LEADERS = /(?:\.\s?){4,}|…{2,}/u;

const withMarker = (block: Block) => (block.marker === undefined ? block.text : `${block.marker} ${block.text}`);

/**
 * spec (issue 25): "Headings by more than size: numbering … weight and style against the body's,
 * isolation". A line standing alone that starts with a heading number is a heading when it is set
 * apart from the body by weight, a slightly larger size, or a multi-level number ("5.1"), or is a
 * CJK chapter or section mark; an italic line of a few capitalised words over an upright body is
 * a heading too ("Boots Self-Locking Nut").
 */
function isStyledHeading(block: Block, body: BodyStyle, lines: number): boolean {
  const text = withMarker(block);
  if (lines >= 1 || SENTENCE_END.test(text) || isBullet(block.marker)) return false;
  if (block.fontSize < body.size * 0.97) return false;
  if (text.length <= MAX_NUMBERED_HEADING_CHARS) {
    if (SELF_EVIDENT_NUMBER.some((pattern) => pattern.test(text))) return true;
    const setApart = (block.bold && !body.bold) || block.fontSize >= body.size * 1.04;
    if (setApart && LIST_LIKE_NUMBER.some((pattern) => pattern.test(text))) return true;
  }
  const words = text.split(/\s+/).length;
  return block.italic === true && !body.italic && /^[\p{Lu}\d]/u.test(text) && words >= 2 && words <= MAX_ITALIC_HEADING_WORDS;
}

/**
 * spec (issue 41): a heading is set apart from the body of its own page. A page whose text is set in
 * another size than the document's (a slide's 28-pt bullets, a brochure page bound into a manual in
 * 7-pt type) has its own body: the size that holds the most of its text, when three blocks or more
 * are set in it. Where the document's body is in its tables' cells, the cells stay the measure.
 */
const MIN_PAGE_BODY_BLOCKS = 3;
const pageBodies = new WeakMap<Page, number | undefined>();
export function pageBodySize(page: Page): number | undefined {
  if (pageBodies.has(page)) return pageBodies.get(page);
  const text = page.blocks.filter((b) => (b.label === 'text' || b.label === 'list_item') && !b.inPicture);
  const size = dominant(text.map((b): [number, number] => [Math.round(b.fontSize * 2) / 2, b.text.length]));
  const found = size !== undefined && text.filter((b) => Math.abs(b.fontSize - size) < 0.5).length >= MIN_PAGE_BODY_BLOCKS ? size : undefined;
  pageBodies.set(page, found);
  return found;
}

const bodySizeOn = (body: BodyStyle, page: Page | undefined) => (page === undefined || body.inCells ? undefined : pageBodySize(page)) ?? body.size;

const turnedPages = new WeakMap<Page, boolean>();
/**
 * A page whose text mostly runs up or down it (a slide printed sideways): its lines are counted across
 * the text — a turned line is as wide as one line is high, and as tall as its text is long.
 */
function isTurnedPage(page: Page): boolean {
  const known = turnedPages.get(page);
  if (known !== undefined) return known;
  const text = page.blocks.filter((b) => b.label === 'text' || b.label === 'list_item');
  const chars = (blocks: Block[]) => blocks.reduce((n, b) => n + b.text.length, 0);
  const turned = chars(text.filter(isTurnedBlock)) * 2 > chars(text);
  turnedPages.set(page, turned);
  return turned;
}

function inBulletedList(block: Block, page: Page): boolean {
  if (block.label !== 'list_item' || !isBullet(block.marker)) return false;
  const at = page.blocks.indexOf(block);
  const sameList = (other: Block | undefined) => other?.label === 'list_item' && other.marker === block.marker;
  return sameList(page.blocks[at - 1]) || sameList(page.blocks[at + 1]);
}

const isBullet = (marker: string | undefined) => marker !== undefined && !/[\dA-Za-z]/.test(marker);

/**
 * A heading is a short block in a font larger than the body's, or a single bold line when body
 * text is not bold (not ending like a sentence, and not a bulleted item that happens to be bold).
 */
export function isHeading(block: Block, body: BodyStyle, page?: Page): boolean {
  if ((block.label !== 'text' && block.label !== 'list_item' && !isDisplayLine(block, body)) || block.inPicture) return false;
  // spec (issue 17): "numbered headings such as '2.1 …'": on a scanned page, where OCR sees no
  // weight, a numbered heading line standing alone is a heading by its number.
  if (page?.textSource === 'ocr' && block.label === 'text' && numberedHeadingLine(block.text)) return true;
  // spec (issue 17): "no heading is ever one or two characters" — marks, logo letters, page numbers.
  if (block.text.replace(/[\s\p{P}\p{S}]/gu, '').length <= 2) return false;
  // A figure's or table's caption set in bold, and a table of contents' entry with its dot leaders, are no headings.
  if (isCaptionText(block.text) || DOT_LEADERS.test(block.text)) return false;
  // A table's or figure's note of its source ("Source: Eurostaf, 1998", "Note: …") is no heading.
  if (SOURCE_NOTE.test(block.text.trim())) return false;
  // spec (issue 41): a web or mail address alone ("ibm.com/redbooks", "www.pdfa.org") is a pointer, no heading.
  if (WEB_ADDRESS.test(block.text.trim())) return false;
  // spec (issue 41): text set up or down an upright page (an arXiv stamp in the margin) is a slug, never a heading.
  const turned = isTurnedBlock(block);
  if (turned && page !== undefined && !isTurnedPage(page)) return false;
  const lines = ((turned ? block.bbox.r - block.bbox.l : block.bbox.t - block.bbox.b) / (LINE_PITCH * block.fontSize));
  // spec (issue 41): an item of a bulleted list (two or more items with one bullet, one after the
  // other) is a list item however large its type — a slide's bullets are set larger than its notes.
  if (page !== undefined && inBulletedList(block, page)) return false;
  // spec (issue 41): "form pages' headings" — on a form (a page with three or more "Label: value"
  // lines), a field's label with its value ("Agency: Bureau of …", "Date of Incident: 01/09/2015") is a
  // field; and a larger line ending a sentence with its full stop is a filled-in answer, not a heading.
  if (isField(block) && page !== undefined && page.blocks.filter(isField).length >= MIN_FORM_FIELDS) return false;
  const larger = block.fontSize >= bodySizeOn(body, page) * SAME_SIZE && block.text.length <= MAX_HEADING_CHARS && lines <= 3 && !/\p{L}{2}\.$/u.test(block.text) && !CJK_SENTENCE_END.test(block.text);
  // …a bold heading wrapped onto a second line of a narrow column is one too, when it stays short
  // (and is not an address or a phone number set in bold: no run of four digits).
  const boldLines = lines < 1 ? block.text.length <= MAX_BOLD_HEADING_CHARS : lines < 2.5 && block.text.length <= MAX_WRAPPED_BOLD_HEADING_CHARS && !/\d{4}/u.test(block.text);
  // spec (issue 41): where the body is in the tables' cells, the short bold lines between the tables
  // are their headings, even when the cells' labels are set in bold too (a prospectus of key–value tables).
  const boldLine = block.bold && (!body.bold || body.inCells === true) && boldLines && !/[.,;:]$/.test(block.text) && !isBullet(block.marker);
  return larger || boldLine || isStyledHeading(block, body, lines);
}

/** Signs of program text: a monospaced line holding none of them is words. */
const CODE_SIGNS = /[{}[\]<>=;#$\\|_]|\(\)|::|->|\/\//u;

/**
 * A single monospaced line set well above the body size and holding words, not program text, is a
 * display line in a typewriter face (a chapter title set in Courier), not a code listing: code is
 * set at or below the body size.
 */
function isDisplayLine(block: Block, body: BodyStyle): boolean {
  if (block.label !== 'code' || block.text.includes('\n')) return false;
  return block.fontSize >= body.size * SAME_SIZE * SAME_SIZE && /\p{L}{3,}/u.test(block.text) && !CODE_SIGNS.test(block.text);
}

/** Heading levels by distinct size, largest first: sizes within 0.75 pt are one level. */
export function levelsBySize(sizes: number[]): (size: number) => number {
  const levels: number[] = [];
  for (const size of [...sizes].sort((a, b) => b - a)) if ((levels.at(-1) ?? Infinity) - size > 0.75) levels.push(size);
  return (size) => Math.min(6, 1 + levels.filter((level) => level > size + 0.75).length);
}

export function asHeading(block: Block, level: number): Block {
  const { marker, markerColor: _colour, markerBox: _box, ...rest } = block;
  // A numbered heading ("1. Introduction") was read as a list item; it keeps its number.
  return { ...rest, label: 'section_header', text: marker === undefined ? block.text : `${marker} ${block.text}`, level };
}

/** "2.1 Results" → 2; "3 Method" → 1; "Appendix A" and unnumbered headings → undefined. */
export function sectionNumber(block: Block): number | undefined {
  const text = block.marker === undefined ? block.text : `${block.marker} ${block.text}`;
  const match = /^(\d{1,2}(?:\.\d{1,2}){0,5})\.?\s+\p{L}/u.exec(text);
  return match?.[1] ? Math.min(6, match[1].split('.').length) : undefined;
}
