// The one way Signet fetches a URL that someone else named (STYLE.md: "Outbound fetches (CIMD documents,
// `http_sources`) go through one guarded fetch helper"): a client's metadata document (oauth/registration),
// a document to convert from a URL (convert/). Whoever names the URL must not be able to make Signet reach
// what only Signet can reach (server-side request forgery), nor tie it up:
//
// - https only, no user information in the URL;
// - the host resolved here, and EVERY address it resolves to must be a public unicast address (ipaddr.js
//   range `unicast`: no loopback, private, link-local, CGNAT, multicast, unique-local, reserved, 6to4,
//   Teredo, NAT64, and an IPv4-mapped IPv6 address is judged as the IPv4 address it carries);
// - the connection is made to the address that was checked (the socket's DNS lookup is answered with it),
//   so a second resolution cannot swap in another address (no DNS-rebinding gap); TLS still verifies the
//   certificate against the host name;
// - redirects only as many as the caller allows, each hop checked as the first (scheme, addresses);
// - one deadline for the whole fetch (every hop, headers and body), a byte limit on the body (a larger
//   Content-Length is refused before reading), status 200 and an accepted Content-Type only;
// - HTTP caching (Cache-Control max-age / no-cache / no-store, ETag and Last-Modified revalidation) in a
//   bounded cache the caller owns.
//
// Tests serve documents from a loopback HTTPS server with a certificate made at test time. Two settings
// allow that, and nothing else does: SIGNET_OUTBOUND_ALLOW_LOOPBACK_FOR_TESTS=true (loopback addresses
// pass the address check; still never private, link-local or any other range) and
// SIGNET_OUTBOUND_TEST_CA_FILE (one more certificate authority to trust). settings.ts refuses both when
// NODE_ENV=production, and the server logs a warning at start when they are on.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { readFileSync } from 'node:fs';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { Clock } from '../config/clock.ts';

/** What the deployment allows beyond the rules above: only ever for tests (see the header). */
export type OutboundPolicy = {
  allowLoopbackForTests: boolean;
  /** PEM of one more certificate authority (tests' self-signed certificate), or undefined */
  testCa?: string | undefined;
};

/** The policy of a deployment: nothing beyond the rules. */
export const STRICT_OUTBOUND_POLICY: OutboundPolicy = Object.freeze({ allowLoopbackForTests: false });

/** The policy from the settings (reads the test CA file once, at start). */
export function outboundPolicy(settings: { allowLoopbackForTests: boolean; testCaFile?: string | undefined }): OutboundPolicy {
  let testCa: string | undefined;
  if (settings.testCaFile) {
    try {
      testCa = readFileSync(settings.testCaFile, 'utf8');
    } catch (error) {
      throw new Error(`SIGNET_OUTBOUND_TEST_CA_FILE: cannot read ${settings.testCaFile} (${(error as { code?: string }).code ?? 'error'}); give the path of a PEM certificate, or unset it`, { cause: error });
    }
  }
  return { allowLoopbackForTests: settings.allowLoopbackForTests, testCa };
}

export type GuardedFetchOptions = {
  /** the largest body accepted, in bytes */
  maxBytes: number;
  /** the deadline for the whole fetch (every hop, the body included), in milliseconds */
  timeoutMs: number;
  /** how many redirects to follow (each hop re-checked); 0: a redirect is an error */
  maxRedirects: number;
  /** accepted media types, e.g. `application/json`; `application/*+json` accepts any `+json` type */
  accept: readonly string[];
  /** an HTTP cache to read and fill (createHttpCache), or none */
  cache?: HttpCache | undefined;
  /**
   * Also fetch plain `http:` URLs (default: https only). Only for documents a person asked to convert
   * (docling-serve's `http_sources`), never for anything Signet trusts: the address rules still hold.
   */
  allowHttp?: boolean;
};

export type GuardedResponse = {
  /** the URL of the last hop */
  url: string;
  /** the media type, lower case, without parameters */
  contentType: string;
  body: Buffer;
  /** answered from the cache (fresh, or revalidated with 304) without a new body */
  fromCache: boolean;
};

