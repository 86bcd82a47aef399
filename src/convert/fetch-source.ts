// `http_sources` of /v1/convert/source, fetched only when the operator turned it on
// (SIGNET_FETCH_SOURCES=on), through the one guarded outbound fetch (net/guarded-fetch.ts): http(s)
// URLs without credentials; every address the name resolves to public, the connection pinned to the
// checked address; at most 3 redirects, each checked the same way; 30 s and the upload limit in bytes.
// No credentials or cookies are sent; the URL is never logged. This file only maps its refusals onto
// docling-serve's answers.
import { SECOND } from '../config/clock.ts';
import { guardedFetch, OutboundFetchError, type OutboundPolicy, type OutboundRefusal } from '../net/guarded-fetch.ts';

export class SourceFetchError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.name = 'SourceFetchError';
    this.status = status;
  }
}

const MAX_REDIRECTS = 3;
const TIMEOUT_MS = 30 * SECOND;

/** The status each refusal answers with: a private address is the caller's error (400), a large file 413. */
const STATUS: Record<OutboundRefusal, number> = { url: 422, address: 400, dns: 422, redirect: 422, status: 422, content_type: 422, too_large: 413, timeout: 422, network: 422 };

/** The file's name from the URL's last path segment (docling names a fetched document the same way). */
function nameOf(url: URL): string {
  let last = url.pathname.split('/').pop() ?? '';
  try {
    last = decodeURIComponent(last);
  } catch {
    // a malformed escape: keep the segment as it is
  }
  return last === '' ? 'document.pdf' : last;
}

/** Fetches one source within the guards; refusals are SourceFetchError with the status to answer. */
export async function fetchSource(raw: string, limits: { maxBytes: number }, policy: OutboundPolicy): Promise<{ filename: string; bytes: Buffer }> {
  try {
    const fetched = await guardedFetch(raw, { maxBytes: limits.maxBytes, timeoutMs: TIMEOUT_MS, maxRedirects: MAX_REDIRECTS, accept: ['*/*'], allowHttp: true }, policy);
    return { filename: nameOf(new URL(fetched.url)), bytes: fetched.body };
  } catch (error) {
    if (!(error instanceof OutboundFetchError)) throw error;
    const message = error.reason === 'too_large' ? `An http_sources file is larger than ${Math.round(limits.maxBytes / 1048576)} MB.` : `An http_sources url could not be used: ${error.message}`;
    throw new SourceFetchError(STATUS[error.reason], message);
  }
}
