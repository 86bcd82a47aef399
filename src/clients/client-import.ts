// Applications brought in by `signet import` from Signet's own export, and written out by `signet
// export` (issue 35): the same client_id, and — when the export included secrets — the same keyed
// hash of the secret, so an instance with the same SIGNET_SECRET accepts the application's old secret.
import type { Clock } from '../config/clock.ts';
import type { Db } from '../db/database.ts';
import { createServiceAccount } from '../accounts/service-accounts.ts';
import { BUILT_IN_CLI_CLIENT_ID, checkGrants, checkName, checkOrigin, checkPostLogoutRedirectUris, checkRedirectUri, checkScopes, ClientError, listClients, toView, type Client, type ClientView, type RegistrationMetadata } from './clients.ts';
import * as store from './clients.store.ts';

/** An application as an export describes it: its client_id and settings, and the keyed hash of its secret when the export had secrets. */
export type ImportedClient = Omit<Client, 'scopes' | 'secretHash' | 'createdAt' | 'updatedAt' | 'grants' | 'serviceSub' | 'dynamic' | 'registration'> & {
  scopes: string[];
  /** issue 39: it registered itself (RFC 7591 or a Client ID Metadata Document), with this metadata; undefined: an operator's application */
  registration?: unknown;
  /** issue 43: the extra grants (absent in exports from before it: none) */
  grants?: string[] | undefined;
  /** the keyed hash of the secret (HMAC-SHA-256 under a key from SIGNET_SECRET); undefined: not in the file */
  secretHash?: string | undefined;
  createdAt?: number | undefined;
};

/** What oauth/secrets.ts keyedHash writes: 32 bytes, base64url. */
const KEYED_HASH = /^[A-Za-z0-9_-]{43}$/;
const CLIENT_ID = /^[A-Za-z0-9._~-]{1,200}$/;

const REGISTRATION_STRINGS = ['client_uri', 'logo_uri', 'software_id', 'software_version'] as const;

/**
 * issue 39: the registration metadata of a self-registered application as the export wrote it
 * (clients.ts RegistrationMetadata), checked field by field; anything else is refused.
 */
export function checkImportedRegistration(value: unknown): RegistrationMetadata {
  const refuse = (what: string) => new ClientError('invalid_registration', `registration ${what}`);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw refuse('must be an object');
  const r = value as Record<string, unknown>;
  const method = r.token_endpoint_auth_method;
  if (method !== 'none' && method !== 'client_secret_post') throw refuse('token_endpoint_auth_method must be none or client_secret_post');
  const list = (name: 'grant_types' | 'response_types') => {
    const v = r[name];
    if (!Array.isArray(v) || v.length > 10 || !v.every((x) => typeof x === 'string' && /^[a-z_]{1,40}$/.test(x))) throw refuse(`${name} must be a list of names`);
    return v as string[];
  };
  const out: RegistrationMetadata = { token_endpoint_auth_method: method, grant_types: list('grant_types'), response_types: list('response_types') };
  for (const name of REGISTRATION_STRINGS) {
    const v = r[name];
    if (v === undefined) continue;
    if (typeof v !== 'string' || v.length > 2000) throw refuse(`${name} must be a string`);
    out[name] = v;
  }
  if (r.metadata_document !== undefined) {
    if (r.metadata_document !== true) throw refuse('metadata_document must be true when present');
    out.metadata_document = true;
  }
  return out;
}

/** A client_id Signet issues, or (issue 39) the https URL of a Client ID Metadata Document. */
function clientIdAcceptable(clientId: string, registration: RegistrationMetadata | undefined): boolean {
  if (registration?.metadata_document) return clientId.length <= 2000 && !/[\s#?]/.test(clientId) && URL.canParse(clientId) && new URL(clientId).protocol === 'https:';
  return CLIENT_ID.test(clientId);
}

/**
 * Creates the application with its own client_id, or updates the one with that client_id. A
 * confidential application without a secret hash in the file keeps the secret it has; a new one gets
 * none, so nothing can authenticate as it until `signet client rotate-secret` gives it one.
 */
export async function importClient(db: Db, clock: Clock, input: ImportedClient): Promise<'created' | 'updated'> {
  const registration = input.registration === undefined ? undefined : checkImportedRegistration(input.registration);
  if (!clientIdAcceptable(input.clientId, registration)) throw new ClientError('invalid_client_id', `the client_id ${JSON.stringify(input.clientId.slice(0, 60))} is not one Signet issues (letters, digits, - . _ ~)`);
  if (input.secretHash !== undefined && !KEYED_HASH.test(input.secretHash)) throw new ClientError('invalid_secret_hash', 'secret_hash is not a keyed hash as Signet writes them (43 base64url characters)');
  const grants = checkGrants(input.grants ?? []);
  if (input.redirectUris.length === 0 && grants.length === 0) throw new ClientError('invalid_redirect_uri', 'at least one redirect URI is required');
  const now = clock();
  const fields = {
    name: checkName(input.name),
    redirect_uris: JSON.stringify([...new Set(input.redirectUris.map(checkRedirectUri))]),
    scopes: JSON.stringify(checkScopes(input.scopes)),
    is_public: input.isPublic ? 1 : 0,
    enabled: input.enabled ? 1 : 0,
    allowed_origins: JSON.stringify([...new Set(input.allowedOrigins.map(checkOrigin))]),
    oidc: input.oidc ? 1 : 0,
    post_logout_redirect_uris: checkPostLogoutRedirectUris(input.postLogoutRedirectUris),
    id_token_alg: input.idTokenAlg,
    // issue 39: a self-registered application stays one (consent page, expiry of unused registrations)
    dynamic: registration ? 1 : 0,
    registration: registration ? JSON.stringify(registration) : null,
    grants: JSON.stringify(grants),
    updated_at: now,
  } as const;
  const secret = input.isPublic ? { secret_hash: null } : input.secretHash === undefined ? {} : { secret_hash: input.secretHash };
  const existing = await store.findClient(db, input.clientId);
  // issue 43: an application with client_credentials acts as its own service identity (made here when it has none).
  const serviceSub = grants.includes('client_credentials') && !existing?.service_sub ? { service_sub: await createServiceAccount(db, clock, input.clientId) } : {};
  if (existing) {
    await store.updateClient(db, input.clientId, { ...fields, ...secret, ...serviceSub });
    return 'updated';
  }
  await store.insertClient(db, { client_id: input.clientId, secret_hash: null, ...fields, ...secret, ...serviceSub, created_at: input.createdAt ?? now });
  return 'created';
}

/** An application as the export writes it: the contract's view, its registration metadata when it registered itself, and its secret's keyed hash with secrets. */
export type ExportedClient = ClientView & { registration?: RegistrationMetadata; secret_hash?: string };

export async function* exportClients(db: Db, options: { includeSecrets: boolean }): AsyncGenerator<ExportedClient> {
  for (const client of await listClients(db)) {
    // issue 43: every instance registers the command line's application itself (migration 0018).
    if (client.clientId === BUILT_IN_CLI_CLIENT_ID) continue;
    const view: ExportedClient = toView(client);
    if (client.dynamic && client.registration) view.registration = client.registration;
    if (options.includeSecrets && client.secretHash !== null) view.secret_hash = client.secretHash;
    yield view;
  }
}
