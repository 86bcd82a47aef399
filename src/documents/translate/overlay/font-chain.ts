// Every glyph printed (issue 34): the translation is set in a chain of fonts chosen per character.
// Noto Sans SC (the npm package the project already ships) draws Latin, Greek, Cyrillic, Chinese and
// kana; what it lacks — the fraction slash of "1⁄4", the asterisk operator ∗, ballot boxes, arrows
// of maths — comes from the next font in the chain that has it: DejaVu Sans (Debian's
// fonts-dejavu-core), then the Noto families of Debian's fonts-noto-core for the scripts Noto Sans
// SC has none of (Arabic, Hebrew, Devanagari, Thai, Korean …). Nothing is downloaded: a font file
// that is not installed is left out of the chain, and the characters no font of the chain has are
// counted (the layout check's missing glyphs) and named in the task's notes, with the package to
// install.
import { existsSync, readFileSync } from 'node:fs';
import fontkit from '@pdf-lib/fontkit';
import { fontPaths } from '../../fonts.ts';
import { isPictureCode } from '../../pdf/fonts.ts';

/** One font of the chain: its regular and bold files, and which code points it draws. */
export type ChainFont = { name: string; regular: string; bold: string; has(codePoint: number): boolean };

/** A piece of a line set in one font of the chain (`font` indexes the chain). */
export type Segment = { text: string; font: number };

/** A font file of a Debian package, by the package that installs it. */
type PackagedFont = { name: string; regular: string; bold?: string; debian: string };

const DEBIAN_FONTS: PackagedFont[] = [
  { name: 'DejaVu Sans', regular: '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf', bold: '/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf', debian: 'fonts-dejavu-core' },
  { name: 'Noto Sans Arabic', regular: '/usr/share/fonts/truetype/noto/NotoSansArabic-Regular.ttf', bold: '/usr/share/fonts/truetype/noto/NotoSansArabic-Bold.ttf', debian: 'fonts-noto-core' },
  { name: 'Noto Sans Hebrew', regular: '/usr/share/fonts/truetype/noto/NotoSansHebrew-Regular.ttf', bold: '/usr/share/fonts/truetype/noto/NotoSansHebrew-Bold.ttf', debian: 'fonts-noto-core' },
  { name: 'Noto Sans Devanagari', regular: '/usr/share/fonts/truetype/noto/NotoSansDevanagari-Regular.ttf', bold: '/usr/share/fonts/truetype/noto/NotoSansDevanagari-Bold.ttf', debian: 'fonts-noto-core' },
  { name: 'Noto Sans Thai', regular: '/usr/share/fonts/truetype/noto/NotoSansThai-Regular.ttf', bold: '/usr/share/fonts/truetype/noto/NotoSansThai-Bold.ttf', debian: 'fonts-noto-core' },
  { name: 'Noto Sans Math', regular: '/usr/share/fonts/truetype/noto/NotoSansMath-Regular.ttf', debian: 'fonts-noto-core' },
  { name: 'Noto Sans Symbols', regular: '/usr/share/fonts/truetype/noto/NotoSansSymbols-Regular.ttf', bold: '/usr/share/fonts/truetype/noto/NotoSansSymbols-Bold.ttf', debian: 'fonts-noto-core' },
  { name: 'Noto Sans Symbols 2', regular: '/usr/share/fonts/truetype/noto/NotoSansSymbols2-Regular.ttf', debian: 'fonts-noto-core' },
  { name: 'DejaVu Math TeX Gyre', regular: '/usr/share/fonts/truetype/dejavu/DejaVuMathTeXGyre.ttf', debian: 'fonts-dejavu-core' },
];

/** Which Debian package would bring fonts for what the chain lacks (named in the notes). */
export const FONT_PACKAGES = [...new Set(DEBIAN_FONTS.map((f) => f.debian))];

type Coverage = { hasGlyphForCodePoint(codePoint: number): boolean };

let cached: ChainFont[] | undefined;

/** The fonts installed here, in the order they are tried; the first is always the bundled Noto Sans SC. */
export function fontChain(): ChainFont[] {
  if (cached) return cached;
  const bundled = fontPaths();
  const open = (file: string) => fontkit.create(readFileSync(file)) as unknown as Coverage;
  const first = open(bundled.regular);
  const chain: ChainFont[] = [{ name: 'Noto Sans SC', regular: bundled.regular, bold: bundled.bold, has: (cp) => first.hasGlyphForCodePoint(cp) }];
  for (const font of DEBIAN_FONTS) {
    if (!existsSync(font.regular)) continue;
    const coverage = open(font.regular);
    const bold = font.bold && existsSync(font.bold) ? font.bold : font.regular;
    chain.push({ name: font.name, regular: font.regular, bold, has: (cp) => coverage.hasGlyphForCodePoint(cp) });
  }
  cached = chain;
  return chain;
}