export type OutboundRefusal = 'url' | 'address' | 'dns' | 'redirect' | 'status' | 'content_type' | 'too_large' | 'timeout' | 'network';

/** Why a fetch was refused or failed; `message` is safe to show to whoever named the URL (it names no internal address). */
export class OutboundFetchError extends Error {
  readonly reason: OutboundRefusal;
  constructor(reason: OutboundRefusal, message: string) {
    super(message);
    this.name = 'OutboundFetchError';
    this.reason = reason;
  }
}

/**
 * Whether Signet may connect to `address` (an IPv4 or IPv6 literal): a public unicast address, or a
 * loopback one when the test allowance is on. An IPv4-mapped IPv6 address (`::ffff:10.0.0.1`) is judged
 * as its IPv4 address.
 */
export function isAllowedAddress(address: string, policy: OutboundPolicy): boolean {
  if (!ipaddr.isValid(address)) return false;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  const range = parsed.range();
  if (range === 'unicast') return true;
  return range === 'loopback' && policy.allowLoopbackForTests;
}

/** The addresses of `host` (a name or a literal), every one checked; throws when any is not allowed. */
async function checkedAddresses(host: string, policy: OutboundPolicy, signal: AbortSignal): Promise<LookupAddress[]> {
  const literal = host.startsWith('[') ? host.slice(1, -1) : host;
  let addresses: LookupAddress[];
  if (isIP(literal) !== 0) {
    addresses = [{ address: literal, family: isIP(literal) }];
  } else {
    // The resolver has its own, longer time-outs: the fetch's deadline bounds the lookup too.
    addresses = await new Promise<LookupAddress[]>((resolve, reject) => {
      const onAbort = () => reject(signal.reason);
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      dnsLookup(literal, { all: true, verbatim: true }, (error, found) => {
        signal.removeEventListener('abort', onAbort);
        if (error) reject(new OutboundFetchError('dns', `The host ${literal} could not be resolved.`));
        else resolve(found);
      });
    });
    if (addresses.length === 0) throw new OutboundFetchError('dns', `The host ${literal} has no address.`);
  }
  // Every address, not the first: a name with one public and one private address is refused, so which
  // one a later connection would pick never matters.
  if (!addresses.every((a) => isAllowedAddress(a.address, policy))) {
    throw new OutboundFetchError('address', `${literal} is not a public internet address (private, loopback, link-local and other special-use addresses are never fetched).`);
  }
  return addresses;
}

function checkedUrl(raw: string | URL, allowHttp = false): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OutboundFetchError('url', 'The URL is not an absolute URL.');
  }
  if (url.protocol !== 'https:' && !(allowHttp && url.protocol === 'http:')) throw new OutboundFetchError('url', allowHttp ? 'Only http: and https: URLs are fetched.' : 'Only https: URLs are fetched.');
  if (url.username !== '' || url.password !== '') throw new OutboundFetchError('url', 'The URL must not contain user information.');
  return url;
}

function mediaTypeOf(header: string | undefined): string {
  return (header ?? '').split(';', 1)[0]!.trim().toLowerCase();
}

function accepted(mediaType: string, accept: readonly string[]): boolean {
  return accept.some((a) => a === '*/*' || (a.includes('*+') ? mediaType.startsWith(a.slice(0, a.indexOf('*'))) && mediaType.endsWith(a.slice(a.indexOf('*') + 1)) : a === mediaType));
}

type Hop = { status: number; headers: Record<string, string | string[] | undefined>; body: Buffer };

/**
 * One request to one checked URL, connected to the checked address. node:https (with TLS, ~3 MB resident)
 * is loaded on the first outbound fetch, not by every server at start (bench/README.md, "Memory").
 */
