// Which characters of a translation the bundled font cannot draw. Noto Sans SC covers Latin, Greek,
// Cyrillic, Vietnamese, Chinese and Japanese kana, but not Hangul, Arabic, Hebrew, Devanagari or Thai
// (checked with fontkit); such characters would come out as empty boxes in translated.pdf, so the
// task says so in words instead of leaving the reader to find out.
import { readFileSync } from 'node:fs';
import fontkit from '@pdf-lib/fontkit';
import type { ParsedDocument } from '../../document.ts';
import { fontPaths } from '../../fonts.ts';

let font: { hasGlyphForCodePoint(codePoint: number): boolean } | undefined;

/** A sentence naming up to five characters translated.pdf cannot show, or undefined when it can show them all. */
export function missingGlyphsNote(translated: ParsedDocument): string | undefined {
  font ??= fontkit.create(readFileSync(fontPaths().regular)) as unknown as { hasGlyphForCodePoint(codePoint: number): boolean };
  const missing = new Set<string>();
  for (const page of translated.pages) {
    for (const block of page.blocks) {
      const texts = [block.text, ...(block.cells ?? []).flat(), ...(block.table?.cells ?? []).map((c) => c.text)];
      for (const char of texts.join('')) {
        const code = char.codePointAt(0)!;
        if (code > 0x20 && !/\s/u.test(char) && !font.hasGlyphForCodePoint(code)) missing.add(char);
      }
    }
  }
  if (missing.size === 0) return undefined;
  const examples = [...missing].slice(0, 5).map((c) => `"${c}" (U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')})`).join(', ');
  return `translated.pdf cannot show ${missing.size} different characters of the translation, such as ${examples}: the bundled font (Noto Sans SC) has no glyphs for them, so they appear as empty boxes. translated.md has the full text.`;
}
