// The application registry: registration, management and client authentication.
import { randomBytes } from 'node:crypto';
import type { Clock } from '../config/clock.ts';
import type { Db } from '../db/database.ts';
import { isKnownScope, formatScope, KNOWN_SCOPES, DEFAULT_SCOPE, type Scope } from '../oauth/scopes.ts';
import { keyedHash, matchesKeyedHash, newOpaqueToken } from '../oauth/secrets.ts';
import { createServiceAccount, deleteServiceAccount } from '../accounts/service-accounts.ts';
import { cachedClientRow, forgetClient } from './clients.cache.ts';
import * as store from './clients.store.ts';

export type ClientErrorCode = 'invalid_name' | 'invalid_client_id' | 'invalid_secret_hash' | 'invalid_redirect_uri' | 'invalid_scope' | 'invalid_origin' | 'not_found' | 'public_client' | 'invalid_grant' | 'invalid_registration';

/**
 * issue 43: the grants an application may opt into beyond the spec's two (`--grant`), as RFC 7591
 * would not spell them: `device_code` stands for RFC 8628's `urn:ietf:params:oauth:grant-type:device_code`.
 * Without any, an application has exactly `authorization_code` and `refresh_token`.
 */
export const EXTRA_GRANTS = ['client_credentials', 'device_code'] as const;
export type ExtraGrant = (typeof EXTRA_GRANTS)[number];

/**
 * issue 43: the built-in public application of `signet login` (device grant only), registered by
 * migration 0018 on every instance — so `signet export` leaves it out (the other instance has its own).
 */
export const BUILT_IN_CLI_CLIENT_ID = 'signet-cli';

export function isExtraGrant(value: string): value is ExtraGrant {
  return (EXTRA_GRANTS as readonly string[]).includes(value);
}

export class ClientError extends Error {
  readonly code: ClientErrorCode;
  constructor(code: ClientErrorCode, message: string) {
    super(message);
    this.code = code;
    this.name = 'ClientError';
  }
}

/** An application as the rest of the code sees it. */
export type Client = {
  clientId: string;
  name: string;
  redirectUris: string[];
  scopes: Scope[];
  isPublic: boolean;
  enabled: boolean;
  allowedOrigins: string[];
  /** issue 28: an OpenID application — an id_token when it is granted `openid`; false: none ever (spec rule 5) */
  oidc: boolean;
  /** RP-Initiated Logout 1.0: where the end-session endpoint may send the browser back, byte for byte */
  postLogoutRedirectUris: string[];
  /** how its id_tokens are signed; null: the deployment's SIGNET_ID_TOKEN_ALG */
  idTokenAlg: 'ES256' | 'RS256' | null;
  /** issue 43: the extra grants it opted into (empty: the spec's two grants only) */
  grants: ExtraGrant[];
  /** issue 43: the sub of its service identity (client_credentials), else null */
  serviceSub: string | null;
  /** keyed hash of the secret; null for public clients */
  secretHash: string | null;
  /** issue 39: registered itself at POST /oauth/register (RFC 7591); its name is its own claim, unverified */
  dynamic: boolean;
  /** issue 39: the RFC 7591 metadata a dynamic client registered (client_uri, logo_uri …), else null */
  registration: RegistrationMetadata | null;
  createdAt: number;
  updatedAt: number;
};

/** What a dynamic client registered beyond the application's own fields (RFC 7591 §2). */
export type RegistrationMetadata = {
  token_endpoint_auth_method: 'none' | 'client_secret_post';
  grant_types: string[];
  response_types: string[];
  client_uri?: string;
  logo_uri?: string;
  software_id?: string;
  software_version?: string;
  /** issue 39: the client_id is the https URL of its Client ID Metadata Document, fetched from there (not POSTed) */
  metadata_document?: true;
};

/** The operator contract's JSON shape for an application. */
export type ClientView = {
  client_id: string;
  client_secret?: string;
  name: string;
  redirect_uris: string[];
  scopes: string[];
  public: boolean;
  enabled: boolean;
  allowed_origins: string[];
  oidc: boolean;
  post_logout_redirect_uris: string[];
  /** null: the deployment's default (SIGNET_ID_TOKEN_ALG) */
  id_token_signed_response_alg: 'ES256' | 'RS256' | null;
  /** issue 43: the extra grants (`--grant`): client_credentials, device_code */
  grants: ExtraGrant[];
  /** issue 39: registered itself (POST /oauth/register) */
  dynamic: boolean;
  created_at: string;
  updated_at: string;
};

