// Dynamic client registration (RFC 7591, issue 39): an application — typically an AI agent speaking
// MCP — registers itself at POST /oauth/register. The rules: which metadata it may send and what it is
// answered (RFC 7591 §2, §3.2.1, §3.2.2), how often one address may register, and the sweep of
// registrations never used for a grant. The application itself lives in the registry like any other
// (clients/), marked `dynamic`.
import { recordAudit, recordAuditSafely, type RequestAuditLog } from '../../audit/audit.ts';
import { countAndCheck, type RequestLimit } from '../../accounts/request-limits.ts';
import { deleteUnusedDynamicClients, registerClient, type Client, type RegistrationMetadata } from '../../clients/clients.ts';
import { DAY, HOUR, SECOND, type Clock } from '../../config/clock.ts';
import type { Db } from '../../db/database.ts';
import { OAuthError } from '../errors.ts';
import { DOCUMENTS_SCOPE } from '../resources.ts';
import { DEFAULT_SCOPE, formatScope, isKnownScope, KNOWN_SCOPES, parseScopeParameter } from '../scopes.ts';
import { redirectUriKind } from './redirect-uris.ts';

/** At most this many registrations (and attempts) from one client address an hour: enough for agents on a shared network, and a bound on rows one address can create. */
export const REGISTRATIONS_PER_ADDRESS: RequestLimit = { max: 20, windowMs: HOUR };

/** issue 39: "registrations never used for a grant expire after a day". */
export const UNUSED_REGISTRATION_LIFETIME_MS = DAY;

/** The most redirect URIs one registration may carry. */
export const MAX_REDIRECT_URIS = 10;

/** The largest registration body accepted (RFC 7591 metadata is a few hundred bytes). */
export const REGISTRATION_BODY_LIMIT = 16 * 1024;

/**
 * What a registration that names no scope may ask for: the spec's default (`openid profile`) and
 * `documents`, the scope agents come for. A scope sent must be known (RFC 7591 §2 `scope`).
 */
export const DEFAULT_REGISTRATION_SCOPE = [...DEFAULT_SCOPE, DOCUMENTS_SCOPE];

export type RegistrationContext = { db: Db; clock: Clock; hashKey: Buffer; registration: 'open' | 'closed' };

/** RFC 7591 §3.2.1: the client information response. */
export type RegistrationResponse = {
  client_id: string;
  client_id_issued_at: number;
  client_secret?: string;
  client_secret_expires_at?: 0;
  client_name: string;
  redirect_uris: string[];
  grant_types: string[];
  response_types: string[];
  token_endpoint_auth_method: 'none' | 'client_secret_post';
  scope: string;
  client_uri?: string;
  logo_uri?: string;
  software_id?: string;
  software_version?: string;
};

const metadataError = (description: string) => new OAuthError('invalid_client_metadata', description);
const redirectError = (description: string) => new OAuthError('invalid_redirect_uri', description);

/** The registration metadata this server understands, checked (RFC 7591 §2); fields it does not understand are ignored, as §2 requires. */
export type CheckedMetadata = {
  name: string;
  redirectUris: string[];
  scopes: string[];
  isPublic: boolean;
  registration: RegistrationMetadata;
};

function optionalString(body: Record<string, unknown>, name: string, max: number): string | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  // eslint-disable-next-line no-control-regex
  if (typeof value !== 'string' || value.length > max || /[\u0000-\u001f\u007f]/.test(value)) throw metadataError(`${name} must be a string of at most ${max} characters without control characters.`);
  return value.trim() === '' ? undefined : value;
}

function optionalStringList(body: Record<string, unknown>, name: string): string[] | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || value.length > 10 || !value.every((v) => typeof v === 'string')) throw metadataError(`${name} must be an array of strings.`);
  return [...new Set(value as string[])];
}

/** A URL the application names about itself (client_uri, logo_uri): https only; never fetched or shown as a link by Signet. */
function optionalHttpsUrl(body: Record<string, unknown>, name: string): string | undefined {
  const value = optionalString(body, name, 2000);
  if (value === undefined) return undefined;
  if (!URL.canParse(value) || new URL(value).protocol !== 'https:') throw metadataError(`${name} must be an https: URL.`);
  return value;
}

/** The host a redirect URI leads to, for the default name and the consent page: the host, or the private-use scheme. */
export function redirectHost(uri: string): string {
  if (!URL.canParse(uri)) return uri;
  const url = new URL(uri);
  return url.host !== '' ? url.host : url.protocol.slice(0, -1);
}

