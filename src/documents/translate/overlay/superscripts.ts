// Superscript footnote markers stay attached to their word (issue 42). A reader gives a footnote
// number set small and high ("reports¹") as a block of its own, a number, which the overlay would
// keep where the source drew it — while the translation around it moves, so the number ends up over
// another word. Here such a marker leaves the kept text and goes into its paragraph's translation as
// a superscript character, after the word at the same share of the text as in the source, and
// travels with it. A marker that opens a line (a footnote's own mark, "† Products no longer …" at
// the foot of a paragraph) stays before the word it opens. Where the source's words are known (poppler's,
// top-down points), the marker's place in the text is read from the words beside it on its row;
// else it is estimated from its line and its place along it. Pure: pages in, pages out.
import type { Block, Page, ParsedDocument, StyledSpan } from '../../document.ts';
import type { Word } from './check.ts';

/** A footnote marker: digits, or a dagger, asterisk, section sign or caret, one to three of them. */
const MARKER = /^\s*(?:\d{1,3}|[*∗†‡§¶^]{1,3})\s*$/u;
const SUPERSCRIPT: Record<string, string> = { 0: '⁰', 1: '¹', 2: '²', 3: '³', 4: '⁴', 5: '⁵', 6: '⁶', 7: '⁷', 8: '⁸', 9: '⁹', '∗': '*' };
/** A marker is set at most this share of its paragraph's size. */
const SMALL = 0.8;

export const superscript = (marker: string) => [...marker.trim()].map((c) => SUPERSCRIPT[c] ?? c).join('');

/** Whether a page has a footnote marker to attach (the caller reads the source's words only then). */
export const hasMarkers = (page: Page) => page.blocks.some((b) => MARKER.test(b.text) && b.label !== 'table');

/** The host of a marker: a translated paragraph whose box holds the marker's top left corner (or touches it). */
function hostOf(marker: Block, blocks: Block[]): number {
  return blocks.findIndex((b) => b !== marker && b.label !== 'table' && b.label !== 'picture' && b.label !== 'code' && b.label !== 'formula' && !MARKER.test(b.text)
    && marker.fontSize <= b.fontSize * SMALL && marker.bbox.l >= b.bbox.l - 1 && marker.bbox.l <= b.bbox.r + 2 && marker.bbox.t <= b.bbox.t + 2 && marker.bbox.t >= b.bbox.b);
}

/** Where in the source text the marker stands, as a share of it: its line (from the line breaks and pitch) and its place along that line. */
function shareOf(marker: Block, host: Block): number {
  const length = host.text.length;
  const pitch = host.lineHeight ?? host.fontSize * 1.2;
  // Without line breaks (a paragraph of many lines), its lines are taken as equally long.
  const count = Math.max(1, Math.round((host.bbox.t - host.bbox.b) / pitch));
  const breaks = host.lineBreaks ?? Array.from({ length: count - 1 }, (_, k) => Math.round(((k + 1) * length) / count));
  const line = Math.max(0, Math.min(breaks.length, Math.round((host.bbox.t - marker.bbox.t) / pitch)));
  const start = line === 0 ? 0 : breaks[line - 1]!;
  const end = breaks[line] ?? length;
  const along = Math.max(0, Math.min(1, (marker.bbox.l - host.bbox.l) / Math.max(1, host.bbox.r - host.bbox.l)));
  return (start + along * (end - start)) / Math.max(1, length);
}

type Place = { share: number; opens: boolean; sentence: boolean };
const squash = (text: string) => text.normalize('NFKC').replace(/\s+/gu, ' ').trim();

/**
 * Where the marker stands in the source text, read from the source's words on its row: after the
 * words left of it (it follows its word), or before those right of it when none is (it opens a line).
 */
function placeFromWords(marker: Block, host: Block, words: Word[], height: number): Place | undefined {
  const box = { xMin: marker.bbox.l, xMax: marker.bbox.r, yMin: height - marker.bbox.t, yMax: height - marker.bbox.b };
  const mark = marker.text.trim();
  const row = words
    .filter((w) => Math.min(w.yMax, box.yMax) - Math.max(w.yMin, box.yMin) > 0.3 * Math.min(w.yMax - w.yMin, box.yMax - box.yMin))
    .filter((w) => (w.xMin + w.xMax) / 2 >= host.bbox.l - 1 && (w.xMin + w.xMax) / 2 <= host.bbox.r + 1)
    .filter((w) => !(w.text.trim() === mark && Math.abs(w.xMin - box.xMin) < 1))
    .sort((a, b) => a.xMin - b.xMin);
  const before = row.filter((w) => w.xMax <= box.xMin + 1).map((w) => (w.text.endsWith(mark) ? w.text.slice(0, -mark.length) : w.text));
  const after = row.filter((w) => w.xMin >= box.xMax - 1).map((w) => w.text);
  const text = squash(host.text);
  const opens = before.length === 0;
  const side = opens ? after : before;
  // The longest stretch of the row found in the text, nearest the estimate where it occurs twice.
  for (let n = side.length; n >= Math.min(side.length, 2) && n > 0; n--) {
    const part = squash((opens ? side.slice(0, n) : side.slice(-n)).join(' '));
    const found: number[] = [];
    for (let at = text.indexOf(part); at >= 0; at = text.indexOf(part, at + 1)) found.push(opens ? at : at + part.length);
    if (found.length === 0) continue;
    const estimate = shareOf(marker, host) * text.length;
    const at = found.reduce((a, b) => (Math.abs(b - estimate) < Math.abs(a - estimate) ? b : a));
    return { share: at / Math.max(1, text.length), opens, sentence: opens && (at === 0 || /[.!?:;]\s*$/u.test(text.slice(0, at))) };
  }
  return undefined;
}

