// Symbol glyphs are "kept in the source's glyphs, colour and place and never sent to the engine"
// (issue 42). A glyph of a symbol font without a usable ToUnicode map reads as a code with no
// meaning (a control character, a private-use code point): it cannot be set again from its text the
// way a list bullet is, so where such glyphs open a block (table-as-picture's white check boxes,
// U+0084 twice before each answer) they stay as drawn — copied from the source like kept text — and
// the translation starts where the source's words start. Their places are read from the source's
// words (poppler's, top-down points).
// URLs are kept "in the source's glyphs, colour and place" too: one that ends a block of one line (a
// footnote's link, its underline a drawing under it) stays where it stood, and the line's translation
// is set before it. Pure: pages in, pages out.
import type { Block, Page, ParsedDocument } from '../../document.ts';
import type { Word } from './check.ts';
import { isKeptText } from './keep.ts';

/** Codes no reader can name: controls, private use, the replacement character. */
const UNNAMED = '\\u0000-\\u0008\\u000e-\\u001f\\u007f-\\u009f\\ue000-\\uf8ff\\ufffd';
const UNNAMED_CHAR = new RegExp(`[${UNNAMED}]`, 'u');
const LEADING = new RegExp(`^[\\s${UNNAMED}]*[${UNNAMED}]\\s*`, 'u');

/** Whether a block opens with glyphs that have no Unicode meaning (and has words after them). */
export const opensWithUnnamedGlyphs = (block: Block) => block.label !== 'table' && LEADING.test(block.text) && block.text.replace(LEADING, '').trim() !== '';
/** A URL or e-mail address at the end of a block's text, after some words to translate. */
const TRAILING_URL = /\s((?:https?|ftp):\/\/\S+|www\.\S+)$/iu;
/** The translation before a kept URL is at most this much longer than the source's words it replaces (1 / 0.9): it fits their room at 90 % or more. */
const SHRINK_AT_MOST = 0.9;
const oneLine = (block: Block) => !block.lineBreaks && block.bbox.t - block.bbox.b < 1.6 * (block.lineHeight ?? block.fontSize * 1.2);
/** Whether a block of one line ends with a URL. */
// (Not a running header's or footer's: those stay whole at the page's edge.)
export const endsWithUrl = (block: Block) => !['table', 'code', 'page_header', 'page_footer'].includes(block.label) && oneLine(block) && TRAILING_URL.test(block.text.trim()) && !isKeptText(block.text);
export const hasUnnamedLeads = (page: Page) => page.blocks.some((b) => opensWithUnnamedGlyphs(b) || endsWithUrl(b));

const wordOnly = (w: Word) => [...w.text].every((c) => UNNAMED_CHAR.test(c));

/**
 * Each block opening with unnamed glyphs becomes two: the glyphs, kept as drawn where the source's
 * words show them (a block of no letters, which keep.ts keeps), and the block's text without them,
 * starting where its first word starts. Source and translated pages stay block for block.
 */
export function keepUnnamedLeads(source: ParsedDocument, translated: ParsedDocument, words: Word[][]): { source: ParsedDocument; translated: ParsedDocument } {
  const pages = source.pages.map((page, p) => {
    const target = translated.pages[p];
    const found = words[p];
    if (!target || !found || target.blocks.length !== page.blocks.length || !hasUnnamedLeads(page)) return { page, target };
    const sourceBlocks: Block[] = [];
    const targetBlocks: Block[] = [];
    page.blocks.forEach((block, b) => {
      const translation = target.blocks[b] ?? block;
      const url = endsWithUrl(block) ? splitUrl(block, translation, found, page.height) : undefined;
      if (url) {
        sourceBlocks.push(url.rest, url.url);
        targetBlocks.push(url.translation, url.url);
        return;
      }
      const split = opensWithUnnamedGlyphs(block) ? splitLead(block, found, page.height) : undefined;
      if (!split) {
        sourceBlocks.push(block);
        targetBlocks.push(translation);
        return;
      }
      const text = { ...translation, text: translation.text.replace(LEADING, ''), ...(translation.spans ? { spans: stripSpans(translation.spans) } : {}) };
      sourceBlocks.push(split.glyphs, split.rest);
      targetBlocks.push(split.glyphs, { ...text, bbox: split.rest.bbox });
    });
    return { page: { ...page, blocks: sourceBlocks }, target: { ...target, blocks: targetBlocks } };
  });
  return { source: { ...source, pages: pages.map((p) => p.page) }, translated: { ...translated, pages: pages.map((p) => p.target ?? p.page) } };
}

function stripSpans(spans: NonNullable<Block['spans']>): NonNullable<Block['spans']> {
  const [first, ...rest] = spans;
  if (!first) return spans;
  return [{ ...first, text: first.text.replace(LEADING, '') }, ...rest].filter((s) => s.text !== '');
}

