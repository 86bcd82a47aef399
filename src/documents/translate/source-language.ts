// The language a document is written in, when `signet translate` is not told (--from): the script
// its letters are in (Han, kana, Hangul, Arabic, Cyrillic …), and for Latin script the language whose
// commonest small words it uses most ("the", "and" against "el", "los" …). A guess a person can
// override; undefined when the document has too few letters to say.
import type { ParsedDocument } from '../document.ts';

const SCRIPTS: Array<[RegExp, string]> = [
  [/[\p{Script=Hiragana}\p{Script=Katakana}]/gu, 'ja'],
  [/\p{Script=Hangul}/gu, 'ko'],
  [/\p{Script=Han}/gu, 'zh'],
  [/\p{Script=Arabic}/gu, 'ar'],
  [/\p{Script=Hebrew}/gu, 'he'],
  [/\p{Script=Cyrillic}/gu, 'ru'],
  [/\p{Script=Greek}/gu, 'el'],
  [/\p{Script=Thai}/gu, 'th'],
  [/\p{Script=Devanagari}/gu, 'hi'],
];

/** The commonest function words of the Latin-script languages the engines translate most. */
const SMALL_WORDS: Record<string, string[]> = {
  en: ['the', 'and', 'of', 'to', 'is', 'in', 'that', 'for', 'with', 'are', 'this', 'be'],
  es: ['el', 'la', 'los', 'las', 'y', 'que', 'del', 'en', 'es', 'por', 'con', 'una'],
  fr: ['le', 'les', 'des', 'et', 'est', 'du', 'une', 'que', 'dans', 'pour', 'sur', 'pas'],
  de: ['der', 'die', 'das', 'und', 'ist', 'nicht', 'mit', 'den', 'ein', 'zu', 'auf', 'für'],
  pt: ['os', 'as', 'não', 'uma', 'da', 'do', 'que', 'em', 'com', 'para', 'são', 'é'],
  it: ['il', 'gli', 'che', 'di', 'è', 'della', 'per', 'una', 'sono', 'con', 'non', 'del'],
};

const MIN_LETTERS = 20;

export function guessSourceLanguage(document: ParsedDocument): string | undefined {
  const text = document.pages.flatMap((page) => page.blocks.map((block) => block.text)).join('\n');
  const letters = (text.match(/\p{L}/gu) ?? []).length;
  if (letters < MIN_LETTERS) return undefined;
  // A script of its own wins when a fifth of the letters are in it (a Chinese page quotes English names).
  for (const [pattern, language] of SCRIPTS) if ((text.match(pattern) ?? []).length >= letters / 5) return language;
  const words = text.toLowerCase().match(/\p{L}+/gu) ?? [];
  let best: string | undefined;
  let bestCount = 0;
  for (const [language, small] of Object.entries(SMALL_WORDS)) {
    const set = new Set(small);
    const count = words.filter((w) => set.has(w)).length;
    if (count > bestCount) { best = language; bestCount = count; }
  }
  return bestCount >= 3 ? best : undefined;
}