/** The end of the word nearest to `share` of `text` (a word's last letter or digit, before its punctuation). */
export function wordEndNear(text: string, share: number): number {
  const target = share * text.length;
  let best = text.length;
  for (let i = 1; i <= text.length; i++) {
    if (/[\p{L}\p{N})\]]/u.test(text[i - 1]!) && (i === text.length || !/[\p{L}\p{N}]/u.test(text[i]!)) && Math.abs(i - target) < Math.abs(best - target)) best = i;
  }
  return best;
}

/** The start of the word nearest to `share` of `text`; of a sentence's first word where `sentence`, when one is near. */
export function wordStartNear(text: string, share: number, sentence = false): number {
  const target = share * text.length;
  let best = 0;
  let bestSentence = -1;
  for (let i = 0; i < text.length; i++) {
    if (!/[\p{L}\p{N}(\[¿¡"“]/u.test(text[i]!) || (i > 0 && !/\s/u.test(text[i - 1]!))) continue;
    if (Math.abs(i - target) < Math.abs(best - target)) best = i;
    if (sentence && (i === 0 || /[.!?:;]\s+$/u.test(text.slice(Math.max(0, i - 3), i))) && (bestSentence < 0 || Math.abs(i - target) < Math.abs(bestSentence - target))) bestSentence = i;
  }
  // A footnote's mark opens its footnote: its first word, if the translation has one near (a tenth of the text).
  return bestSentence >= 0 && Math.abs(bestSentence - target) <= 0.1 * text.length + 20 ? bestSentence : best;
}

function insertAt(block: Block, at: number, mark: string): Block {
  const text = block.text.slice(0, at) + mark + block.text.slice(at);
  if (!block.spans) return { ...block, text };
  let offset = 0;
  let done = false;
  const spans: StyledSpan[] = block.spans.map((span) => {
    const end = offset + span.text.length;
    const inside = !done && at <= end;
    const result = inside ? { ...span, text: span.text.slice(0, at - offset) + mark + span.text.slice(at - offset) } : span;
    if (inside) done = true;
    offset = end;
    return result;
  });
  return { ...block, text, spans };
}

/**
 * The source and translated pages with each superscript footnote marker moved into its paragraph's
 * translation (after the word at its share of the text, or before it where the marker opens a line)
 * and out of the blocks kept as drawn. `words`: the source's words per page (poppler's), when read.
 */
export function attachSuperscripts(source: ParsedDocument, translated: ParsedDocument, words?: Word[][]): { source: ParsedDocument; translated: ParsedDocument } {
  const pages = source.pages.map((page, p) => {
    const target = translated.pages[p];
    if (!target || target.blocks.length !== page.blocks.length) return { page, target };
    const gone = new Set<number>();
    const blocks = [...target.blocks];
    page.blocks.forEach((marker, m) => {
      if (!MARKER.test(marker.text) || marker.label === 'table') return;
      const h = hostOf(marker, page.blocks);
      if (h < 0 || gone.has(h)) return;
      const host = blocks[h]!;
      const place = words?.[p] ? placeFromWords(marker, page.blocks[h]!, words[p]!, page.height) : undefined;
      const at = place?.opens ? wordStartNear(host.text, place.share, place.sentence) : wordEndNear(host.text, place?.share ?? shareOf(marker, page.blocks[h]!));
      blocks[h] = insertAt(host, at, superscript(marker.text));
      gone.add(m);
    });
    if (gone.size === 0) return { page, target };
    const keep = (_: Block, i: number) => !gone.has(i);
    return { page: { ...page, blocks: page.blocks.filter(keep) } as Page, target: { ...target, blocks: blocks.filter(keep) } as Page };
  });
  return { source: { ...source, pages: pages.map((p) => p.page) }, translated: { ...translated, pages: pages.map((p) => p.target ?? p.page) } };
}