/** Characters that take no glyph of their own: spaces, joiners, direction marks. */
const INVISIBLE = /[\s\u200b-\u200f\u2028-\u202e\u2060-\u2064\ufeff]/u;

/**
 * Adobe's Symbol encoding from 0x20 on: Windows fonts in the Symbol character set put their glyphs
 * at U+F020–U+F0FF (private use), and a PDF without a better ToUnicode map hands those code points
 * on ("" for →). They are printed as the characters the Symbol font draws there.
 */
const SYMBOL_LOW = ' !∀#∃%&∋()∗+,−./0123456789:;<=>?≅ΑΒΧΔΕΦΓΗΙϑΚΛΜΝΟΠΘΡΣΤΥςΩΞΨΖ[∴]⊥_‾αβχδεφγηιϕκλμνοπθρστυϖωξψζ{|}∼';
const SYMBOL_HIGH = '€ϒ′≤⁄∞ƒ♣♦♥♠↔←↑→↓°±″≥×∝∂•÷≠≡≈…⏐⎯↵ℵℑℜ℘⊗⊕∅∩∪⊃⊇⊄⊂⊆∈∉∠∇®©™∏√⋅¬∧∨⇔⇐⇑⇒⇓◊〈®©™∑⎛⎜⎝⎡⎢⎣⎧⎨⎩⎪ 〉∫⌠⎮⌡⎞⎟⎠⎤⎥⎦⎫⎬⎭';
const CONTROL = /[\p{Cc}\p{Cf}]/u;

/** The text as it is printed: Symbol-font code points as their characters, control characters and dingbats' picture codes left out (they have no glyph). */
export function printable(text: string): string {
  let out = '';
  for (const char of text) {
    const cp = char.codePointAt(0)!;
    if (cp >= 0xf020 && cp <= 0xf07e) out += [...SYMBOL_LOW][cp - 0xf020] ?? char;
    else if (cp >= 0xf0a0 && cp <= 0xf0fe) out += [...SYMBOL_HIGH][cp - 0xf0a0] ?? char;
    else if (CONTROL.test(char) && !/\s/u.test(char) && char !== '\u200b') continue;
    // A dingbat's picture (pdf/fonts.ts) is kept as the source drew it (symbols.ts), never set from its code.
    else if (isPictureCode(cp)) continue;
    else out += char;
  }
  return out;
}

/** The font of the chain that draws this character, or -1 when none does. */
export function fontFor(char: string, chain: ChainFont[] = fontChain()): number {
  if (INVISIBLE.test(char)) return 0;
  let memo = chosen.get(chain);
  if (!memo) chosen.set(chain, (memo = new Map()));
  let found = memo.get(char);
  if (found === undefined) {
    const cp = char.codePointAt(0)!;
    found = chain.findIndex((font) => font.has(cp));
    memo.set(char, found);
  }
  return found;
}

const chosen = new WeakMap<ChainFont[], Map<string, number>>();

/**
 * A line cut where the font changes: each character goes to the first font of the chain that has
 * it; spaces stay with the font before them, and a character no font has stays in the first font
 * (drawn as its missing-glyph box, and counted by `missingGlyphs`).
 */
export function segments(text: string, chain: ChainFont[] = fontChain()): Segment[] {
  const result: Segment[] = [];
  for (const char of printable(text)) {
    const found = INVISIBLE.test(char) ? (result.at(-1)?.font ?? 0) : fontFor(char, chain);
    const font = found < 0 ? 0 : found;
    const last = result.at(-1);
    if (last && last.font === font) last.text += char;
    else result.push({ text: char, font });
  }
  return result;
}

/** The characters of `text` no font of the chain can draw, each once, in order. */
export function missingGlyphs(text: string, chain: ChainFont[] = fontChain()): string[] {
  const missing = new Set<string>();
  for (const char of printable(text)) if (!INVISIBLE.test(char) && char.codePointAt(0)! > 0x20 && fontFor(char, chain) < 0) missing.add(char);
  return [...missing];
}

/** How many characters of `text` (every occurrence) no font of the chain can draw: what prints as .notdef. */
export function countMissingGlyphs(text: string, chain: ChainFont[] = fontChain()): number {
  let count = 0;
  for (const char of printable(text)) if (!INVISIBLE.test(char) && char.codePointAt(0)! > 0x20 && fontFor(char, chain) < 0) count++;
  return count;
}
