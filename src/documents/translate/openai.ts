// Any OpenAI-compatible chat completions service (OpenAI, vLLM, Ollama, llama.cpp's server …).
// Segments go out as a JSON array of {id, text} and must come back as one, each id exactly once,
// so a model that merges, drops or invents a segment is caught instead of shifting every later one.
import { DEFAULT_RETRY, DEFAULT_TIMEOUT_MS, displayUrl, requestJson, withRetry, type HttpEngineOptions } from './retry.ts';
import { TranslationError, type LanguagePair, type TranslationHints, type Translator } from './translator.ts';

export type OpenAiOptions = HttpEngineOptions & { url: string; model: string; apiKey?: string };

/** `{url}/v1/chat/completions`, without doubling a `/v1` the setting already ends with. */
export function chatCompletionsUrl(url: string): string {
  const base = url.replace(/\/+$/, '');
  return /\/v1$/.test(base) ? `${base}/chat/completions` : `${base}/v1/chat/completions`;
}

export function createOpenAi(options: OpenAiOptions): Translator {
  const url = chatCompletionsUrl(options.url);
  const where = `openai at ${displayUrl(url)} (model ${options.model})`;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;

  const complete = (pair: LanguagePair, items: Array<{ id: number; text: string }>, signal: AbortSignal | undefined, hints: TranslationHints | undefined) =>
    withRetry(
      () =>
        requestJson({
          engine: 'openai',
          url,
          method: 'POST',
          headers: options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {},
          body: {
            model: options.model,
            temperature: 0,
            messages: [
              { role: 'system', content: systemPrompt(pair, hints) },
              { role: 'user', content: JSON.stringify(items) },
            ],
          },
          timeoutMs,
          signal,
          secrets: [options.apiKey],
        }),
      { ...DEFAULT_RETRY, ...options.retry, signal },
    );

  return {
    engine: 'openai',
    async languagePairs() {
      // A language model does not list its languages; any pair may be asked for.
      return undefined;
    },
    async translate(segments, pair, signal, hints) {
      if (segments.length === 0) return [];
      const items = segments.map((text, id) => ({ id, text }));
      let problem = '';
      // spec: "missing or extra ids → retry that batch once, then TranslationError"
      for (let attempt = 1; attempt <= 2; attempt++) {
        const content = messageContent(await complete(pair, items, signal, hints));
        if (content === undefined) {
          throw new TranslationError(
            `${where} answered in an unexpected shape (expected choices[0].message.content); check that SIGNET_TRANSLATE_URL points at an OpenAI-compatible service`,
            { retryable: false },
          );
        }
        const answer = parseIdArray(content, segments.length);
        if (Array.isArray(answer)) return answer;
        problem = answer.problem;
      }
      throw new TranslationError(`${where} did not return one translation per segment twice in a row (${problem}); try a more capable model`, {
        retryable: false,
      });
    },
  };
}

/** The longest run of earlier segments sent as context, in characters (a prompt stays small). */
const CONTEXT_CHARS = 2000;

function systemPrompt(pair: LanguagePair, hints?: TranslationHints): string {
  const from = languageName(pair.source);
  const to = languageName(pair.target);
  const lines = [
    `You are a translator. Translate every text from ${from} into ${to}.`,
    'The user sends a JSON array of objects {"id": number, "text": string}.',
    `Answer ONLY with a JSON array of objects {"id": number, "text": string}: the same ids, each exactly once, each text translated into ${to}.`,
    'Keep line breaks, numbers, names and punctuation marks such as bullets. Do not merge or split items. Do not add notes, explanations or code fences.',
  ];
  if (hints?.markup) {
    lines.push('Each text is HTML: <span class="s1">…</span> tags mark words set in another style (bold, italic, a colour). Keep every tag exactly as it is, around the translation of the words it marks, and keep &amp;, &lt; and &gt; as they are.');
  }
  if (hints?.glossary && Object.keys(hints.glossary).length > 0) {
    lines.push('Tokens such as ZQX0QZ stand for glossary terms: copy each one unchanged into the translation, where the term belongs.');
  }
  // Consistent terms across the document (issue 18): the segments translated before this batch.
  const context: string[] = [];
  let size = 0;
  for (const entry of [...(hints?.context ?? [])].reverse()) {
    const line = JSON.stringify(entry);
    if (size + line.length > CONTEXT_CHARS) break;
    context.unshift(line);
    size += line.length;
  }
  if (context.length > 0) {
    lines.push('Earlier parts of the same document were translated as follows; translate the same terms the same way:', ...context);
  }
  return lines.join('\n');
}

/** "Spanish (es)": the English name helps the model, the code keeps it unambiguous. */
function languageName(code: string): string {
  try {
    const name = new Intl.DisplayNames(['en'], { type: 'language' }).of(code);
    return name && name !== code ? `${name} (${code})` : code;
  } catch {
    return code;
  }
}

function messageContent(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null || !('choices' in body) || !Array.isArray(body.choices)) return undefined;
  const choice: unknown = body.choices[0];
  if (typeof choice !== 'object' || choice === null || !('message' in choice)) return undefined;
  const message = choice.message;
  if (typeof message !== 'object' || message === null || !('content' in message)) return undefined;
  // A refusal comes back as null content: an answer without translations, worth the one retry.
  return typeof message.content === 'string' ? message.content : message.content === null ? '' : undefined;
}

/** The translations in id order, or what is wrong with the answer. Tolerates a ```json fence around it. */
export function parseIdArray(content: string, count: number): string[] | { problem: string } {
  const fenced = /^\s*```[a-zA-Z]*\s*\n?([\s\S]*?)\n?\s*```\s*$/.exec(content);
  let parsed: unknown;
  try {
    parsed = JSON.parse(fenced ? fenced[1]! : content);
  } catch {
    return { problem: 'the answer was not JSON' };
  }
  // Some models wrap the array in an object such as {"translations": [...]}.
  if (!Array.isArray(parsed) && typeof parsed === 'object' && parsed !== null) {
    const arrays = Object.values(parsed).filter(Array.isArray);
    if (arrays.length === 1) parsed = arrays[0];
  }
  if (!Array.isArray(parsed)) return { problem: 'the answer was not a JSON array' };
  const texts = new Array<string | undefined>(count).fill(undefined);
  for (const item of parsed) {
    if (typeof item !== 'object' || item === null || !('id' in item) || !('text' in item) || typeof item.text !== 'string') {
      return { problem: 'an item was not {"id", "text"}' };
    }
    const id = typeof item.id === 'string' && /^\d+$/.test(item.id) ? Number(item.id) : item.id;
    if (typeof id !== 'number' || !Number.isInteger(id) || id < 0 || id >= count) return { problem: `unexpected id ${JSON.stringify(item.id)}` };
    if (texts[id] !== undefined) return { problem: `id ${id} came back twice` };
    texts[id] = item.text;
  }
  const translations: string[] = [];
  const missing: number[] = [];
  texts.forEach((text, id) => (text === undefined ? missing.push(id) : translations.push(text)));
  if (missing.length > 0) return { problem: `no translation for id ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ' …' : ''}` };
  return translations;
}
