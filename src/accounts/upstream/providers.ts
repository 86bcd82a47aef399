// Upstream identity providers (issue 33): what operators add with `signet idp add`, the admin API and
// the console. Each has a slug (its part of the redirect URI), a display name ("Sign in with NAME"),
// and either an OpenID Provider's issuer (endpoints and keys from its discovery document) or a preset:
// GitHub (OAuth 2.0 with its user and e-mails API) or a plain-OIDC preset that fills the issuer in.
// The client secret is sealed under keys.upstreamSecret with the slug bound to it, and never shown again.
import type { Clock } from '../../config/clock.ts';
import { seal, unseal } from '../../config/sealing.ts';
import type { Db } from '../../db/database.ts';
import { isUniqueViolation } from '../../db/errors.ts';
import * as store from './upstream.store.ts';

export type ProviderErrorCode = 'invalid_slug' | 'invalid_issuer' | 'invalid_preset' | 'invalid_name' | 'invalid_client' | 'invalid_scope' | 'slug_taken' | 'not_found';

export class ProviderError extends Error {
  readonly code: ProviderErrorCode;
  constructor(code: ProviderErrorCode, message: string) {
    super(message);
    this.code = code;
    this.name = 'ProviderError';
  }
}

export type ProviderKind = 'oidc' | 'github';

/** The presets: GitHub speaks OAuth 2.0 only; the others are OpenID Providers with a known issuer. */
export const PRESETS = {
  github: { kind: 'github', name: 'GitHub', issuer: 'https://github.com', scope: 'read:user user:email' },
  google: { kind: 'oidc', name: 'Google', issuer: 'https://accounts.google.com', scope: 'openid email profile' },
  // Microsoft Entra ID: one tenant's issuer (the multi-tenant "common" endpoint has no fixed issuer to check).
  entra: { kind: 'oidc', name: 'Microsoft', issuer: undefined, scope: 'openid email profile' },
  gitlab: { kind: 'oidc', name: 'GitLab', issuer: 'https://gitlab.com', scope: 'openid email profile' },
  // A Keycloak realm: https://HOST/realms/REALM
  keycloak: { kind: 'oidc', name: 'Keycloak', issuer: undefined, scope: 'openid email profile' },
} as const satisfies Record<string, { kind: ProviderKind; name: string; issuer: string | undefined; scope: string }>;

export type PresetName = keyof typeof PRESETS;
/** `microsoft` is another name for `entra`. */
const PRESET_ALIASES: Record<string, PresetName> = { microsoft: 'entra' };

export function presetNamed(value: string): PresetName {
  const name = PRESET_ALIASES[value] ?? value;
  if (!(name in PRESETS)) throw new ProviderError('invalid_preset', `unknown preset "${value}": use one of ${[...Object.keys(PRESETS), 'microsoft'].join(', ')}`);
  return name as PresetName;
}

/** A provider as the code uses it; `clientSecret` only from providerWithSecret. */
export type Provider = {
  slug: string;
  name: string;
  kind: ProviderKind;
  preset: PresetName | null;
  issuer: string;
  clientId: string;
  scope: string;
  enabled: boolean;
  createdAt: number;
  updatedAt: number;
};

/** The operator contract's shape: `{"slug","name","issuer","redirect_uri",…}` — never the secret. */
export type ProviderView = {
  slug: string;
  name: string;
  issuer: string;
  redirect_uri: string;
  kind: ProviderKind;
  preset: string | null;
  client_id: string;
  scope: string;
  enabled: boolean;
  created_at: string;
  updated_at: string;
};

/** spec: the redirect URI to register at the upstream, `{base_url}/signin/idp/SLUG/callback`. */
export function redirectUriOf(baseUrl: string | URL, slug: string): string {
  return `${new URL(baseUrl).origin}/signin/idp/${slug}/callback`;
}

