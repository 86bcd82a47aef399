// `http_sources` of /v1/convert/source, fetched only when the operator turned it on
// (SIGNET_FETCH_SOURCES=on). The guards: http(s) URLs only; every address the name resolves to must be
// a public unicast address (checked in the connection's own DNS lookup, so a redirect or a second
// resolution cannot slip to a private one); at most 3 redirects, each checked the same way; at most
// 30 s and the upload limit in bytes. No credentials or cookies are sent; the URL is never logged.
// (One file, on purpose: the guarded outbound fetch helper of the OAuth registration work can replace it.)
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { SECOND } from '../config/clock.ts';

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

/** Whether an address is one the public internet routes (not loopback, private, link-local, …). */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  return ipaddr.process(address).range() === 'unicast';
}

/** A DNS lookup that fails for any name with a non-public address among its answers. */
const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, '', 0);
    const list = addresses as LookupAddress[];
    const blocked = list.find((a) => !isPublicAddress(a.address));
    if (blocked || list.length === 0) return callback(Object.assign(new Error('not a public address'), { code: 'SIGNET_PRIVATE_ADDRESS' }), '', 0);
    if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
    return callback(null, list[0]!.address, list[0]!.family);
  });
};

/** The file's name from the URL's last path segment (docling names a fetched document the same way). */
function nameOf(url: URL): string {
  const last = decodeURIComponent(url.pathname.split('/').pop() ?? '');
  return last === '' ? 'document.pdf' : last;
}

/** Fetches one source within the guards; refusals are SourceFetchError with the status to answer. */
export async function fetchSource(raw: string, limits: { maxBytes: number }): Promise<{ filename: string; bytes: Buffer }> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new SourceFetchError(422, 'An http_sources url is not a valid URL.');
  }
  const deadline = AbortSignal.timeout(TIMEOUT_MS);
  for (let hop = 0; hop <= MAX_REDIRECTS; hop += 1) {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new SourceFetchError(422, 'http_sources take http or https URLs only.');
    if (url.username || url.password) throw new SourceFetchError(422, 'http_sources URLs may not carry a user name or password.');
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (ipaddr.isValid(host) && !isPublicAddress(host)) throw new SourceFetchError(400, 'http_sources may only name public addresses.');
    const response = await get(url, deadline);
    const location = response.headers.location;
    if (response.statusCode !== undefined && response.statusCode >= 300 && response.statusCode < 400 && location) {
      response.resume();
      url = new URL(location, url);
      continue;
    }
    if (response.statusCode !== 200) {
      response.resume();
      throw new SourceFetchError(422, `Fetching an http_sources url answered ${response.statusCode}.`);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of response) {
      size += (chunk as Buffer).length;
      if (size > limits.maxBytes) {
        response.destroy();
        throw new SourceFetchError(413, `An http_sources file is larger than ${Math.round(limits.maxBytes / 1048576)} MB.`);
      }
      chunks.push(chunk as Buffer);
    }
    return { filename: nameOf(url), bytes: Buffer.concat(chunks) };
  }
  throw new SourceFetchError(422, `An http_sources url redirected more than ${MAX_REDIRECTS} times.`);
}

function get(url: URL, signal: AbortSignal): Promise<http.IncomingMessage> {
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const request = client.get(url, { lookup: publicOnlyLookup, signal, headers: { 'user-agent': 'Signet (docling-serve-compatible conversion)', accept: 'application/pdf, */*' } }, resolve);
    request.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'SIGNET_PRIVATE_ADDRESS') reject(new SourceFetchError(400, 'http_sources may only name public addresses.'));
      else if (signal.aborted) reject(new SourceFetchError(422, 'Fetching an http_sources url took longer than 30 seconds.'));
      else reject(new SourceFetchError(422, 'An http_sources url could not be fetched.'));
    });
  });
}
