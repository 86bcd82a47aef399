// Upstream identity providers and people's links to them in Signet's export (issue 33 meets issue 35):
// `provider` records (the client secret only sealed, and only with --include-secrets: it opens with the
// same SIGNET_SECRET) and `link` records (which upstream identity signs in to which account). The rules
// stay in accounts/upstream; this file only maps records to and from them.
import { importLink, listAllLinks } from '../accounts/upstream/links.ts';
import { importProvider, listProvidersSealed } from '../accounts/upstream/providers.ts';
import type { Clock } from '../config/clock.ts';
import type { Db } from '../db/database.ts';
import { FormatError, optionalBoolean, optionalString, type JsonObject } from './records.ts';

function required(record: JsonObject, key: string): string {
  const value = optionalString(record, key);
  if (value === undefined) throw new FormatError(`"${key}" is missing`);
  return value;
}

function time(record: JsonObject, key: string): number | undefined {
  const value = optionalString(record, key);
  const at = value === undefined ? undefined : Date.parse(value);
  return at === undefined || Number.isNaN(at) ? undefined : at;
}

export function importProviderRecord(db: Db, clock: Clock, record: JsonObject): Promise<'created' | 'updated'> {
  return importProvider(db, clock, {
    slug: required(record, 'slug'),
    name: required(record, 'name'),
    kind: required(record, 'kind'),
    preset: optionalString(record, 'preset') ?? null,
    issuer: required(record, 'issuer'),
    clientId: required(record, 'client_id'),
    scope: required(record, 'scope'),
    enabled: optionalBoolean(record, 'enabled') ?? true,
    clientSecretSealed: optionalString(record, 'client_secret_sealed'),
    createdAt: time(record, 'created_at'),
  });
}

export function importLinkRecord(db: Db, clock: Clock, record: JsonObject): Promise<'created' | 'updated'> {
  return importLink(db, clock, { sub: required(record, 'sub'), provider: required(record, 'provider'), upstreamSub: required(record, 'upstream_sub'), email: optionalString(record, 'email') ?? null, linkedAt: time(record, 'linked_at') });
}

/** Providers first, then links (a link names its provider and account, which the import must have read before). */
export async function* exportUpstream(db: Db, options: { includeSecrets: boolean }): AsyncGenerator<JsonObject & { type: string }> {
  for (const row of await listProvidersSealed(db)) {
    yield {
      type: 'provider',
      slug: row.slug,
      name: row.name,
      kind: row.kind,
      preset: row.preset,
      issuer: row.issuer,
      client_id: row.client_id,
      scope: row.scope,
      enabled: row.enabled === 1,
      created_at: new Date(Number(row.created_at)).toISOString(),
      updated_at: new Date(Number(row.updated_at)).toISOString(),
      ...(options.includeSecrets ? { client_secret_sealed: row.client_secret_sealed } : {}),
    };
  }
  for (const link of await listAllLinks(db)) yield { type: 'link', sub: link.sub, provider: link.provider, upstream_sub: link.upstream_sub, email: link.email, linked_at: link.linked_at };
}