export function toProviderView(provider: Provider, baseUrl: string | URL): ProviderView {
  return {
    slug: provider.slug,
    name: provider.name,
    issuer: provider.issuer,
    redirect_uri: redirectUriOf(baseUrl, provider.slug),
    kind: provider.kind,
    preset: provider.preset,
    client_id: provider.clientId,
    scope: provider.scope,
    enabled: provider.enabled,
    created_at: new Date(provider.createdAt).toISOString(),
    updated_at: new Date(provider.updatedAt).toISOString(),
  };
}

function fromRow(row: store.ProviderRow): Provider {
  return {
    slug: row.slug,
    name: row.name,
    kind: row.kind === 'github' ? 'github' : 'oidc',
    preset: row.preset !== null && row.preset in PRESETS ? (row.preset as PresetName) : null,
    issuer: row.issuer,
    clientId: row.client_id,
    scope: row.scope,
    enabled: row.enabled === 1,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

const SLUG = /^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$/;

function checkedSlug(slug: string): string {
  if (!SLUG.test(slug)) throw new ProviderError('invalid_slug', `"${slug}" is not a slug: 1 to 40 lower-case letters, digits and hyphens (it becomes part of the redirect URI)`);
  return slug;
}

function checkedName(name: string): string {
  const clean = name.replace(/[\u0000-\u001f\u007f]/g, '').trim();
  if (clean.length === 0 || clean.length > 80) throw new ProviderError('invalid_name', 'the display name must have 1 to 80 characters');
  return clean;
}

/**
 * An issuer is an https URL without query or fragment (OpenID Connect Discovery §2); plain http only on
 * the loopback host, for development and tests.
 */
export function checkedIssuer(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ProviderError('invalid_issuer', `"${value}" is not a URL: give the issuer, e.g. https://accounts.google.com`);
  }
  const loopback = url.hostname === '127.0.0.1' || url.hostname === 'localhost' || url.hostname === '[::1]';
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) throw new ProviderError('invalid_issuer', 'the issuer must be an https URL (plain http only on 127.0.0.1 or localhost)');
  if (url.search || url.hash || url.username || url.password) throw new ProviderError('invalid_issuer', 'the issuer has no query, fragment or credentials');
  return value.replace(/\/+$/, '') || value;
}

function checkedClientId(value: string): string {
  if (value.length === 0 || value.length > 400 || /[\u0000-\u001f\u007f]/.test(value)) throw new ProviderError('invalid_client', 'the client id must have 1 to 400 printable characters');
  return value;
}

function checkedSecret(value: string): string {
  const secret = value.replace(/\r?\n$/, '');
  if (secret.length === 0 || secret.length > 2000) throw new ProviderError('invalid_client', 'the client secret is empty (or over 2000 characters): pipe it on standard input');
  return secret;
}

function checkedScope(kind: ProviderKind, value: string): string {
  const scope = value.split(/[\s,]+/).filter(Boolean);
  if (scope.length === 0 || scope.length > 30 || !scope.every((s) => /^[\x21\x23-\x5b\x5d-\x7e]{1,100}$/.test(s))) throw new ProviderError('invalid_scope', 'the scope is a space-separated list of scope names');
  // OpenID Connect: without `openid` there is no id_token, and the sign-in would have nothing to check.
  if (kind === 'oidc' && !scope.includes('openid')) throw new ProviderError('invalid_scope', 'the scope of an OpenID Provider must include openid');
  return scope.join(' ');
}

function sealSecret(key: Buffer, slug: string, secret: string): string {
  return seal(key, `upstream-client-secret\n${slug}`, Buffer.from(secret, 'utf8'));
}

/** The provider's client secret, unsealed (for the token request only). */
export function unsealClientSecret(key: Buffer, row: Pick<store.ProviderRow, 'slug' | 'client_secret_sealed'>): string {
  return unseal(key, `upstream-client-secret\n${row.slug}`, row.client_secret_sealed).toString('utf8');
}