function requestOnce(url: URL, address: LookupAddress, headers: Record<string, string>, options: GuardedFetchOptions, policy: OutboundPolicy, signal: AbortSignal): Promise<Hop> {
  // The socket's lookup answers with the address that was checked: no second resolution.
  const pinned: LookupFunction = (_hostname, lookupOptions, callback) => {
    if ((lookupOptions as { all?: boolean }).all) (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, [address]);
    else callback(null, address.address, address.family);
  };
  const secure = url.protocol === 'https:';
  const request = secure ? process.getBuiltinModule('node:https').request : process.getBuiltinModule('node:http').request;
  return new Promise<Hop>((resolve, reject) => {
    const req = request(
      {
        protocol: url.protocol,
        hostname: url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname,
        port: url.port === '' ? (secure ? 443 : 80) : Number(url.port),
        path: `${url.pathname}${url.search}`,
        method: 'GET',
        headers: { 'user-agent': 'Signet', 'accept-encoding': 'identity', ...headers },
        lookup: pinned,
        agent: false,
        signal,
        ...(secure && policy.testCa ? { ca: [...process.getBuiltinModule('node:tls').rootCertificates, policy.testCa] } : {}),
      },
      (res) => {
        const status = res.statusCode ?? 0;
        // Only a 200's body is read; redirects and errors are drained up to the limit and dropped.
        const declared = Number(res.headers['content-length']);
        if (status === 200 && Number.isFinite(declared) && declared > options.maxBytes) {
          res.destroy();
          reject(new OutboundFetchError('too_large', `The response is larger than ${options.maxBytes} bytes.`));
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > options.maxBytes) {
            res.destroy();
            reject(new OutboundFetchError('too_large', `The response is larger than ${options.maxBytes} bytes.`));
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () => resolve({ status, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', (error) => reject(error));
      },
    );
    req.on('error', (error) => reject(error));
    req.end();
  });
}

/**
 * Fetches `url` under the rules above and returns the body of a `200` with an accepted Content-Type.
 * Throws OutboundFetchError (its `reason` and a message that may be shown) for every refusal and failure.
 *
 *     const doc = await guardedFetch('https://agent.example/client.json',
 *       { maxBytes: 5 * 1024, timeoutMs: 5000, maxRedirects: 0, accept: ['application/json'] }, policy);
 */
export async function guardedFetch(url: string | URL, options: GuardedFetchOptions, policy: OutboundPolicy): Promise<GuardedResponse> {
  const start = checkedUrl(url, options.allowHttp);
  const key = start.href;
  const cached = options.cache?.lookup(key);
  if (cached?.fresh) return { url: cached.entry.url, contentType: cached.entry.contentType, body: cached.entry.body, fromCache: true };

  const signal = AbortSignal.timeout(options.timeoutMs);
  try {
    let current = start;
    for (let hop = 0; ; hop++) {
      const [address] = await checkedAddresses(current.hostname, policy, signal);
      const conditional: Record<string, string> = {};
      if (hop === 0 && cached) {
        if (cached.entry.etag) conditional['if-none-match'] = cached.entry.etag;
        if (cached.entry.lastModified) conditional['if-modified-since'] = cached.entry.lastModified;
      }
      const response = await requestOnce(current, address!, { accept: options.accept.filter((a) => !a.includes('*')).join(', ') || '*/*', ...conditional }, options, policy, signal);
      if (response.status === 304 && cached && hop === 0) {
        options.cache!.revalidated(key, response.headers);
        return { url: cached.entry.url, contentType: cached.entry.contentType, body: cached.entry.body, fromCache: true };
      }
      if (response.status >= 300 && response.status < 400 && response.headers.location !== undefined) {
        if (hop >= options.maxRedirects) {
          throw new OutboundFetchError('redirect', options.maxRedirects === 0 ? `The server answered with a redirect (${response.status}); redirects are not followed.` : `More than ${options.maxRedirects} redirects.`);
        }
        current = checkedUrl(new URL(String(response.headers.location), current), options.allowHttp);
        continue;
      }
      if (response.status !== 200) throw new OutboundFetchError('status', `The server answered ${response.status}, not 200.`);
      const contentType = mediaTypeOf(response.headers['content-type'] as string | undefined);
      if (!accepted(contentType, options.accept)) throw new OutboundFetchError('content_type', `The Content-Type is ${contentType || 'missing'}; expected ${options.accept.join(' or ')}.`);
      const answer = { url: current.href, contentType, body: response.body };
      options.cache?.store(key, answer, response.headers);
      return { ...answer, fromCache: false };
    }
  } catch (error) {
    if (error instanceof OutboundFetchError) throw error;
    if (signal.aborted) throw new OutboundFetchError('timeout', `No complete answer within ${options.timeoutMs} ms.`);
    // TLS and socket errors: say what kind, never the internal detail.
    const code = (error as { code?: string }).code;
    throw new OutboundFetchError('network', `The server could not be reached${code ? ` (${code})` : ''}.`);
  }
}

// ——— HTTP caching (RFC 9111, the parts a client of small documents needs) ———

type CacheEntry = { url: string; contentType: string; body: Buffer; etag?: string | undefined; lastModified?: string | undefined; freshUntil: number };

export type HttpCache = {
  /** the entry for a URL, and whether it may be used without asking the server */
  lookup(url: string): { entry: CacheEntry; fresh: boolean } | undefined;
  store(url: string, answer: { url: string; contentType: string; body: Buffer }, headers: Hop['headers']): void;
  /** a 304: the entry is fresh again for as long as the new headers say */
  revalidated(url: string, headers: Hop['headers']): void;
  readonly size: number;
};

/** How long a response may be used: Cache-Control max-age (capped), 0 for no-cache; undefined for no-store (never kept). */
function freshnessMs(headers: Hop['headers'], maxAgeCapMs: number): number | undefined {
  const directives = String(headers['cache-control'] ?? '').toLowerCase().split(',').map((d) => d.trim());
  if (directives.includes('no-store') || directives.includes('private')) return undefined;
  if (directives.includes('no-cache')) return 0;
  const maxAge = directives.find((d) => d.startsWith('max-age='));
  const seconds = maxAge ? Number(maxAge.slice('max-age='.length)) : 0;
  return Number.isFinite(seconds) && seconds > 0 ? Math.min(seconds * 1000, maxAgeCapMs) : 0;
}

/**
 * A bounded in-process HTTP cache: at most `maxEntries` responses (the least recently used goes first),
 * each used for its Cache-Control max-age (at most `maxAgeCapMs`), then revalidated with its ETag or
 * Last-Modified when it has one. A response without either and without max-age is not kept.
 */
export function createHttpCache(options: { maxEntries: number; maxAgeCapMs: number; clock: Clock }): HttpCache {
  const entries = new Map<string, CacheEntry>();
  const touch = (url: string, entry: CacheEntry) => {
    entries.delete(url);
    entries.set(url, entry);
    while (entries.size > options.maxEntries) entries.delete(entries.keys().next().value!);
  };
  return {
    lookup(url) {
      const entry = entries.get(url);
      if (!entry) return undefined;
      touch(url, entry);
      return { entry, fresh: options.clock() < entry.freshUntil };
    },
    store(url, answer, headers) {
      const freshFor = freshnessMs(headers, options.maxAgeCapMs);
      const etag = headers.etag === undefined ? undefined : String(headers.etag);
      const lastModified = headers['last-modified'] === undefined ? undefined : String(headers['last-modified']);
      if (freshFor === undefined || (freshFor === 0 && !etag && !lastModified)) {
        entries.delete(url);
        return;
      }
      touch(url, { ...answer, etag, lastModified, freshUntil: options.clock() + freshFor });
    },
    revalidated(url, headers) {
      const entry = entries.get(url);
      if (!entry) return;
      const freshFor = freshnessMs(headers, options.maxAgeCapMs);
      if (freshFor === undefined) entries.delete(url);
      else touch(url, { ...entry, freshUntil: options.clock() + freshFor });
    },
    get size() {
      return entries.size;
    },
  };
}
