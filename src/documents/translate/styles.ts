// Inline styles through translation (issue 34): a block whose style changes inside it goes to the
// engine as HTML, its stretches in another style than the block's own wrapped in
// `<span class="sN">` (N numbers the block's styles), and comes back with the tags around their
// translation ("**Reuse of content** (*as Word, HTML*)" stays bold, then italic). A tag the engine
// lost leaves its words in the block's own style; those are counted (`stylesLost`), for the check.
import type { Block, SpanStyle, StyledSpan } from '../document.ts';

const key = (style: SpanStyle) => `${style.bold ? 'b' : ''}${style.italic ? 'i' : ''}${style.color ?? ''}`;
const styleOf = (span: StyledSpan): SpanStyle => ({ ...(span.bold ? { bold: true } : {}), ...(span.italic ? { italic: true } : {}), ...(span.color ? { color: span.color } : {}) });

/**
 * A block's markup: the HTML sent to the engine, and the styles its tags stand for (s1 = styles[0]).
 * `mixed[i]`: tag i wraps one word whose style changes inside it ("Redpaper", red "Red" then black
 * "paper"), with the word's own pieces — an engine keeps such a word (no language has it) but moves
 * any tag set between its letters; it comes back in its pieces when it comes back unchanged.
 */
export type Markup = { html: string; dominant: SpanStyle; styles: SpanStyle[]; /** Words of the source each style marks. */ words: number[]; mixed?: Array<StyledSpan[] | undefined> };

// Letters of scripts written with spaces: between two Chinese characters a style change is between words.
const LETTER_END = /(?![\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}])[\p{L}\p{N}]$/u;
const LETTER_START = /^(?![\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}])[\p{L}\p{N}]/u;

/** The spans with each word whose style changes inside it made one span of its own, holding its pieces. */
function joinMixedWords(spans: StyledSpan[]): Array<StyledSpan & { pieces?: StyledSpan[] }> {
  const out: Array<StyledSpan & { pieces?: StyledSpan[] }> = [];
  let i = 0;
  while (i < spans.length) {
    let j = i;
    // Spans meet inside a word where one ends with a letter and the next starts with one; a span in
    // the middle of the word has no space.
    while (j + 1 < spans.length && LETTER_END.test(spans[j]!.text) && LETTER_START.test(spans[j + 1]!.text) && (j === i || !/\s/u.test(spans[j]!.text))) j++;
    if (j === i) { out.push(spans[i]!); i++; continue; }
    // spans[i..j] meet inside a word: the word runs from the last space of spans[i] to the first of spans[j].
    const first = spans[i]!;
    const last = spans[j]!;
    const head = /\S+$/u.exec(first.text)!;
    const tail = /^\S+/u.exec(last.text)!;
    const pieces = [{ ...first, text: head[0] }, ...spans.slice(i + 1, j), { ...last, text: tail[0] }];
    if (head.index > 0) out.push({ ...first, text: first.text.slice(0, head.index) });
    out.push({ ...styleOf(pieces[0]!), text: pieces.map((p) => p.text).join(''), pieces });
    const rest = last.text.slice(tail[0].length);
    if (rest !== '') out.push({ ...last, text: rest });
    i = j + 1;
  }
  return out;
}

const wordCount = (text: string) => (text.match(/[\p{L}\p{N}]+/gu) ?? []).length;

const escape = (text: string) => text.replace(/[&<>]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;' })[c] ?? c);
const unescape = (text: string) => text.replace(/&(amp|lt|gt|quot|apos|nbsp|#\d+|#x[0-9a-f]+);/gi, (entity, name: string) => {
  const named: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };
  if (name[0] !== '#') return named[name.toLowerCase()] ?? entity;
  const code = name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : Number(name.slice(1));
  return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : entity;
});

/** The markup of a block whose style changes inside it (its spans), or undefined for a block of one style. */
export function toMarkup(block: Pick<Block, 'spans'>): Markup | undefined {
  const spans = block.spans;
  if (!spans || spans.length < 2) return undefined;
  const weight = new Map<string, number>();
  for (const span of spans) weight.set(key(span), (weight.get(key(span)) ?? 0) + span.text.replace(/\s/g, '').length);
  const dominantKey = [...weight].sort((a, b) => b[1] - a[1])[0]![0];
  const dominant = styleOf(spans.find((s) => key(s) === dominantKey)!);
  const styles: SpanStyle[] = [];
  const words: number[] = [];
  const parts: string[] = [];
  const mixed: Array<StyledSpan[] | undefined> = [];
  for (const span of joinMixedWords(spans)) {
    if (!span.pieces && (key(span) === dominantKey || span.text.trim() === '')) { parts.push(escape(span.text)); continue; }
    let index = span.pieces ? -1 : styles.findIndex((s, k) => !mixed[k] && key(s) === key(span));
    if (index < 0) index = styles.push(styleOf(span)) - 1;
    if (span.pieces) mixed[index] = span.pieces;
    words[index] = (words[index] ?? 0) + wordCount(span.text);
    // Spaces stay outside the tag, so an engine sees whole words inside it.
    const lead = /^\s*/.exec(span.text)![0];
    const trail = /\s*$/.exec(span.text)![0];
    parts.push(`${escape(lead)}<span class="s${index + 1}">${escape(span.text.trim())}</span>${escape(trail)}`);
  }
  if (styles.length === 0) return undefined;
  return { html: parts.join(''), dominant, styles, words, ...(mixed.length > 0 ? { mixed } : {}) };
}

