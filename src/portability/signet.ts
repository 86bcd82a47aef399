// Signet's own export: JSON Lines, one record a line, each with its `type`. The first line says what
// the file is; then accounts, applications, and (from a Signet with upstream identity providers)
// providers and links. Written by export.ts, read here; a type this version does not know is skipped
// with its line, so a newer export still brings what this one can take.
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import type { ImportedPerson } from '../accounts/account-import.ts';
import type { ImportedClient } from '../clients/client-import.ts';
import { FormatError, isObject, optionalBoolean, optionalString, type ImportItem, type JsonObject, type TextChunks } from './records.ts';

/** The first line of an export. */
export const EXPORT_HEADER_TYPE = 'signet-export';
export const EXPORT_VERSION = 1;

/**
 * Record types another domain owns: read into `extension` items and handed to the importer registered
 * for them (import.ts EXTENSION_IMPORTERS); the export writes them through EXTENSION_EXPORTERS.
 */
export const EXTENSION_TYPES = ['provider', 'link'] as const;

function stringList(record: JsonObject, key: string): string[] {
  const value = record[key];
  if (value === undefined) return [];
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) throw new FormatError(`"${key}" must be a list of strings`);
  return value;
}

function time(record: JsonObject, key: string): number | undefined {
  const value = optionalString(record, key);
  if (value === undefined) return undefined;
  const at = Date.parse(value);
  if (Number.isNaN(at)) throw new FormatError(`"${key}" is not a time`);
  return at;
}

export function signetPerson(record: JsonObject): ImportedPerson {
  return {
    sub: optionalString(record, 'sub'),
    email: optionalString(record, 'email'),
    emailVerified: optionalBoolean(record, 'email_verified'),
    phone: optionalString(record, 'phone_number'),
    phoneVerified: optionalBoolean(record, 'phone_number_verified'),
    name: optionalString(record, 'name') ?? '',
    picture: optionalString(record, 'picture') ?? '',
    disabled: optionalBoolean(record, 'disabled') ?? false,
    createdAt: time(record, 'created_at'),
    passwordHash: optionalString(record, 'password_hash'),
    roles: stringList(record, 'roles'),
  };
}

export function signetClient(record: JsonObject): ImportedClient {
  const clientId = optionalString(record, 'client_id');
  const name = optionalString(record, 'name');
  if (clientId === undefined || name === undefined) throw new FormatError('an application needs client_id and name');
  const alg = record['id_token_signed_response_alg'] ?? null;
  if (alg !== null && alg !== 'ES256' && alg !== 'RS256') throw new FormatError('"id_token_signed_response_alg" must be ES256, RS256 or null');
  return {
    clientId,
    name,
    redirectUris: stringList(record, 'redirect_uris'),
    scopes: stringList(record, 'scopes'),
    isPublic: optionalBoolean(record, 'public') ?? false,
    enabled: optionalBoolean(record, 'enabled') ?? true,
    allowedOrigins: stringList(record, 'allowed_origins'),
    oidc: optionalBoolean(record, 'oidc') ?? false,
    postLogoutRedirectUris: stringList(record, 'post_logout_redirect_uris'),
    idTokenAlg: alg,
    grants: stringList(record, 'grants'),
    secretHash: optionalString(record, 'secret_hash'),
    createdAt: time(record, 'created_at'),
    // issue 39: a self-registered application (dynamic: true) carries what it registered
    ...(record['dynamic'] === true ? { registration: record['registration'] ?? null } : {}),
  };
}

function item(record: JsonObject, line: number): ImportItem {
  const type = record['type'];
  if (type === 'account') return { line, kind: 'account', person: signetPerson(record) };
  if (type === 'client') return { line, kind: 'client', client: signetClient(record) };
  if ((EXTENSION_TYPES as readonly unknown[]).includes(type)) return { line, kind: 'extension', type: type as string, record };
  return { line, kind: 'skip', reason: `a record of type ${JSON.stringify(String(type).slice(0, 40))}, which this version of Signet does not read` };
}

export async function* readSignet(chunks: TextChunks): AsyncGenerator<ImportItem> {
  let line = 0;
  for await (const text of createInterface({ input: Readable.from(chunks), crlfDelay: Infinity })) {
    line++;
    if (text.trim() === '') continue;
    let record: unknown;
    try {
      record = JSON.parse(text);
    } catch {
      yield { line, kind: 'error', reason: 'not valid JSON' };
      continue;
    }
    if (!isObject(record)) {
      yield { line, kind: 'error', reason: 'a line must be a JSON object with a "type"' };
      continue;
    }
    if (record['type'] === EXPORT_HEADER_TYPE) {
      if (record['version'] !== EXPORT_VERSION) yield { line, kind: 'error', reason: `export version ${String(record['version'])} is not one this Signet reads (${EXPORT_VERSION}); import it with a newer Signet` };
      continue;
    }
    try {
      yield item(record, line);
    } catch (error) {
      if (!(error instanceof FormatError)) throw error;
      yield { line, kind: 'error', reason: error.message };
    }
  }
}
