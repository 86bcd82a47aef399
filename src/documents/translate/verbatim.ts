// What inside a sentence is never sent to a translation engine (issue 42, part 2: "numbers-only
// runs, URLs, and formula runs … are kept in the source's glyphs … and never sent to the engine —
// placeholders in the text sent, restored after"), as PDFMathTranslate does with its {v0}:
//   - a stretch the reader found set in a mathematics font (the block's `formulas`: CMMI, CMSY,
//     CMEX, MSBM, Symbol, STIX Math, Cambria Math …, pdf/fonts.ts);
//   - a stretch made mostly of mathematical symbols (Unicode's Sm, as PDFMathTranslate's
//     `vflag` tests the category, and Greek letters standing for variables), "α ≤ 2β";
//   - a URL or e-mail address;
//   - an identifier joined by underscores ("CLIENT_HOST", "VERIFY_GROUP_FOR_USER", "user_name"): code
//     set inside prose or a table cell, which no language translates;
//   - a number with no letter in it ("3.14", "2,048", "10%", "1/2", "2009–2010");
//   - glyphs no reader can name (a symbol font's codes without a ToUnicode map: table-as-picture's check boxes).
// Each becomes a token every engine passes through unchanged (letters only, no word of any language,
// as the glossary's placeholders), and comes back as the source's own characters. An engine that
// lost a token: the caller sends the segment again unprotected, so no text is lost.

const token = (k: number) => `ZQV${k}QZ`;
const TOKEN = /ZQV(\d+)QZ/g;

const URL_OR_EMAIL = /(?:https?|ftp):\/\/[^\s<>"]+[^\s<>".,;:!?)\]]|www\.[^\s<>"]+[^\s<>".,;:!?)\]]|[\w.+-]+@[\w-]+(?:\.[\w-]+)+/giu;
/** Glyphs no reader can name (a symbol font without a usable ToUnicode map: controls, private use): never a word. */
const UNNAMED = /[\u0000-\u0008\u000e-\u001f\u007f-\u009f\ue000-\uf8ff\ufffd]+/gu;
const NUMBER = /(?<![\p{L}\p{N}_])[+\-−±]?\d+(?:[.,:/]\d+)*%?(?:[–-]\d+(?:[.,]\d+)*%?)?(?![\p{L}\p{N}_]|[-‐]\p{L})/gu;
/** Letters and digits joined by underscores, as a program names things: never a word of a language. */
const IDENTIFIER = /(?<![\p{L}\p{N}_])[\p{L}\p{N}]+(?:_[\p{L}\p{N}]+)+(?![\p{L}\p{N}_])/gu;
/** A word that may belong to a formula: symbols, digits, brackets and single letters ("f(x)", "≤", "2β"). */
const MATHISH = /^(?:[\p{Sm}\p{Script=Greek}\p{N}()[\]{}|,.'_^*/-]|(?<!\p{L})\p{L}(?!\p{L}))+$/u;
const MATH_SIGN = /[\p{Sm}\p{Script=Greek}]/u;

/** Replaces each stretch of formula-like words holding a math symbol or Greek letter ("α ≤ 2β", "x + y = 1"). */
function protectMathRuns(text: string, keep: (s: string) => string): string {
  const words = text.split(/(\s+)/);
  const out: string[] = [];
  let i = 0;
  while (i < words.length) {
    if (i % 2 === 1) { out.push(words[i++]!); continue; }
    let j = i;
    while (j < words.length && (j % 2 === 1 ? j + 1 < words.length && MATHISH.test(words[j + 1]!) : MATHISH.test(words[j]!))) j++;
    if (j === i) { out.push(words[i++]!); continue; }
    // words[i..j) alternate word, space, word …; ends on a word.
    const stretch = words.slice(i, j).join('');
    const core = stretch.replace(/[.,;:]+$/u, '');
    if (MATH_SIGN.test(core) && !/^[\s+\-=<>|~*/]+$/u.test(core)) out.push(keep(core) + stretch.slice(core.length));
    else out.push(stretch);
    i = j;
  }
  return out.join('');
}

export type Protected = { text: string; kept: string[] };

/**
 * The segment with its formulas, math-symbol stretches, URLs and numbers replaced by tokens. `formulas`:
 * the block's stretches in a math font; `markup`: the segment is HTML (styles.ts), whose tags are left alone.
 */
export function protectVerbatim(text: string, formulas: readonly string[] = [], markup = false): Protected {
  const kept: string[] = [];
  const keep = (s: string) => {
    let k = kept.indexOf(s);
    if (k < 0) k = kept.push(s) - 1;
    return token(k);
  };
  const escapeHtml = (s: string) => (markup ? s.replace(/[&<>]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;' })[c]!) : s);
  const protectPlain = (part: string) => {
    let out = part;
    // Longest formula first, so "x_i ≤ n" wins over "x_i".
    for (const formula of [...formulas].map(escapeHtml).sort((a, b) => b.length - a.length)) {
      if (formula.trim() === '' || !out.includes(formula)) continue;
      // Whole words only: the formula "T" is not the T of "The".
      const pattern = new RegExp(`${/^[\p{L}\p{N}]/u.test(formula) ? '(?<![\\p{L}\\p{N}])' : ''}${formula.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}${/[\p{L}\p{N}]$/u.test(formula) ? '(?![\\p{L}\\p{N}])' : ''}`, 'gu');
      out = out.replace(pattern, () => keep(formula));
    }
    out = out.replace(UNNAMED, keep);
    out = out.replace(URL_OR_EMAIL, keep);
    out = out.replace(IDENTIFIER, keep);
    out = protectMathRuns(out, keep);
    return out.replace(NUMBER, keep);
  };
  const protectedText = markup
    ? (text.match(/<[^>]*>|[^<]+/g) ?? []).map((part) => (part.startsWith('<') ? part : protectPlain(part))).join('')
    : protectPlain(text);
  return { text: protectedText, kept };
}

/** The translation with each token back as the source's characters; undefined when a token is missing. */
export function restoreVerbatim(translation: string, kept: readonly string[]): string | undefined {
  const found = new Set([...translation.matchAll(TOKEN)].map((m) => Number(m[1])));
  if (kept.some((_, k) => !found.has(k))) return undefined;
  return translation.replace(TOKEN, (whole, k: string) => kept[Number(k)] ?? whole);
}
