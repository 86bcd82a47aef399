// Which characters of a translation no font of the chain (font-chain.ts) can draw: they would come
// out as empty boxes (.notdef) in translated.pdf, so the task says so in words, naming the Debian
// font packages that would draw them, instead of leaving the reader to find out.
import type { ParsedDocument } from '../../document.ts';
import { FONT_PACKAGES, fontChain, missingGlyphs } from './font-chain.ts';

/** Every text of a translated page that is set: blocks and table cells. */
export function translatedTexts(document: ParsedDocument): string[] {
  return document.pages.flatMap((page) => page.blocks.flatMap((block) => [block.text, ...(block.cells ?? []).flat(), ...(block.table?.cells ?? []).map((c) => c.text)]));
}

/** A sentence naming up to five characters translated.pdf cannot show, or undefined when it can show them all. */
export function missingGlyphsNote(translated: ParsedDocument): string | undefined {
  const missing = missingGlyphs(translatedTexts(translated).join('\n'));
  if (missing.length === 0) return undefined;
  const examples = missing.slice(0, 5).map((c) => `"${c}" (U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')})`).join(', ');
  const fonts = fontChain().map((f) => f.name).join(', ');
  return `translated.pdf cannot show ${missing.length} different characters of the translation, such as ${examples}: none of the fonts installed here (${fonts}) has glyphs for them, so they appear as empty boxes; installing the Debian packages ${FONT_PACKAGES.join(' and ')} adds fonts for more scripts. translated.md has the full text.`;
}
