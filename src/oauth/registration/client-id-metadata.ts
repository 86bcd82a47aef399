// Client ID Metadata Documents (issue 39; draft-ietf-oauth-client-id-metadata-document, the MCP
// authorization spec's preferred registration): an application names itself with an https URL as its
// client_id, and the JSON document at that URL is its registration. At /oauth/authorize Signet fetches the
// document (through the guarded outbound fetch, net/guarded-fetch.ts), checks it, and keeps the
// application in the registry like one that registered at POST /oauth/register — `dynamic`, public, with
// the document's name and redirect URIs — so consent, tokens, refresh, revocation, `client list`, the
// console and the audit log treat both alike; the document is fetched again (HTTP caching permitting) at
// each authorization, and the stored application follows it.
import { recordAuditSafely, type RequestAuditLog } from '../../audit/audit.ts';
import { countAndCheck, type RequestLimit } from '../../accounts/request-limits.ts';
import { findClient, registerClient, updateDynamicRegistration, type Client } from '../../clients/clients.ts';
import { DAY, HOUR, SECOND, type Clock } from '../../config/clock.ts';
import type { Db } from '../../db/database.ts';
import { createHttpCache, guardedFetch, OutboundFetchError, type HttpCache, type OutboundPolicy } from '../../net/guarded-fetch.ts';
import { OAuthError } from '../errors.ts';
import { formatScope } from '../scopes.ts';
import { checkRegistrationMetadata, type CheckedMetadata } from './registration.ts';

/**
 * draft §8.7 (Maximum Response Size): "the authorization server SHOULD limit the response size … 5
 * kilobytes"; a short deadline; draft §5: the server "MUST NOT automatically follow HTTP redirects".
 */
export const METADATA_DOCUMENT_FETCH = { maxBytes: 5 * 1024, timeoutMs: 5 * SECOND, maxRedirects: 0, accept: ['application/json', 'application/*+json'] } as const;

/** How many documents are cached per process, and the longest a Cache-Control max-age is honoured. */
export const METADATA_DOCUMENT_CACHE = { maxEntries: 1000, maxAgeCapMs: DAY } as const;

/** Fetches of documents not fresh in the cache from one client address an hour: an agent signs in now and then; Signet is nobody's fetch proxy. */
export const METADATA_FETCHES_PER_ADDRESS: RequestLimit = { max: 60, windowMs: HOUR };

export type ClientIdMetadataContext = {
  db: Db;
  clock: Clock;
  hashKey: Buffer;
  /** SIGNET_CLIENT_REGISTRATION: `closed` turns self-registration off, by either door */
  registration: 'open' | 'closed';
  outbound: OutboundPolicy;
  cache: HttpCache;
};

/** The per-process cache of fetched documents. */
export function createMetadataDocumentCache(clock: Clock): HttpCache {
  return createHttpCache({ ...METADATA_DOCUMENT_CACHE, clock });
}

/** Whether a client_id names a metadata document (an https URL) rather than a registered application. */
export function isMetadataDocumentClientId(clientId: string): boolean {
  return clientId.startsWith('https://');
}

const refused = (description: string, detail: string) => new OAuthError('invalid_client', description, { status: 400, detail });

/**
 * draft §3 (Client Identifier URL): "MUST have an https scheme", "MUST contain a path component", "MUST
 * NOT contain single-dot or double-dot path segments", "MUST NOT contain a fragment component", "MUST NOT
 * contain a username or password", "SHOULD NOT include a query string component" (refused here: nothing
 * needs one), "MAY contain a port". Returns the reason it is not one, or undefined.
 */
export function clientIdUrlProblem(clientId: string): string | undefined {
  if (clientId.length > 2000) return 'is longer than 2000 characters';
  if (!URL.canParse(clientId)) return 'is not a URL';
  const url = new URL(clientId);
  if (url.protocol !== 'https:') return 'does not use https';
  if (url.username !== '' || url.password !== '') return 'contains a user name or password';
  if (clientId.includes('#')) return 'contains a fragment (#)';
  if (clientId.includes('?')) return 'contains a query string';
  if (url.pathname === '/' || url.pathname === '') return 'has no path (the document must be at a path, e.g. https://agent.example/oauth/client.json)';
  // The parser removes dot segments: a URL that changes when parsed had one (or was not in normal form).
  if (url.href !== clientId) return 'is not in normal form (no "." or ".." path segments, lower-case scheme and host)';
  return undefined;
}

/**
 * The document's rules (draft §4 and §8.1) on top of RFC 7591's metadata (registration.ts):
 * - "MUST contain a client_id property whose value MUST match the URL of the document using simple string comparison";
 * - "the token_endpoint_auth_method property MUST NOT include client_secret_post, client_secret_basic, or
 *   client_secret_jwt" and "the client_secret and client_secret_expires_at properties MUST NOT be used" —
 *   a document client is public (`none`, PKCE S256 required); `private_key_jwt`, which the draft allows, is
 *   not supported here and refused with a clear reason;
 * - redirect_uris as for any self-registered application (https, loopback http, private-use schemes).
 */
