// The document's language for the HTML's `lang` (screen readers choose their voice by it), guessed
// from its text when nobody said: the script decides where it is one language's (Hangul, kana,
// Hebrew, Greek, Thai …); Latin text is told apart by its commonest words. A guess, so a caller that
// knows the language (a translation's target) passes it instead.

const SCRIPTS: Array<[lang: string, pattern: RegExp]> = [
  ['ko', /\p{Script=Hangul}/u],
  ['ja', /[\p{Script=Hiragana}\p{Script=Katakana}]/u],
  ['zh', /\p{Script=Han}/u],
  ['ar', /\p{Script=Arabic}/u],
  ['he', /\p{Script=Hebrew}/u],
  ['ru', /\p{Script=Cyrillic}/u],
  ['el', /\p{Script=Greek}/u],
  ['th', /\p{Script=Thai}/u],
  ['hi', /\p{Script=Devanagari}/u],
  ['latin', /\p{Script=Latin}/u],
];

/** The commonest short words of the languages most often written in Latin letters. */
const COMMON_WORDS: Record<string, string[]> = {
  en: ['the', 'and', 'of', 'to', 'is', 'in', 'that', 'for', 'with', 'are', 'this', 'be'],
  de: ['der', 'die', 'und', 'das', 'ist', 'nicht', 'mit', 'den', 'ein', 'eine', 'zu', 'auf'],
  fr: ['le', 'la', 'les', 'des', 'une', 'du', 'pour', 'dans', 'que', 'pas', 'sur', 'au'],
  es: ['el', 'la', 'los', 'las', 'que', 'del', 'por', 'una', 'con', 'para', 'es', 'se'],
  it: ['il', 'di', 'che', 'la', 'per', 'non', 'una', 'sono', 'della', 'con', 'gli', 'nel'],
  pt: ['de', 'que', 'os', 'do', 'da', 'em', 'uma', 'para', 'com', 'não', 'ao', 'das'],
  nl: ['de', 'het', 'een', 'en', 'van', 'is', 'dat', 'niet', 'voor', 'met', 'zijn', 'op'],
};

/** Letters Persian writes and Arabic does not (پ چ ژ گ, and the Persian ye and kaf). */
const PERSIAN = /[\u067E\u0686\u0698\u06AF\u06CC\u06A9]/gu;
/** Letters Ukrainian writes and Russian does not. */
const UKRAINIAN = /[іїєґІЇЄҐ]/gu;

/** How much text is enough to tell: the first 20,000 characters. */
const SAMPLE = 20_000;

/** A BCP 47 language tag for the text ("en" when nothing tells). */
export function guessLanguage(text: string): string {
  const sample = text.slice(0, SAMPLE);
  const counts = new Map<string, number>();
  for (const char of sample) {
    const script = SCRIPTS.find(([, pattern]) => pattern.test(char));
    if (script) counts.set(script[0], (counts.get(script[0]) ?? 0) + 1);
  }
  // Japanese writes Han and kana together: any real share of kana makes Han text Japanese.
  const kana = counts.get('ja') ?? 0;
  if (kana > 0 && kana >= (counts.get('zh') ?? 0) / 10) counts.set('ja', kana + (counts.get('zh') ?? 0));
  const [script] = [...counts.entries()].sort((a, b) => b[1] - a[1])[0] ?? ['latin'];
  if (script === 'ar') return (sample.match(PERSIAN)?.length ?? 0) > (counts.get('ar') ?? 0) / 50 ? 'fa' : 'ar';
  if (script === 'ru') return (sample.match(UKRAINIAN)?.length ?? 0) > (counts.get('ru') ?? 0) / 100 ? 'uk' : 'ru';
  if (script !== 'latin') return script;
  const words = sample.toLowerCase().match(/\p{L}+/gu) ?? [];
  const frequency = new Map<string, number>();
  for (const word of words) frequency.set(word, (frequency.get(word) ?? 0) + 1);
  const score = (lang: string) => (COMMON_WORDS[lang] ?? []).reduce((sum, word) => sum + (frequency.get(word) ?? 0), 0);
  const [best = 'en', bestScore = 0] = Object.keys(COMMON_WORDS).map((lang) => [lang, score(lang)] as const).sort((a, b) => b[1] - a[1])[0] ?? [];
  // English unless another language clearly leads (a few borrowed words, Lorem ipsum or a table of figures do not make one).
  return bestScore >= 5 && bestScore >= 2 * score('en') ? best : 'en';
}

/** Right-to-left scripts: a block whose first letter is in one is set right to left. */
const RTL_LETTER = /[\p{Script=Hebrew}\p{Script=Arabic}\p{Script=Syriac}\p{Script=Thaana}\p{Script=Nko}]/u;

/** The direction of a text by its first letter (as `dir="auto"` would decide), "ltr" when it has none. */
export function textDirection(text: string): 'rtl' | 'ltr' {
  const first = /\p{L}/u.exec(text);
  return first && RTL_LETTER.test(first[0]) ? 'rtl' : 'ltr';
}
