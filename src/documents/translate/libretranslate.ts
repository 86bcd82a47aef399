// LibreTranslate (https://libretranslate.com/docs): POST /translate takes an array `q` and answers an
// array `translatedText` of the same length; GET /languages lists each language with its targets.
import { DEFAULT_RETRY, DEFAULT_TIMEOUT_MS, displayUrl, requestJson, withRetry, type HttpEngineOptions } from './retry.ts';
import { cacheSuccess, samePair, TranslationError, UnsupportedLanguagePairError, type LanguagePair, type Translator } from './translator.ts';

export type LibreTranslateOptions = HttpEngineOptions & { url: string; apiKey?: string };

/** The service's language list, with our ISO 639-1 codes mapped to the codes it expects. */
type Languages = { pairs: LanguagePair[]; serverCode: Map<string, string> };

export function createLibreTranslate(options: LibreTranslateOptions): Translator {
  const base = options.url.replace(/\/+$/, '');
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;

  const call = (path: string, body: unknown, signal: AbortSignal | undefined) =>
    withRetry(
      () =>
        requestJson({
          engine: 'libretranslate',
          url: `${base}${path}`,
          method: body === undefined ? 'GET' : 'POST',
          body,
          timeoutMs,
          signal,
          secrets: [options.apiKey],
        }),
      { ...DEFAULT_RETRY, ...options.retry, signal },
    );

  const languages = cacheSuccess((signal) => call('/languages', undefined, signal).then((body) => parseLanguages(body, `${base}/languages`)));

  return {
    engine: 'libretranslate',
    async languagePairs(signal) {
      return (await languages(signal)).pairs;
    },
    async translate(segments, pair, signal, hints) {
      if (segments.length === 0) return [];
      const known = await languages(signal);
      if (!known.pairs.some((p) => samePair(p, pair))) throw new UnsupportedLanguagePairError('libretranslate', pair, known.pairs);
      const body = await call(
        '/translate',
        {
          q: segments,
          source: known.serverCode.get(pair.source) ?? pair.source,
          target: known.serverCode.get(pair.target) ?? pair.target,
          // Markup (style tags around words) goes as HTML, which LibreTranslate keeps around their translation.
          format: hints?.markup ? 'html' : 'text',
          // LibreTranslate takes its key in the body, not a header.
          ...(options.apiKey ? { api_key: options.apiKey } : {}),
        },
        signal,
      );
      return parseTranslations(body, segments.length, `${base}/translate`);
    },
  };
}

function parseTranslations(body: unknown, expected: number, url: string): string[] {
  const translated = typeof body === 'object' && body !== null && 'translatedText' in body ? body.translatedText : undefined;
  if (!Array.isArray(translated) || !translated.every((t): t is string => typeof t === 'string')) {
    throw unexpectedShape(url, 'an object {"translatedText": [strings]}');
  }
  if (translated.length !== expected) {
    throw new TranslationError(`libretranslate at ${displayUrl(url)} returned ${translated.length} translations for ${expected} segments; check the service's version (it must accept an array q)`, {
      retryable: false,
    });
  }
  return translated;
}

/** `[{code, name, targets: [...]}]`; a version without `targets` translates between every listed language. */
function parseLanguages(body: unknown, url: string): Languages {
  if (!Array.isArray(body)) throw unexpectedShape(url, 'an array of {"code", "targets"}');
  const entries: Array<{ code: string; targets: string[] | undefined }> = [];
  for (const entry of body) {
    if (typeof entry !== 'object' || entry === null || !('code' in entry) || typeof entry.code !== 'string') throw unexpectedShape(url, 'an array of {"code", "targets"}');
    const targets = 'targets' in entry ? entry.targets : undefined;
    if (targets !== undefined && !(Array.isArray(targets) && targets.every((t): t is string => typeof t === 'string'))) {
      throw unexpectedShape(url, 'an array of {"code", "targets": [strings]}');
    }
    entries.push({ code: entry.code, targets });
  }
  const serverCode = new Map<string, string>();
  for (const { code } of entries) {
    const ours = ourCode(code);
    // Prefer the service's own plain code when it lists both "zh" and "zh-Hans".
    if (!serverCode.has(ours) || code === ours) serverCode.set(ours, code);
  }
  const all = entries.map((e) => e.code);
  const pairs: LanguagePair[] = [];
  for (const { code, targets } of entries) {
    for (const target of targets ?? all) {
      const pair = { source: ourCode(code), target: ourCode(target) };
      if (pair.source !== pair.target && !pairs.some((p) => samePair(p, pair))) pairs.push(pair);
    }
  }
  return { pairs, serverCode };
}

/** LibreTranslate 1.6+ names Simplified Chinese "zh-Hans" (and Traditional "zt"); we speak ISO 639-1 "zh". */
function ourCode(code: string): string {
  if (code === 'zh-Hans') return 'zh';
  if (code === 'zt') return 'zh-Hant';
  return code;
}

function unexpectedShape(url: string, expected: string): TranslationError {
  return new TranslationError(`libretranslate at ${displayUrl(url)} answered in an unexpected shape (expected ${expected}); check that SIGNET_TRANSLATE_URL points at LibreTranslate`, {
    retryable: false,
  });
}