/** The translation's text and spans from the engine's HTML; `stylesLost`: the source words whose style tag the engine lost. */
export function fromMarkup(html: string, markup: Markup): { text: string; spans?: StyledSpan[]; stylesLost: number } {
  const spans: StyledSpan[] = [];
  const stack: Array<{ style: SpanStyle; pieces?: StyledSpan[] }> = [];
  const seen = new Set<number>();
  const add = (text: string, style: SpanStyle) => {
    const last = spans.at(-1);
    if (last && key(last) === key(style)) last.text += text;
    else spans.push({ text, ...style });
  };
  for (const token of html.match(/<span\b[^>]*>|<\/span\s*>|<[^>]*>|[^<]+/gi) ?? []) {
    const open = /^<span\b[^>]*\bclass\s*=\s*["']?s(\d+)/i.exec(token);
    if (open) {
      const index = Number(open[1]) - 1;
      if (markup.styles[index]) seen.add(index);
      const pieces = markup.mixed?.[index];
      stack.push({ style: markup.styles[index] ?? stack.at(-1)?.style ?? markup.dominant, ...(pieces ? { pieces } : {}) });
      continue;
    }
    if (/^<\/span/i.test(token)) { stack.pop(); continue; }
    if (token.startsWith('<')) continue; // a tag the engine added
    const text = unescape(token);
    const top = stack.at(-1);
    // A word of mixed styles that came back as it went: in its own pieces again.
    if (top?.pieces && text.trim() === top.pieces.map((p) => p.text).join('')) {
      add(/^\s*/u.exec(text)![0], markup.dominant);
      for (const piece of top.pieces) add(piece.text, styleOf(piece));
      add(/\s*$/u.exec(text)![0], markup.dominant);
      continue;
    }
    add(text, top?.style ?? markup.dominant);
  }
  const text = spans.map((s) => s.text).join('');
  // Leading and trailing spaces go, as the plain translation's do.
  const lead = text.length - text.trimStart().length;
  if (spans[0] && lead > 0) spans[0].text = spans[0].text.slice(lead);
  const last = spans.at(-1);
  if (last) last.text = last.text.trimEnd();
  const kept = spans.filter((s) => s.text !== '');
  const stylesLost = markup.words.reduce((n, w, i) => n + (seen.has(i) ? 0 : w), 0);
  return { text: kept.map((s) => s.text).join(''), ...(kept.length > 1 ? { spans: kept } : {}), stylesLost };
}


/** The stretches of a block in another style than its own (the words its markup tags), in order. */
export function styledStretches(block: Pick<Block, 'spans'>, markup: Markup): StyledSpan[] {
  return (block.spans ?? []).filter((s) => s.text.trim() !== '' && key(s) !== key(markup.dominant)).map((s) => ({ ...s, text: s.text.trim() }));
}

/**
 * Dictionary alignment (issue 42), for an engine that dropped every tag: each styled stretch of the
 * source is looked up in `translations` (the engine's translation of the stretch alone), and where
 * that translation is found in the block's translation, those characters take the stretch's style.
 * Only words found count as kept; the rest stay in the block's style.
 */
export function alignStyles(text: string, stretches: StyledSpan[], markup: Markup, translations: Map<string, string>): { spans?: StyledSpan[]; stylesLost: number } {
  const styles: Array<SpanStyle | undefined> = new Array(text.length).fill(undefined);
  const lower = text.toLocaleLowerCase();
  let lost = 0;
  for (const stretch of stretches) {
    // A stretch with no letter ("3.1") is not translated: it is its own translation.
    const target = (/\p{L}/u.test(stretch.text) ? translations.get(stretch.text) : stretch.text)?.trim().replace(/[.。,，:：;；]+$/u, '');
    let at = target ? lower.indexOf(target.toLocaleLowerCase()) : -1;
    // A place another style took is not this stretch's: the next occurrence, if any. One the same
    // style took is (two stretches of one phrase translated as one word: "第 … 节" → "Section").
    while (at >= 0 && styles.slice(at, at + target!.length).some((s) => s !== undefined && key(s) !== key(stretch))) at = lower.indexOf(target!.toLocaleLowerCase(), at + 1);
    if (!target || at < 0) { lost += wordCount(stretch.text); continue; }
    const { text: _text, ...style } = stretch;
    for (let i = at; i < at + target.length; i++) styles[i] = style;
  }
  const spans: StyledSpan[] = [];
  for (let i = 0; i < text.length; i++) {
    const style = styles[i] ?? markup.dominant;
    const last = spans.at(-1);
    if (last && key(last) === key(style)) last.text += text[i];
    else spans.push({ text: text[i]!, ...style });
  }
  return { ...(spans.length > 1 ? { spans } : {}), stylesLost: lost };
}