export type NewProvider = {
  slug: string;
  name?: string | undefined;
  issuer?: string | undefined;
  preset?: string | undefined;
  /** Microsoft Entra ID: the tenant (its id or domain), when no issuer is given */
  tenant?: string | undefined;
  clientId: string;
  clientSecret: string;
  scope?: string | undefined;
};

function issuerFor(input: Pick<NewProvider, 'issuer' | 'tenant'>, preset: PresetName | undefined): string {
  if (input.issuer !== undefined) return checkedIssuer(input.issuer);
  if (preset === 'entra' && input.tenant !== undefined) {
    if (!/^[A-Za-z0-9.-]{1,100}$/.test(input.tenant) || ['common', 'organizations', 'consumers'].includes(input.tenant)) throw new ProviderError('invalid_issuer', 'give the tenant id (or its domain); "common", "organizations" and "consumers" have no single issuer to check');
    return `https://login.microsoftonline.com/${input.tenant}/v2.0`;
  }
  const fixed = preset === undefined ? undefined : PRESETS[preset].issuer;
  if (fixed !== undefined) return fixed;
  if (preset === 'entra') throw new ProviderError('invalid_issuer', 'the entra preset needs --tenant TENANT (or --issuer https://login.microsoftonline.com/TENANT/v2.0)');
  if (preset === 'keycloak') throw new ProviderError('invalid_issuer', 'the keycloak preset needs --issuer https://HOST/realms/REALM');
  throw new ProviderError('invalid_issuer', 'give --issuer URL (an OpenID Provider) or --preset NAME');
}

export async function addProvider(db: Db, clock: Clock, sealKey: Buffer, input: NewProvider): Promise<Provider> {
  const slug = checkedSlug(input.slug);
  const preset = input.preset === undefined ? undefined : presetNamed(input.preset);
  const kind: ProviderKind = preset === undefined ? 'oidc' : PRESETS[preset].kind;
  const now = clock();
  const row: store.ProviderRow = {
    slug,
    name: checkedName(input.name ?? (preset === undefined ? slug : PRESETS[preset].name)),
    kind,
    preset: preset ?? null,
    issuer: issuerFor(input, preset),
    client_id: checkedClientId(input.clientId),
    client_secret_sealed: sealSecret(sealKey, slug, checkedSecret(input.clientSecret)),
    scope: checkedScope(kind, input.scope ?? (preset === undefined ? 'openid email profile' : PRESETS[preset].scope)),
    enabled: 1,
    created_at: now,
    updated_at: now,
  };
  try {
    await store.insertProvider(db, row);
  } catch (error) {
    if (isUniqueViolation(error)) throw new ProviderError('slug_taken', `a provider with the slug ${slug} exists already`);
    throw error;
  }
  return fromRow(row);
}

export async function findProvider(db: Db, slug: string): Promise<Provider | undefined> {
  const row = SLUG.test(slug) ? await store.findProvider(db, slug) : undefined;
  return row && fromRow(row);
}

export async function getProvider(db: Db, slug: string): Promise<Provider> {
  const provider = await findProvider(db, slug);
  if (!provider) throw new ProviderError('not_found', `no identity provider with the slug ${slug}`);
  return provider;
}

/** The provider with its client secret, for the token request (undefined when unknown or disabled). */
export async function enabledProviderWithSecret(db: Db, sealKey: Buffer, slug: string): Promise<(Provider & { clientSecret: string }) | undefined> {
  const row = SLUG.test(slug) ? await store.findProvider(db, slug) : undefined;
  if (!row || row.enabled !== 1) return undefined;
  return { ...fromRow(row), clientSecret: unsealClientSecret(sealKey, row) };
}

export async function listProviders(db: Db): Promise<Provider[]> {
  return (await store.listProviderRows(db)).map(fromRow);
}

export async function listEnabledProviders(db: Db): Promise<Provider[]> {
  return (await listProviders(db)).filter((p) => p.enabled);
}

export type ProviderChanges = {
  name?: string | undefined;
  issuer?: string | undefined;
  clientId?: string | undefined;
  clientSecret?: string | undefined;
  scope?: string | undefined;
  enabled?: boolean | undefined;
};

