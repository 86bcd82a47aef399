// One interface in front of every translation engine, so the worker never knows which one runs.
// Modelled on LibreTranslate's own API: a list of segments in, the same number of translations out.

/** ISO 639-1 codes: 'en', 'es', 'zh', … */
export type LanguagePair = { source: string; target: string };

export type TranslationEngine = 'apertium' | 'libretranslate' | 'openai';

export interface Translator {
  readonly engine: TranslationEngine;
  /** The pairs this engine can translate, or undefined when it cannot say (openai). Cached after the first call. */
  languagePairs(signal?: AbortSignal): Promise<LanguagePair[] | undefined>;
  /** Translates segments in order; returns exactly one string per input segment. */
  translate(segments: string[], pair: LanguagePair, signal?: AbortSignal, hints?: TranslationHints): Promise<string[]>;
}

/**
 * What an engine that reads context may use for consistent terms across a document (issue 18); the
 * OpenAI-compatible engine puts it in its prompt, the others translate segment by segment.
 */
export type TranslationHints = {
  /** Earlier segments of the same document with the translations they got. */
  context?: Array<{ source: string; translation: string }>;
  /** The task's glossary; its terms arrive in the segments as placeholder tokens to copy unchanged. */
  glossary?: Record<string, string>;
  /**
   * The segments are HTML (issue 34): escaped text (&amp; &lt; &gt;) with `<span class="sN">` tags
   * around stretches set in another style; the translations come back the same way, each tag around
   * the translation of the words it marked (Apertium's HTML mode, LibreTranslate's `format: html`,
   * the OpenAI-compatible engine told to keep them).
   */
  markup?: boolean;
};

export type TranslationErrorOptions = {
  /** true when the same request may succeed later (network fault, time-out, 429, 5xx). */
  retryable: boolean;
  /** The HTTP status the service answered, when there was one. */
  status?: number;
  /** How long the service asked us to wait (its Retry-After), in milliseconds. */
  retryAfterMs?: number;
  cause?: unknown;
};

/** A translation that failed, with a message a person can act on. Never carries an API key. */
export class TranslationError extends Error {
  readonly retryable: boolean;
  readonly status: number | undefined;
  readonly retryAfterMs: number | undefined;
  constructor(message: string, options: TranslationErrorOptions) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'TranslationError';
    this.retryable = options.retryable;
    this.status = options.status;
    this.retryAfterMs = options.retryAfterMs;
  }
}

/** The engine is there but does not offer this pair. */
export class UnsupportedLanguagePairError extends Error {
  readonly pair: LanguagePair;
  constructor(engine: TranslationEngine, pair: LanguagePair, available: LanguagePair[] | undefined) {
    const offered = available && available.length > 0 ? available.map(formatPair).join(', ') : 'none';
    super(`${engine} cannot translate ${formatPair(pair)}; it offers: ${offered}. Choose one of those pairs or configure another engine.`);
    this.name = 'UnsupportedLanguagePairError';
    this.pair = pair;
  }
}

const HOW_TO_CONFIGURE =
  'set SIGNET_TRANSLATE_ENGINE to apertium, libretranslate or openai (and SIGNET_TRANSLATE_URL for libretranslate and openai, SIGNET_TRANSLATE_MODEL for openai)';

/** No engine, or an engine without the settings it needs. The message names the setting to add. */
export class NoTranslatorConfiguredError extends Error {
  constructor(message = `No translation engine is configured: ${HOW_TO_CONFIGURE}.`) {
    super(message);
    this.name = 'NoTranslatorConfiguredError';
  }
}

export function formatPair(pair: LanguagePair): string {
  return `${pair.source}→${pair.target}`;
}

export function samePair(a: LanguagePair, b: LanguagePair): boolean {
  return a.source === b.source && a.target === b.target;
}

/** Throws UnsupportedLanguagePairError when the engine lists its pairs and this one is not among them. */
export async function ensurePairSupported(translator: Translator, pair: LanguagePair, signal?: AbortSignal): Promise<void> {
  const pairs = await translator.languagePairs(signal);
  if (pairs !== undefined && !pairs.some((p) => samePair(p, pair))) {
    throw new UnsupportedLanguagePairError(translator.engine, pair, pairs);
  }
}

/** Remembers the first successful result of `load`; a failure is forgotten so the next call asks again. */
export function cacheSuccess<T>(load: (signal?: AbortSignal) => Promise<T>): (signal?: AbortSignal) => Promise<T> {
  let cached: Promise<T> | undefined;
  return (signal) => {
    if (cached === undefined) {
      const pending = load(signal);
      cached = pending;
      pending.catch(() => {
        if (cached === pending) cached = undefined;
      });
    }
    return cached;
  };
}
