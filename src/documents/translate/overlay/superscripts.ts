// Superscript footnote markers stay attached to their word (issue 42). A reader gives a footnote
// number set small and high ("reports¹") as a block of its own, a number, which the overlay would
// keep where the source drew it — while the translation around it moves, so the number ends up over
// another word. Here such a marker leaves the kept text and goes into its paragraph's translation as
// a superscript character, after the word at the same share of the text as in the source, and
// travels with it. Pure: pages in, pages out.
import type { Block, Page, ParsedDocument, StyledSpan } from '../../document.ts';

/** A footnote marker: digits, or a dagger, asterisk or section sign, one to three of them. */
const MARKER = /^\s*(?:\d{1,3}|[*∗†‡§¶]{1,3})\s*$/u;
const SUPERSCRIPT: Record<string, string> = { 0: '⁰', 1: '¹', 2: '²', 3: '³', 4: '⁴', 5: '⁵', 6: '⁶', 7: '⁷', 8: '⁸', 9: '⁹', '∗': '*' };
/** A marker is set at most this share of its paragraph's size. */
const SMALL = 0.8;

export const superscript = (marker: string) => [...marker.trim()].map((c) => SUPERSCRIPT[c] ?? c).join('');

/** The host of a marker: a translated paragraph whose box holds the marker's top left corner (or touches it). */
function hostOf(marker: Block, blocks: Block[]): number {
  return blocks.findIndex((b) => b !== marker && b.label !== 'table' && b.label !== 'picture' && b.label !== 'code' && b.label !== 'formula' && !MARKER.test(b.text)
    && marker.fontSize <= b.fontSize * SMALL && marker.bbox.l >= b.bbox.l - 1 && marker.bbox.l <= b.bbox.r + 2 && marker.bbox.t <= b.bbox.t + 2 && marker.bbox.t >= b.bbox.b);
}

/** Where in the source text the marker stands, as a share of it: its line (from the line breaks and pitch) and its place along that line. */
function shareOf(marker: Block, host: Block): number {
  const length = host.text.length;
  const breaks = host.lineBreaks ?? [];
  const pitch = host.lineHeight ?? host.fontSize * 1.2;
  const line = Math.max(0, Math.min(breaks.length, Math.round((host.bbox.t - marker.bbox.t) / pitch)));
  const start = line === 0 ? 0 : breaks[line - 1]!;
  const end = breaks[line] ?? length;
  const along = Math.max(0, Math.min(1, (marker.bbox.l - host.bbox.l) / Math.max(1, host.bbox.r - host.bbox.l)));
  return (start + along * (end - start)) / Math.max(1, length);
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
 * translation (after the word at its share of the text) and out of the blocks kept as drawn.
 */
export function attachSuperscripts(source: ParsedDocument, translated: ParsedDocument): { source: ParsedDocument; translated: ParsedDocument } {
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
      const at = wordEndNear(host.text, shareOf(marker, page.blocks[h]!));
      blocks[h] = insertAt(host, at, superscript(marker.text));
      gone.add(m);
    });
    if (gone.size === 0) return { page, target };
    const keep = (_: Block, i: number) => !gone.has(i);
    return { page: { ...page, blocks: page.blocks.filter(keep) } as Page, target: { ...target, blocks: blocks.filter(keep) } as Page };
  });
  return { source: { ...source, pages: pages.map((p) => p.page) }, translated: { ...translated, pages: pages.map((p) => p.target ?? p.page) } };
}
