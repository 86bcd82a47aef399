// A per-task glossary (issue 18: "a per-task glossary field in the API and on /tasks, optional,
// {"term":"translation"} pairs, applied before and checked after translation").
//
// Before: each term in a segment is replaced by a placeholder token every engine passes through
// unchanged (letters and digits only, no word of any language: Apertium's -u mode and language
// models keep such tokens as names). After: each placeholder becomes the term's translation; a
// placeholder the engine lost is counted, and the segment is translated again without protection
// so no text is lost.

export type Glossary = Record<string, string>;

export const GLOSSARY_MAX_ENTRIES = 200;
export const GLOSSARY_MAX_TERM = 100;
export const GLOSSARY_MAX_TRANSLATION = 200;
/** The largest glossary field accepted, in characters of JSON. */
export const GLOSSARY_MAX_JSON = 16_384;

/** A glossary a person sent that cannot be used; the message says what to change. */
export class GlossaryError extends Error {
  override name = 'GlossaryError';
}

/** Reads and checks a glossary sent as JSON: an object of up to 200 non-empty "term": "translation" strings. */
export function parseGlossary(json: string): Glossary {
  if (json.length > GLOSSARY_MAX_JSON) throw new GlossaryError(`The glossary is larger than ${GLOSSARY_MAX_JSON} characters; keep it to the terms that matter.`);
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw new GlossaryError('The glossary is not valid JSON. Send an object of "term": "translation" pairs, e.g. {"invoice": "factura"}.');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new GlossaryError('The glossary must be a JSON object of "term": "translation" pairs, e.g. {"invoice": "factura"}.');
  }
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > GLOSSARY_MAX_ENTRIES) throw new GlossaryError(`The glossary has ${entries.length} terms; at most ${GLOSSARY_MAX_ENTRIES} are allowed.`);
  const glossary: Glossary = {};
  for (const [rawTerm, rawTranslation] of entries) {
    const term = rawTerm.replace(/\s+/g, ' ').trim();
    if (typeof rawTranslation !== 'string') throw new GlossaryError(`The translation of "${term.slice(0, 40)}" must be a string.`);
    const translation = rawTranslation.replace(/\s+/g, ' ').trim();
    if (term === '' || translation === '') throw new GlossaryError('Glossary terms and their translations must not be empty.');
    if (term.length > GLOSSARY_MAX_TERM || translation.length > GLOSSARY_MAX_TRANSLATION) {
      throw new GlossaryError(`Glossary terms are at most ${GLOSSARY_MAX_TERM} characters and translations at most ${GLOSSARY_MAX_TRANSLATION}.`);
    }
    // eslint-disable-next-line no-control-regex
    if (/[\u0000-\u001f\u007f]/.test(term + translation)) throw new GlossaryError('Glossary terms and translations must not contain control characters.');
    glossary[term] = translation;
  }
  return glossary;
}

const placeholder = (k: number) => `ZQX${k}QZ`;
const PLACEHOLDER = /ZQX(\d+)QZ/g;
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Compiled once per document: longer terms first, so "credit note" wins over "note". */
export type GlossaryMatcher = { terms: string[]; translations: string[]; pattern: RegExp | undefined };

export function compileGlossary(glossary: Glossary | undefined): GlossaryMatcher {
  const terms = Object.keys(glossary ?? {}).sort((a, b) => b.length - a.length);
  const translations = terms.map((t) => glossary![t]!);
  // Whole words where a term starts or ends with a letter or digit; CJK terms match anywhere.
  const alternatives = terms.map((t) => `${/^[\p{L}\p{N}]/u.test(t) && !/^\p{Script=Han}/u.test(t) ? '(?<![\\p{L}\\p{N}])' : ''}${escape(t)}${/[\p{L}\p{N}]$/u.test(t) && !/\p{Script=Han}$/u.test(t) ? '(?![\\p{L}\\p{N}])' : ''}`);
  return { terms, translations, pattern: terms.length > 0 ? new RegExp(alternatives.join('|'), 'giu') : undefined };
}

/** The segment with each term replaced by its placeholder, and which terms it held. */
export function protect(text: string, matcher: GlossaryMatcher): { text: string; used: number[] } {
  if (!matcher.pattern) return { text, used: [] };
  const used: number[] = [];
  const lower = matcher.terms.map((t) => t.toLocaleLowerCase());
  const protectedText = text.replace(matcher.pattern, (match) => {
    const k = lower.indexOf(match.toLocaleLowerCase());
    used.push(k);
    return placeholder(k);
  });
  return { text: protectedText, used };
}

/** The translation with placeholders replaced; undefined when a placeholder the source held is missing. */
export function restore(translation: string, used: number[], matcher: GlossaryMatcher): string | undefined {
  const found = [...translation.matchAll(PLACEHOLDER)].map((m) => Number(m[1]));
  if (used.some((k) => !found.includes(k))) return undefined;
  return translation.replace(PLACEHOLDER, (whole, k: string) => matcher.translations[Number(k)] ?? whole);
}

/** Checks a finished translation: every term of the source appears as its glossary translation. */
export function followsGlossary(source: string, translation: string, matcher: GlossaryMatcher): boolean {
  const { used } = protect(source, matcher);
  return used.every((k) => translation.toLocaleLowerCase().includes(matcher.translations[k]!.toLocaleLowerCase()));
}