/** An application's three JSON columns, parsed, with the text they were parsed from. */
type ParsedLists = { redirectUrisJson: string; scopesJson: string; allowedOriginsJson: string; redirectUris: string[]; scopes: Scope[]; allowedOrigins: string[] };

/**
 * The last parse of each application's JSON columns (parsing them took about 4 % of a userinfo
 * request's CPU). Not a cache of applications: every lookup still reads the row, so `enabled`, the
 * secret and every change are as current as the database in every process; a parse is reused only
 * while the column text is byte for byte the same, and handed out as copies.
 */
const parsedLists = new Map<string, ParsedLists>();
/** Far more applications than a deployment registers; past it the map starts over. */
const MAX_PARSED_LISTS = 1000;

function listsOf(row: store.ClientRow): ParsedLists {
  const kept = parsedLists.get(row.client_id);
  if (kept && kept.redirectUrisJson === row.redirect_uris && kept.scopesJson === row.scopes && kept.allowedOriginsJson === row.allowed_origins) return kept;
  const parsed: ParsedLists = {
    redirectUrisJson: row.redirect_uris,
    scopesJson: row.scopes,
    allowedOriginsJson: row.allowed_origins,
    redirectUris: JSON.parse(row.redirect_uris) as string[],
    scopes: (JSON.parse(row.scopes) as string[]).filter(isKnownScope),
    allowedOrigins: JSON.parse(row.allowed_origins) as string[],
  };
  if (parsedLists.size >= MAX_PARSED_LISTS) parsedLists.clear();
  parsedLists.set(row.client_id, parsed);
  return parsed;
}