/** The block's leading glyphs as a block of their own (their words' boxes), and the rest from where its words start. */
function splitLead(block: Block, words: Word[], height: number): { glyphs: Block; rest: Block } | undefined {
  const box = { xMin: block.bbox.l - 1, xMax: block.bbox.r + 1, yMin: height - block.bbox.t - 1, yMax: height - block.bbox.b + 1 };
  const mine = words.filter((w) => (w.xMin + w.xMax) / 2 >= box.xMin && (w.xMin + w.xMax) / 2 <= box.xMax && (w.yMin + w.yMax) / 2 >= box.yMin && (w.yMin + w.yMax) / 2 <= box.yMax);
  const top = Math.min(...mine.map((w) => w.yMin));
  const firstRow = mine.filter((w) => w.yMin <= top + 0.5 * (w.yMax - w.yMin)).sort((a, b) => a.xMin - b.xMin);
  const lead: Word[] = [];
  for (const w of firstRow) { if (!wordOnly(w)) break; lead.push(w); }
  const others = mine.filter((w) => !lead.includes(w));
  if (lead.length === 0 || others.length === 0) return undefined;
  // A glyph starts at its left edge: the kept region ends just past the last glyph's start, short of the first word.
  const first = others.filter((w) => firstRow.includes(w))[0] ?? others[0]!;
  const glyphs: Block = {
    ...block,
    label: 'text',
    text: lead.map((w) => w.text).join(''),
    bbox: { l: Math.min(...lead.map((w) => w.xMin)), r: Math.min(first.xMin - 1.5, Math.max(...lead.map((w) => w.xMax))), t: height - Math.min(...lead.map((w) => w.yMin)), b: height - Math.max(...lead.map((w) => w.yMax)) },
  };
  for (const key of ['spans', 'lineBreaks', 'marker', 'markerColor', 'markerBox', 'formulas'] as const) delete glyphs[key];
  const left = Math.min(...others.map((w) => w.xMin));
  const text = block.text.replace(LEADING, '');
  const removed = block.text.length - text.length;
  const rest: Block = { ...block, text, bbox: { ...block.bbox, l: Math.max(block.bbox.l, left) } };
  if (block.lineBreaks) rest.lineBreaks = block.lineBreaks.map((k) => k - removed).filter((k) => k > 0);
  if (block.spans) rest.spans = stripSpans(block.spans);
  return { glyphs, rest };
}

/** A one-line block's trailing URL as a block of its own where its words stand, the rest before it; undefined where the translation does not end with it. */
function splitUrl(block: Block, translation: Block, words: Word[], height: number): { url: Block; rest: Block; translation: Block } | undefined {
  const url = TRAILING_URL.exec(block.text.trim())![1]!;
  if (!translation.text.trim().endsWith(url)) return undefined;
  // Only where the translation before it fits the room the source's words had, shrunk no more than a
  // short line may be (a longer one keeps the whole line's width, the URL moving with it).
  if (translation.text.trim().length - url.length > (block.text.trim().length - url.length) / SHRINK_AT_MOST) return undefined;
  const box = { xMin: block.bbox.l - 1, xMax: block.bbox.r + 1, yMin: height - block.bbox.t - 1, yMax: height - block.bbox.b + 1 };
  const mine = words.filter((w) => (w.xMin + w.xMax) / 2 >= box.xMin && (w.xMin + w.xMax) / 2 <= box.xMax && (w.yMin + w.yMax) / 2 >= box.yMin && (w.yMin + w.yMax) / 2 <= box.yMax).sort((a, b) => a.xMin - b.xMin);
  // The URL's words: from the right, as many as spell it.
  let spelled = '';
  let k = mine.length;
  while (k > 0 && spelled.length < url.length) spelled = mine[--k]!.text + spelled;
  if (spelled !== url || k === 0) return undefined;
  const parts = mine.slice(k);
  const left = Math.min(...parts.map((w) => w.xMin));
  const strip = (b: Block, text: string): Block => {
    const rest = text.trim().slice(0, -url.length).trimEnd();
    const { spans: _spans, ...plain } = b;
    return { ...plain, text: rest };
  };
  const urlBlock: Block = { label: 'text', text: url, fontSize: block.fontSize, bold: block.bold, bbox: { l: left, r: Math.max(...parts.map((w) => w.xMax)), t: height - Math.min(...parts.map((w) => w.yMin)), b: height - Math.max(...parts.map((w) => w.yMax)) } };
  const before = { ...block.bbox, r: left - 0.25 * block.fontSize };
  return { url: urlBlock, rest: { ...strip(block, block.text), bbox: before }, translation: { ...strip(translation, translation.text), bbox: before } };
}