export function checkMetadataDocument(clientId: string, document: unknown): CheckedMetadata {
  if (typeof document !== 'object' || document === null || Array.isArray(document)) throw refused('The client metadata document is not a JSON object.', 'document not an object');
  const d = document as Record<string, unknown>;
  if (d.client_id !== clientId) throw refused('The client metadata document\'s client_id must be exactly the URL it is served from.', 'client_id mismatch');
  if ('client_secret' in d || 'client_secret_expires_at' in d) throw refused('A client metadata document must not contain client_secret or client_secret_expires_at: such a client has no secret.', 'document holds a secret');
  const method = d.token_endpoint_auth_method ?? 'none';
  if (method !== 'none') {
    throw refused(`token_endpoint_auth_method ${JSON.stringify(method)} is not supported for a client metadata document: use none (a public client with PKCE S256).`, 'unsupported auth method');
  }
  try {
    return checkRegistrationMetadata({ ...d, token_endpoint_auth_method: 'none' });
  } catch (error) {
    if (error instanceof OAuthError) throw refused(`The client metadata document is not acceptable: ${error.description}`, `document metadata: ${error.error}`);
    throw error;
  }
}

function sameRegistration(client: Client, metadata: CheckedMetadata): boolean {
  return (
    client.name === metadata.name &&
    JSON.stringify(client.redirectUris) === JSON.stringify(metadata.redirectUris) &&
    formatScope(client.scopes) === formatScope(metadata.scopes as Client['scopes']) &&
    JSON.stringify(client.registration) === JSON.stringify({ ...metadata.registration, metadata_document: true })
  );
}

/**
 * The application a metadata-document client_id names, fetched and checked now (or from the HTTP cache),
 * created in the registry the first time (audited `client.registered`) and updated when its document
 * changed. Throws `invalid_client` (400, shown to the person, no redirect: the redirect URI is not known
 * yet) with the reason when the URL or the document is not acceptable or cannot be fetched. With
 * registration closed, only an application already in the registry is found (undefined otherwise).
 */
export async function clientFromMetadataDocument(ctx: ClientIdMetadataContext, clientId: string, who: { ip: string; log?: RequestAuditLog | undefined }): Promise<Client | undefined> {
  const existing = await findClient(ctx.db, clientId);
  if (ctx.registration === 'closed') return existing;
  const problem = clientIdUrlProblem(clientId);
  if (problem) throw refused(`The client_id ${problem}; a client_id that is a URL must be the https URL of the client's metadata document.`, `client_id URL: ${problem}`);

  if (!ctx.cache.lookup(clientId)?.fresh) {
    const limit = await countAndCheck(ctx.db, ctx.clock, `metadata-document:${who.ip}`, METADATA_FETCHES_PER_ADDRESS);
    if (!limit.allowed) {
      throw new OAuthError('temporarily_unavailable', 'Too many client metadata documents were fetched for your network recently. Wait, then try again.', {
        status: 429,
        detail: 'metadata document fetches per address',
        retryAfterSeconds: Math.max(1, Math.ceil((limit.retryAt - ctx.clock()) / SECOND)),
      });
    }
  }
  let document: unknown;
  try {
    const response = await guardedFetch(clientId, { ...METADATA_DOCUMENT_FETCH, cache: ctx.cache }, ctx.outbound);
    document = JSON.parse(response.body.toString('utf8'));
  } catch (error) {
    if (error instanceof OutboundFetchError) throw refused(`The client metadata document at ${new URL(clientId).host} could not be fetched: ${error.message}`, `metadata document fetch: ${error.reason}`);
    if (error instanceof SyntaxError) throw refused('The client metadata document is not valid JSON.', 'metadata document not JSON');
    throw error;
  }
  const metadata = checkMetadataDocument(clientId, document);
  const registration = { ...metadata.registration, metadata_document: true as const };

  if (existing) {
    // An application an operator registered never has a URL as its client_id; only a document client is updated.
    if (!existing.dynamic || existing.registration?.metadata_document !== true) return existing;
    return sameRegistration(existing, metadata) ? existing : updateDynamicRegistration(ctx.db, ctx.clock, clientId, { ...metadata, registration });
  }
  let client: Client;
  try {
    ({ client } = await registerClient(ctx.db, ctx.clock, ctx.hashKey, { clientId, name: metadata.name, redirectUris: metadata.redirectUris, scopes: metadata.scopes, isPublic: true, dynamic: registration }));
  } catch (error) {
    // Two first authorizations at once: the other one created it.
    const created = await findClient(ctx.db, clientId);
    if (created) return created;
    throw error;
  }
  await recordAuditSafely(
    ctx.db,
    ctx.clock,
    { type: 'client.registered', clientId, ip: who.ip, outcome: 'success', detail: { scope: formatScope(client.scopes), auth_method: 'none', reason: 'metadata_document' } },
    who.log,
  );
  return client;
}