export async function updateProvider(db: Db, clock: Clock, sealKey: Buffer, slug: string, changes: ProviderChanges): Promise<Provider> {
  const current = await getProvider(db, slug);
  const set: Parameters<typeof store.updateProvider>[2] = { updated_at: clock() };
  if (changes.name !== undefined) set.name = checkedName(changes.name);
  if (changes.issuer !== undefined) set.issuer = checkedIssuer(changes.issuer);
  if (changes.clientId !== undefined) set.client_id = checkedClientId(changes.clientId);
  if (changes.clientSecret !== undefined) set.client_secret_sealed = sealSecret(sealKey, slug, checkedSecret(changes.clientSecret));
  if (changes.scope !== undefined) set.scope = checkedScope(current.kind, changes.scope);
  if (changes.enabled !== undefined) set.enabled = changes.enabled ? 1 : 0;
  if (!(await store.updateProvider(db, slug, set))) throw new ProviderError('not_found', `no identity provider with the slug ${slug}`);
  return getProvider(db, slug);
}

/** Removes the provider with every identity linked through it. */
export async function removeProvider(db: Db, slug: string): Promise<void> {
  if (!(await store.deleteProvider(db, slug))) throw new ProviderError('not_found', `no identity provider with the slug ${slug}`);
}

/** Every provider as stored, client secrets still sealed (for export; import inserts them back with the same SIGNET_SECRET). */
export function listProvidersSealed(db: Db): Promise<store.ProviderRow[]> {
  return store.listProviderRows(db);
}

/** A provider as Signet's export describes it (issue 35); `clientSecretSealed` only from an export with secrets. */
export type ImportedProvider = {
  slug: string;
  name: string;
  kind: string;
  preset: string | null;
  issuer: string;
  clientId: string;
  scope: string;
  enabled: boolean;
  /** sealed under keys.upstreamSecret with the slug bound to it: usable only with the same SIGNET_SECRET */
  clientSecretSealed?: string | undefined;
  createdAt?: number | undefined;
};

/**
 * `signet import` of a provider record: creates it with its sealed client secret, or updates the one
 * with that slug (keeping its secret when the record has none). A new provider needs its secret.
 */
export async function importProvider(db: Db, clock: Clock, input: ImportedProvider): Promise<'created' | 'updated'> {
  const slug = checkedSlug(input.slug);
  const kind: ProviderKind = input.kind === 'github' ? 'github' : 'oidc';
  if (input.kind !== kind) throw new ProviderError('invalid_preset', `unknown provider kind ${JSON.stringify(input.kind.slice(0, 20))} (oidc or github)`);
  const preset = input.preset === null ? null : presetNamed(input.preset);
  if (input.clientSecretSealed !== undefined && !/^v1\.[A-Za-z0-9_.-]{10,4000}$/.test(input.clientSecretSealed)) throw new ProviderError('invalid_client', 'client_secret_sealed is not a sealed secret as Signet writes them');
  const now = clock();
  const fields = {
    name: checkedName(input.name),
    kind,
    preset,
    issuer: kind === 'github' ? input.issuer : checkedIssuer(input.issuer),
    client_id: checkedClientId(input.clientId),
    scope: checkedScope(kind, input.scope),
    enabled: input.enabled ? 1 : 0,
    updated_at: now,
  } as const;
  if (await store.findProvider(db, slug)) {
    await store.updateProvider(db, slug, { ...fields, ...(input.clientSecretSealed === undefined ? {} : { client_secret_sealed: input.clientSecretSealed }) });
    return 'updated';
  }
  if (input.clientSecretSealed === undefined) throw new ProviderError('invalid_client', `the provider ${slug} is new here and the file has no client secret for it: export with --include-secrets, or add it with \`signet idp add\``);
  await store.insertProvider(db, { slug, ...fields, client_secret_sealed: input.clientSecretSealed, created_at: input.createdAt ?? now });
  return 'created';
}
