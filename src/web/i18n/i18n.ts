// Choosing the page language: the `signet_lang` cookie (set by the switch) wins, then the language an
// OpenID application asked for with `ui_locales` (for the pages of that sign-in), then Accept-Language,
// then English — so automation without Accept-Language sees the operator contract's landmark names.
import { en, type Messages } from './en.ts';
import { zhCN } from './zh-CN.ts';

export const LOCALES = ['en', 'zh-CN'] as const;
export type Locale = (typeof LOCALES)[number];
export const DEFAULT_LOCALE: Locale = 'en';
export const LANGUAGE_COOKIE = 'signet_lang';
/** The locale an OpenID application asked for with ui_locales, kept while its sign-in is pending (issue 36). */
export const UI_LOCALE_COOKIE = 'signet_ui_locale';

const CATALOGS: Record<Locale, Messages> = { en, 'zh-CN': zhCN };

export function messages(locale: Locale): Messages {
  return CATALOGS[locale];
}

export function isLocale(value: unknown): value is Locale {
  return typeof value === 'string' && (LOCALES as readonly string[]).includes(value);
}

/** Maps one language tag to a locale we have: zh, zh-CN, zh-Hans(-*), zh-SG → zh-CN; en-* → en. */
function localeOfTag(tag: string): Locale | undefined {
  const lower = tag.toLowerCase();
  if (lower === 'zh' || lower === 'zh-cn' || lower === 'zh-sg' || lower.startsWith('zh-hans')) return 'zh-CN';
  if (lower === 'en' || lower.startsWith('en-')) return 'en';
  return undefined;
}

/** The best locale for an Accept-Language header, by q-value; undefined when nothing matches. */
export function localeFromAcceptLanguage(header: string | undefined): Locale | undefined {
  if (!header) return undefined;
  const ranked = header
    .split(',')
    .map((part, index) => {
      const [tag = '', ...params] = part.trim().split(';');
      const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
      const quality = q === undefined ? 1 : Number(q.slice(2));
      return { tag: tag.trim(), quality: Number.isFinite(quality) ? quality : 0, index };
    })
    .filter((entry) => entry.tag.length > 0 && entry.quality > 0)
    .sort((a, b) => b.quality - a.quality || a.index - b.index);
  for (const entry of ranked) {
    const locale = localeOfTag(entry.tag);
    if (locale) return locale;
  }
  return undefined;
}

/**
 * OpenID Connect Core §3.1.2.1 `ui_locales`: "space-separated list of BCP47 language tag values, ordered
 * by preference" — the first one Signet has pages in; undefined when it has none of them (then the
 * browser's own preference decides, as Core allows: "An error SHOULD NOT result if some or all of the
 * requested locales are not supported").
 */
export function localeFromUiLocales(tags: readonly string[] | undefined): Locale | undefined {
  for (const tag of tags ?? []) {
    const locale = localeOfTag(tag);
    if (locale) return locale;
  }
  return undefined;
}

export function chooseLocale(cookieValue: string | undefined, acceptLanguage: string | undefined, askedByApplication?: string | undefined): Locale {
  if (isLocale(cookieValue)) return cookieValue;
  if (isLocale(askedByApplication)) return askedByApplication;
  return localeFromAcceptLanguage(acceptLanguage) ?? DEFAULT_LOCALE;
}

const branded = new Map<string, Messages>();

/** Fills `{product}` in every plain string of a catalog with the product name (functions are kept as they are). */
function fillProduct<T>(value: T, productName: string): T {
  if (typeof value === 'string') return value.replaceAll('{product}', productName) as T;
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, fillProduct(inner, productName)])) as T;
  }
  return value;
}

/** The catalog of a locale with the operator's product name (SIGNET_PRODUCT_NAME) filled in; made once per pair. */
export function brandedMessages(locale: Locale, productName: string): Messages {
  const key = `${locale}\n${productName}`;
  let catalog = branded.get(key);
  if (!catalog) {
    catalog = { ...fillProduct(CATALOGS[locale], productName), productName };
    branded.set(key, catalog);
  }
  return catalog;
}