/** RFC 7591 §2 and §3.2.2: the metadata, or the first error (invalid_redirect_uri, invalid_client_metadata). */
export function checkRegistrationMetadata(body: unknown): CheckedMetadata {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw metadataError('Send the client metadata as a JSON object (RFC 7591 §2), with Content-Type: application/json.');
  const b = body as Record<string, unknown>;

  // redirect_uris: https:, loopback http: or a private-use scheme (RFC 8252 §7); nothing else.
  const redirectUris = b.redirect_uris;
  if (!Array.isArray(redirectUris) || redirectUris.length === 0) throw redirectError('redirect_uris is required: an array with at least one redirect URI.');
  if (redirectUris.length > MAX_REDIRECT_URIS) throw redirectError(`redirect_uris may hold at most ${MAX_REDIRECT_URIS} URIs.`);
  for (const uri of redirectUris) {
    if (typeof uri !== 'string') throw redirectError('Every redirect URI must be a string.');
    const kind = redirectUriKind(uri);
    if ('refused' in kind) throw redirectError(`The redirect URI ${JSON.stringify(uri.slice(0, 200))} ${kind.refused}.`);
  }

  const method = optionalString(b, 'token_endpoint_auth_method', 50) ?? 'client_secret_post';
  if (method !== 'none' && method !== 'client_secret_post') {
    throw metadataError(`token_endpoint_auth_method ${JSON.stringify(method)} is not supported: use none (a public client with PKCE) or client_secret_post.`);
  }

  const grantTypes = optionalStringList(b, 'grant_types') ?? ['authorization_code'];
  const unsupportedGrant = grantTypes.filter((g) => g !== 'authorization_code' && g !== 'refresh_token');
  if (unsupportedGrant.length > 0 || !grantTypes.includes('authorization_code')) {
    throw metadataError('grant_types may hold authorization_code and refresh_token, and must hold authorization_code.');
  }
  const responseTypes = optionalStringList(b, 'response_types') ?? ['code'];
  if (responseTypes.length !== 1 || responseTypes[0] !== 'code') throw metadataError('response_types must be ["code"]: the only flow this server supports.');

  const scopeText = optionalString(b, 'scope', 500);
  const scopes = scopeText === undefined ? DEFAULT_REGISTRATION_SCOPE : parseScopeParameter(scopeText);
  const unknown = scopes.filter((s) => !isKnownScope(s));
  if (unknown.length > 0 || scopes.length === 0) throw metadataError(`scope may name only known scopes: ${KNOWN_SCOPES.join(', ')}.`);

  const firstUri = redirectUris[0] as string;
  const name = optionalString(b, 'client_name', 200) ?? redirectHost(firstUri);
  const clientUri = optionalHttpsUrl(b, 'client_uri');
  const logoUri = optionalHttpsUrl(b, 'logo_uri');
  const softwareId = optionalString(b, 'software_id', 200);
  const softwareVersion = optionalString(b, 'software_version', 200);
  return {
    name,
    redirectUris: [...new Set(redirectUris as string[])],
    scopes: formatScope(scopes).split(' '),
    isPublic: method === 'none',
    registration: {
      token_endpoint_auth_method: method,
      grant_types: grantTypes,
      response_types: responseTypes,
      ...(clientUri ? { client_uri: clientUri } : {}),
      ...(logoUri ? { logo_uri: logoUri } : {}),
      ...(softwareId ? { software_id: softwareId } : {}),
      ...(softwareVersion ? { software_version: softwareVersion } : {}),
    },
  };
}

/** RFC 7591 §3.2.1: the answer, the secret (confidential clients only) included this once. */
export function registrationResponse(client: Client, clientSecret: string | undefined): RegistrationResponse {
  const registration = client.registration!;
  return {
    client_id: client.clientId,
    client_id_issued_at: Math.floor(client.createdAt / SECOND),
    ...(clientSecret === undefined ? {} : { client_secret: clientSecret, client_secret_expires_at: 0 as const }),
    client_name: client.name,
    redirect_uris: client.redirectUris,
    grant_types: registration.grant_types,
    response_types: registration.response_types,
    token_endpoint_auth_method: registration.token_endpoint_auth_method,
    scope: formatScope(client.scopes),
    ...(registration.client_uri ? { client_uri: registration.client_uri } : {}),
    ...(registration.logo_uri ? { logo_uri: registration.logo_uri } : {}),
    ...(registration.software_id ? { software_id: registration.software_id } : {}),
    ...(registration.software_version ? { software_version: registration.software_version } : {}),
  };
}

/**
 * POST /oauth/register: closed → 403; past the per-address limit → 429 with Retry-After (counted before
 * the body is read, so bad requests count too); else the metadata checked and the application created
 * (`dynamic`), audited as `client.registered`.
 */
export async function registerDynamicClient(ctx: RegistrationContext, body: unknown, who: { ip: string; log?: RequestAuditLog | undefined }): Promise<RegistrationResponse> {
  if (ctx.registration === 'closed') {
    throw new OAuthError('access_denied', 'This server does not accept dynamic client registration (SIGNET_CLIENT_REGISTRATION=closed). Ask its operator to register your application.', { status: 403, detail: 'registration closed' });
  }
  const limit = await countAndCheck(ctx.db, ctx.clock, `register:${who.ip}`, REGISTRATIONS_PER_ADDRESS);
  if (!limit.allowed) {
    throw new OAuthError('temporarily_unavailable', 'Too many applications were registered from your network recently. Wait, then try again.', {
      status: 429,
      detail: 'registration limit per address reached',
      retryAfterSeconds: Math.max(1, Math.ceil((limit.retryAt - ctx.clock()) / SECOND)),
    });
  }
  const metadata = checkRegistrationMetadata(body);
  const { client, clientSecret } = await registerClient(ctx.db, ctx.clock, ctx.hashKey, {
    name: metadata.name,
    redirectUris: metadata.redirectUris,
    scopes: metadata.scopes,
    isPublic: metadata.isPublic,
    dynamic: metadata.registration,
  });
  await recordAuditSafely(
    ctx.db,
    ctx.clock,
    { type: 'client.registered', clientId: client.clientId, ip: who.ip, outcome: 'success', detail: { scope: formatScope(client.scopes), auth_method: metadata.registration.token_endpoint_auth_method } },
    who.log,
  );
  return registrationResponse(client, clientSecret);
}

/**
 * The sweep (issue 39): "registrations never used for a grant expire after a day" — a dynamic
 * application older than a day that no person ever allowed (no grant) and that holds no code or token
 * is deleted, and audited as `client.expired`. Returns how many.
 */
export async function forgetUnusedRegistrations(db: Db, clock: Clock): Promise<number> {
  const removed = await deleteUnusedDynamicClients(db, clock() - UNUSED_REGISTRATION_LIFETIME_MS);
  for (const clientId of removed) await recordAudit(db, clock, { type: 'client.expired', clientId, outcome: 'success', detail: { reason: 'unused_registration' } });
  return removed.length;
}