/** An application from its stored row (the clients table's columns, as read here or by another domain's store). */
export function clientFromRow(row: store.ClientRow): Client {
  const lists = listsOf(row);
  return {
    clientId: row.client_id,
    name: row.name,
    redirectUris: lists.redirectUris.slice(),
    scopes: lists.scopes.slice(),
    isPublic: row.is_public === 1,
    enabled: row.enabled === 1,
    allowedOrigins: lists.allowedOrigins.slice(),
    oidc: row.oidc === 1,
    postLogoutRedirectUris: row.post_logout_redirect_uris ? (JSON.parse(row.post_logout_redirect_uris) as string[]) : [],
    idTokenAlg: row.id_token_alg === 'ES256' || row.id_token_alg === 'RS256' ? row.id_token_alg : null,
    grants: row.grants ? (JSON.parse(row.grants) as string[]).filter(isExtraGrant) : [],
    serviceSub: row.service_sub ?? null,
    secretHash: row.secret_hash,
    dynamic: row.dynamic === 1,
    registration: row.registration ? (JSON.parse(row.registration) as RegistrationMetadata) : null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function toView(client: Client, clientSecret?: string): ClientView {
  return {
    client_id: client.clientId,
    ...(clientSecret === undefined ? {} : { client_secret: clientSecret }),
    name: client.name,
    redirect_uris: client.redirectUris,
    scopes: client.scopes,
    public: client.isPublic,
    enabled: client.enabled,
    allowed_origins: client.allowedOrigins,
    oidc: client.oidc,
    post_logout_redirect_uris: client.postLogoutRedirectUris,
    id_token_signed_response_alg: client.idTokenAlg,
    grants: client.grants,
    dynamic: client.dynamic,
    created_at: new Date(client.createdAt).toISOString(),
    updated_at: new Date(client.updatedAt).toISOString(),
  };
}

/** RFC 6749 §3.1.2: an absolute URI without a fragment. Stored exactly as given: matching is byte for byte. */
export function checkRedirectUri(uri: string): string {
  let parsed: URL;
  try {
    parsed = new URL(uri);
  } catch {
    throw new ClientError('invalid_redirect_uri', `"${uri}" is not an absolute URI`);
  }
  if (uri.includes('#')) throw new ClientError('invalid_redirect_uri', `"${uri}" must not contain a fragment (#)`);
  if (/^(javascript|data|vbscript|file):$/i.test(parsed.protocol)) throw new ClientError('invalid_redirect_uri', `"${uri}" uses a scheme that cannot be a callback`);
  if (/\s/.test(uri) || uri.length > 2000) throw new ClientError('invalid_redirect_uri', `"${uri}" must be at most 2000 characters with no white space`);
  return uri;
}

/** An allowlisted browser origin: scheme://host[:port], nothing else. */
export function checkOrigin(origin: string): string {
  let parsed: URL;
  try {
    parsed = new URL(origin);
  } catch {
    throw new ClientError('invalid_origin', `"${origin}" is not an origin such as https://app.example.com`);
  }
  if ((parsed.protocol !== 'https:' && parsed.protocol !== 'http:') || parsed.origin !== origin) {
    throw new ClientError('invalid_origin', `"${origin}" is not an origin such as https://app.example.com (scheme, host and port only, no trailing slash)`);
  }
  return origin;
}

export function checkScopes(scopes: string[]): Scope[] {
  const unknown = scopes.filter((s) => !isKnownScope(s));
  if (unknown.length > 0) throw new ClientError('invalid_scope', `unknown scope ${unknown.map((s) => `"${s}"`).join(', ')}; known scopes are ${KNOWN_SCOPES.join(', ')}`);
  return formatScope(scopes).split(' ').filter(isKnownScope);
}

export type ClientInput = {
  name: string;
  redirectUris: string[];
  scopes?: string[] | undefined;
  isPublic?: boolean | undefined;
  allowedOrigins?: string[] | undefined;
  oidc?: boolean | undefined;
  postLogoutRedirectUris?: string[] | undefined;
  idTokenAlg?: 'ES256' | 'RS256' | null | undefined;
  /** issue 43: extra grants (`--grant client_credentials`, `--grant device_code`) */
  grants?: string[] | undefined;
  /** issue 39: the application registered itself (RFC 7591) with this metadata; its redirect URIs were checked by oauth/registration */
  dynamic?: RegistrationMetadata | undefined;
  /** issue 39: a Client ID Metadata Document's URL is its own client_id; every other application gets a new one */
  clientId?: string | undefined;
};

/** Checks `--grant` values: known names, each once, in a stable order. */
export function checkGrants(grants: readonly string[]): ExtraGrant[] {
  const unknown = grants.filter((g) => !isExtraGrant(g));
  if (unknown.length > 0) throw new ClientError('invalid_grant', `unknown grant ${unknown.map((g) => `"${g}"`).join(', ')}; the extra grants are ${EXTRA_GRANTS.join(' and ')} (authorization_code and refresh_token every application has)`);
  return EXTRA_GRANTS.filter((g) => grants.includes(g));
}

/**
 * RFC 6749 §4.4: "The client credentials grant type MUST only be used by confidential clients" —
 * a public application cannot authenticate as itself.
 */
function checkGrantsFit(grants: readonly ExtraGrant[], isPublic: boolean): void {
  if (isPublic && grants.includes('client_credentials')) {
    throw new ClientError('invalid_grant', 'client_credentials needs a confidential application (it authenticates with its client_secret); drop --public or the grant');
  }
}

/** RP-Initiated Logout 1.0 §3: a post-logout callback is checked as a redirect URI and compared byte for byte. */
export function checkPostLogoutRedirectUris(uris: string[]): string {
  return JSON.stringify([...new Set(uris.map(checkRedirectUri))]);
}

export function checkName(name: string): string {
  const trimmed = name.trim();
  if (trimmed.length === 0 || trimmed.length > 200) throw new ClientError('invalid_name', 'the application name must have 1 to 200 characters');
  return trimmed;
}

/**
 * A new client_id: 128 random bits as 32 lower-case hex characters. It never begins with "-" or "_"
 * (a base64url id did about one time in 21, and the CLI then read it as an option), it is URL-safe,
 * and it reads the same in logs, config files and on the phone.
 */
export function newClientId(): string {
  return randomBytes(16).toString('hex');
}

/** Registers an application. The secret (confidential clients only) is returned once and stored only as a keyed hash. */
export async function registerClient(db: Db, clock: Clock, hashKey: Buffer, input: ClientInput): Promise<{ client: Client; clientSecret?: string }> {
  const name = checkName(input.name);
  const grants = checkGrants(input.grants ?? []);
  // An application that only uses the extra grants never redirects a browser: it may have no callback.
  if (input.redirectUris.length === 0 && grants.length === 0) throw new ClientError('invalid_redirect_uri', 'at least one redirect URI is required (--redirect-uri), unless the application uses only --grant client_credentials / device_code');
  const redirectUris = [...new Set(input.redirectUris.map(checkRedirectUri))];
  const scopes = checkScopes(input.scopes ?? [...DEFAULT_SCOPE]);
  const allowedOrigins = [...new Set((input.allowedOrigins ?? []).map(checkOrigin))];
  const isPublic = input.isPublic ?? false;
  checkGrantsFit(grants, isPublic);
  const clientSecret = isPublic ? undefined : newOpaqueToken();
  const now = clock();
  // issue 39: a Client ID Metadata Document's URL is its own client_id
  const clientId = input.clientId ?? newClientId();
  const row: store.ClientRow = {
    client_id: clientId,
    name,
    secret_hash: clientSecret === undefined ? null : keyedHash(hashKey, clientSecret),
    redirect_uris: JSON.stringify(redirectUris),
    scopes: JSON.stringify(scopes),
    is_public: isPublic ? 1 : 0,
    enabled: 1,
    allowed_origins: JSON.stringify(allowedOrigins),
    created_at: now,
    updated_at: now,
    oidc: input.oidc ? 1 : 0,
    post_logout_redirect_uris: checkPostLogoutRedirectUris(input.postLogoutRedirectUris ?? []),
    id_token_alg: input.idTokenAlg ?? null,
    grants: JSON.stringify(grants),
    service_sub: null,
    ...(input.dynamic ? { dynamic: 1, registration: JSON.stringify(input.dynamic) } : {}),
  };
  await db.transaction().execute(async (trx) => {
    await store.insertClient(trx, row);
    // issue 43: the application's own identity for client_credentials, made with it.
    if (grants.includes('client_credentials')) {
      row.service_sub = await createServiceAccount(trx, clock, clientId);
      await store.updateClient(trx, clientId, { service_sub: row.service_sub });
    }
  });
  forgetClient(db, clientId);
  return clientSecret === undefined ? { client: clientFromRow(row) } : { client: clientFromRow(row), clientSecret };
}

export async function findClient(db: Db, clientId: string): Promise<Client | undefined> {
  // No client_id has a NUL character, and PostgreSQL refuses to compare one (an error, not "no row").
  if (clientId.includes('\u0000')) return undefined;
  const row = await store.findClient(db, clientId);
  return row && clientFromRow(row);
}

/**
 * findClient for the OAuth hot paths (token, userinfo, revoke): the record may be up to
 * CLIENT_CACHE_MS old when another process changed it; this process's own changes show at once
 * (clients.cache.ts). Admin and consent pages use findClient.
 */
export async function findClientCached(db: Db, clientId: string): Promise<Client | undefined> {
  if (clientId.includes('\u0000')) return undefined;
  const row = await cachedClientRow(db, clientId, store.findClient);
  if (row === undefined) return undefined;
  // One record per cached row, not a new one (and new copies of its lists) on every request (issue 44);
  // frozen, lists included, since every hot-path caller shares it.
  let client = cachedRecords.get(row);
  if (client === undefined) cachedRecords.set(row, (client = frozenClient(clientFromRow(row))));
  return client;
}

/** The record of each row the client cache holds; goes with the row when the cache lets it go. */
const cachedRecords = new WeakMap<store.ClientRow, Client>();

function frozenClient(client: Client): Client {
  Object.freeze(client.redirectUris);
  Object.freeze(client.scopes);
  Object.freeze(client.allowedOrigins);
  Object.freeze(client.postLogoutRedirectUris);
  if (client.registration) Object.freeze(client.registration);
  return Object.freeze(client);
}

export async function getClient(db: Db, clientId: string): Promise<Client> {
  const client = await findClient(db, clientId);
  if (!client) throw new ClientError('not_found', `no application with client_id ${clientId}`);
  return client;
}

export async function listClients(db: Db): Promise<Client[]> {
  return (await store.listClients(db)).map(clientFromRow);
}

export type ClientChanges = {
  name?: string | undefined;
  redirectUris?: string[] | undefined;
  scopes?: string[] | undefined;
  allowedOrigins?: string[] | undefined;
  enabled?: boolean | undefined;
  oidc?: boolean | undefined;
  postLogoutRedirectUris?: string[] | undefined;
  idTokenAlg?: 'ES256' | 'RS256' | null | undefined;
  /** issue 43: replaces the extra grants ([] removes them all) */
  grants?: string[] | undefined;
};

export async function updateClient(db: Db, clock: Clock, clientId: string, changes: ClientChanges): Promise<Client> {
  const row: Partial<store.ClientRow> = { updated_at: clock() };
  if (changes.grants !== undefined) {
    const current = await getClient(db, clientId);
    const grants = checkGrants(changes.grants);
    checkGrantsFit(grants, current.isPublic);
    row.grants = JSON.stringify(grants);
    // The service identity is made when client_credentials is first given and kept when it is taken
    // away (its tasks stay; the grant is refused at the token endpoint, so no new token names it).
    if (grants.includes('client_credentials') && current.serviceSub === null) row.service_sub = await createServiceAccount(db, clock, clientId);
  }
  if (changes.name !== undefined) row.name = checkName(changes.name);
  if (changes.redirectUris !== undefined) {
    if (changes.redirectUris.length === 0 && (changes.grants ?? (await getClient(db, clientId)).grants).length === 0) throw new ClientError('invalid_redirect_uri', 'at least one redirect URI is required');
    row.redirect_uris = JSON.stringify([...new Set(changes.redirectUris.map(checkRedirectUri))]);
  }
  if (changes.scopes !== undefined) row.scopes = JSON.stringify(checkScopes(changes.scopes));
  if (changes.allowedOrigins !== undefined) row.allowed_origins = JSON.stringify([...new Set(changes.allowedOrigins.map(checkOrigin))]);
  if (changes.enabled !== undefined) row.enabled = changes.enabled ? 1 : 0;
  if (changes.oidc !== undefined) row.oidc = changes.oidc ? 1 : 0;
  if (changes.postLogoutRedirectUris !== undefined) row.post_logout_redirect_uris = checkPostLogoutRedirectUris(changes.postLogoutRedirectUris);
  if (changes.idTokenAlg !== undefined) row.id_token_alg = changes.idTokenAlg;
  if (!(await store.updateClient(db, clientId, row))) throw new ClientError('not_found', `no application with client_id ${clientId}`);
  return getClient(db, clientId);
}

/**
 * issue 39: what a self-registered application says about itself changed (a Client ID Metadata Document
 * fetched again): its name, redirect URIs, scopes and registration metadata follow. Whether it is enabled
 * stays the operator's decision.
 */
export async function updateDynamicRegistration(db: Db, clock: Clock, clientId: string, metadata: { name: string; redirectUris: string[]; scopes: string[]; registration: RegistrationMetadata }): Promise<Client> {
  await store.updateClient(db, clientId, {
    name: checkName(metadata.name),
    redirect_uris: JSON.stringify([...new Set(metadata.redirectUris.map(checkRedirectUri))]),
    scopes: JSON.stringify(checkScopes(metadata.scopes)),
    registration: JSON.stringify(metadata.registration),
    updated_at: clock(),
  });
  return getClient(db, clientId);
}

/** Issues a new secret; the old one stops working at once. */
export async function rotateClientSecret(db: Db, clock: Clock, hashKey: Buffer, clientId: string): Promise<{ client: Client; clientSecret: string }> {
  const client = await getClient(db, clientId);
  if (client.isPublic) throw new ClientError('public_client', `application ${clientId} is public and has no secret`);
  const clientSecret = newOpaqueToken();
  await store.updateClient(db, clientId, { secret_hash: keyedHash(hashKey, clientSecret), updated_at: clock() });
  return { client: await getClient(db, clientId), clientSecret };
}

/**
 * issue 39: deletes the applications that registered themselves before `createdBefore` and were never
 * used for a grant (no consent, no code or token); returns their client_ids.
 */
export async function deleteUnusedDynamicClients(db: Db, createdBefore: number): Promise<string[]> {
  return store.deleteUnusedDynamicClients(db, createdBefore);
}

/** Removes the application with its grants, codes and tokens. */
export async function deleteClient(db: Db, clientId: string): Promise<void> {
  const client = await findClient(db, clientId);
  await db.transaction().execute(async (trx) => {
    if (!(await store.deleteClient(trx, clientId))) throw new ClientError('not_found', `no application with client_id ${clientId}`);
    // issue 43: its service identity goes with it (and that identity's tasks and tokens, by cascade).
    if (client?.serviceSub) await deleteServiceAccount(trx, client.serviceSub);
  });
  forgetClient(db, clientId);
}

/** issue 43: the application whose service identity `sub` is, if it is one. */
export async function findClientByServiceSub(db: Db, sub: string): Promise<Client | undefined> {
  const row = await store.findClientByServiceSub(db, sub);
  return row && clientFromRow(row);
}

/**
 * Whether the secret is this application's, compared in constant time. A public client has no secret
 * and never matches; the same HMAC work is spent for it as for a real check.
 */
export function clientSecretMatches(hashKey: Buffer, client: Client, clientSecret: string): boolean {
  const stored = client.secretHash ?? keyedHash(hashKey, 'public-client-has-no-secret');
  return matchesKeyedHash(hashKey, clientSecret, stored) && client.secretHash !== null;
}
