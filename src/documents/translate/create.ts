// The one place that turns SIGNET_TRANSLATE_* settings into a Translator.
import type { Settings } from '../../config/settings.ts';
import { createApertium, type ApertiumOptions } from './apertium.ts';
import { createLibreTranslate } from './libretranslate.ts';
import { createOpenAi } from './openai.ts';
import type { HttpEngineOptions } from './retry.ts';
import { NoTranslatorConfiguredError, type Translator } from './translator.ts';

/** Tuning a caller (or a test) may pass beside the settings. */
export type TranslatorTuning = { http?: HttpEngineOptions; apertium?: ApertiumOptions };

export function createTranslator(settings: Settings['translate'], tuning: TranslatorTuning = {}): Translator {
  switch (settings.engine) {
    case undefined:
      throw new NoTranslatorConfiguredError();
    case 'apertium':
      return createApertium(tuning.apertium);
    case 'libretranslate':
      return createLibreTranslate({ ...tuning.http, url: requireUrl(settings.engine, settings.url), apiKey: settings.apiKey });
    case 'openai':
      if (!settings.model) {
        throw new NoTranslatorConfiguredError(
          'SIGNET_TRANSLATE_ENGINE is openai but no model is set: set SIGNET_TRANSLATE_MODEL to a model the service at SIGNET_TRANSLATE_URL serves (for example gpt-4o-mini).',
        );
      }
      return createOpenAi({ ...tuning.http, url: requireUrl(settings.engine, settings.url), model: settings.model, apiKey: settings.apiKey });
  }
}

function requireUrl(engine: string, url: string | undefined): string {
  if (!url) throw new NoTranslatorConfiguredError(`SIGNET_TRANSLATE_ENGINE is ${engine} but no address is set: set SIGNET_TRANSLATE_URL to the service's URL.`);
  return url;
}
