// Calling a translation service over HTTP: one attempt, classified as worth retrying or not, and
// the retry loop around it — exponential back-off with jitter, as AWS's "Exponential Backoff And
// Jitter" recommends, honouring a service's Retry-After.
import { setTimeout as delay } from 'node:timers/promises';
import { TranslationError, type TranslationEngine } from './translator.ts';

export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

export type RetryOptions = {
  attempts: number;
  baseMs: number;
  maxMs: number;
  signal?: AbortSignal;
  /** Injectable so tests do not wait in real time. */
  sleep?: Sleep;
  /** Injectable for deterministic jitter in tests; Math.random by default. */
  random?: () => number;
};

export const DEFAULT_RETRY: RetryOptions = { attempts: 4, baseMs: 500, maxMs: 8000 };

/** What the HTTP engines let a caller (and a test) tune. */
export type HttpEngineOptions = {
  /** Per request; a slower answer counts as a retryable time-out. */
  timeoutMs?: number;
  retry?: Partial<Omit<RetryOptions, 'signal'>>;
};

/** How long one HTTP request may take before it counts as a retryable time-out. */
export const DEFAULT_TIMEOUT_MS = 60_000;

const realSleep: Sleep = async (ms, signal) => {
  try {
    await delay(ms, undefined, signal === undefined ? undefined : { signal });
  } catch (error) {
    // Stop with the caller's own reason, as fetch does, not timers' generic AbortError.
    throw signal?.aborted ? signal.reason : error;
  }
};

/**
 * Runs `fn` until it succeeds, retrying only a TranslationError marked retryable.
 * Anything else — a 400, a wrong answer shape, the caller's abort — ends at once.
 */
export async function withRetry<T>(fn: (attempt: number) => Promise<T>, options: RetryOptions): Promise<T> {
  const sleep = options.sleep ?? realSleep;
  for (let attempt = 1; ; attempt++) {
    options.signal?.throwIfAborted();
    try {
      return await fn(attempt);
    } catch (error) {
      if (!(error instanceof TranslationError) || !error.retryable || options.signal?.aborted) throw error;
      if (attempt >= options.attempts) {
        throw new TranslationError(`${error.message} (gave up after ${attempt} attempts)`, { retryable: true, status: error.status, cause: error });
      }
      await sleep(backoffDelay(attempt, error.retryAfterMs, options), options.signal);
    }
  }
}

/** The wait before attempt `attempt + 1`: the service's Retry-After if it sent one, else base·2^(n-1) with jitter; never above maxMs. */
export function backoffDelay(attempt: number, retryAfterMs: number | undefined, options: Pick<RetryOptions, 'baseMs' | 'maxMs' | 'random'>): number {
  if (retryAfterMs !== undefined) return Math.min(retryAfterMs, options.maxMs);
  const ceiling = Math.min(options.maxMs, options.baseMs * 2 ** (attempt - 1));
  // "Equal jitter": half the delay is fixed so waits still grow, half is random so clients spread out.
  return ceiling / 2 + (options.random ?? Math.random)() * (ceiling / 2);
}

/** Retry-After in seconds or as an HTTP date (RFC 9110 §10.2.3), in milliseconds from now. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

export type JsonRequest = {
  engine: TranslationEngine;
  url: string;
  method: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: unknown;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Values that must never appear in an error message (the API key), whatever the service echoes back. */
  secrets?: Array<string | undefined>;
};

/** One HTTP attempt. Resolves to the parsed JSON body of a 2xx answer; throws a classified TranslationError otherwise. */
export async function requestJson(request: JsonRequest): Promise<unknown> {
  const where = `${request.engine} at ${displayUrl(request.url)}`;
  const fail = (message: string, options: ConstructorParameters<typeof TranslationError>[1]) =>
    new TranslationError(redact(message, request.secrets), options);
  const timeout = AbortSignal.timeout(request.timeoutMs);
  const signal = request.signal ? AbortSignal.any([request.signal, timeout]) : timeout;
  let response: Response;
  let text: string;
  try {
    response = await fetch(request.url, {
      method: request.method,
      headers: { accept: 'application/json', ...(request.body === undefined ? {} : { 'content-type': 'application/json' }), ...request.headers },
      body: request.body === undefined ? undefined : JSON.stringify(request.body),
      signal,
    });
    text = await response.text();
  } catch (error) {
    if (request.signal?.aborted) throw request.signal.reason;
    if (timeout.aborted) {
      throw fail(`${where} did not answer within ${formatSeconds(request.timeoutMs)}; check that the service is running and not overloaded`, { retryable: true });
    }
    throw fail(`${where} could not be reached (${networkCause(error)}); check SIGNET_TRANSLATE_URL and that the service is running`, { retryable: true, cause: error });
  }
  if (!response.ok) {
    const status = response.status;
    const detail = errorDetail(text);
    throw fail(`${where} answered HTTP ${status}${detail ? ` (${detail})` : ''}; ${hintForStatus(status)}`, {
      // Only a busy or failing service may do better on a second try; other 4xx mean our request is wrong.
      retryable: status === 429 || status >= 500,
      status,
      retryAfterMs: parseRetryAfter(response.headers.get('retry-after')),
    });
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw fail(`${where} answered with something other than JSON; check that SIGNET_TRANSLATE_URL points at the ${request.engine} service`, {
      retryable: false,
      cause: error,
    });
  }
}

/** The URL without credentials or query, safe to show in a message. */
export function displayUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return '(invalid URL)';
  }
}

export function redact(message: string, secrets: Array<string | undefined> = []): string {
  let result = message;
  for (const secret of secrets) if (secret) result = result.replaceAll(secret, '[redacted]');
  return result;
}

function hintForStatus(status: number): string {
  if (status === 401 || status === 403) return 'check SIGNET_TRANSLATE_API_KEY';
  if (status === 404) return 'check SIGNET_TRANSLATE_URL (and SIGNET_TRANSLATE_MODEL for openai)';
  if (status === 429) return 'the service is limiting requests; try again later or raise its limit';
  if (status >= 500) return 'the service failed; try again later';
  return 'the service refused the request';
}

/** The service's own words, from a JSON `{error}` body or the start of a text body. */
function errorDetail(text: string): string {
  let detail = text;
  try {
    const body: unknown = JSON.parse(text);
    if (typeof body === 'object' && body !== null && 'error' in body) {
      const error = body.error;
      if (typeof error === 'string') detail = error;
      else if (typeof error === 'object' && error !== null && 'message' in error && typeof error.message === 'string') detail = error.message;
    }
  } catch {
    // not JSON: keep the text
  }
  detail = detail.replace(/\s+/g, ' ').trim();
  return detail.length > 200 ? `${detail.slice(0, 200)}…` : detail;
}

function networkCause(error: unknown): string {
  if (error instanceof Error) {
    const cause = error.cause;
    if (typeof cause === 'object' && cause !== null && 'code' in cause && typeof cause.code === 'string') return cause.code;
    return error.message;
  }
  return String(error);
}

function formatSeconds(ms: number): string {
  return ms >= 1000 ? `${Math.round(ms / 100) / 10} s` : `${ms} ms`;
}
