// What every import format reads its file into: one item per person, application or line, each with
// the line of the file it came from, so a refusal can name it.
import type { ImportedPerson } from '../accounts/account-import.ts';
import type { ImportedClient } from '../clients/client-import.ts';

export const IMPORT_FORMATS = ['signet', 'keycloak', 'auth0', 'csv'] as const;
export type ImportFormat = (typeof IMPORT_FORMATS)[number];

export function isImportFormat(value: string): value is ImportFormat {
  return (IMPORT_FORMATS as readonly string[]).includes(value);
}

/** The file as a whole cannot be imported (empty, say): nothing was written. */
export class ImportFileError extends Error {
  override name = 'ImportFileError';
}

export type ImportItem =
  | { line: number; kind: 'account'; person: ImportedPerson }
  | { line: number; kind: 'client'; client: ImportedClient }
  /** a record of Signet's export that another domain reads (see EXTENSION_TYPES in signet.ts) */
  | { line: number; kind: 'extension'; type: string; record: Record<string, unknown> }
  /** not a person (a Keycloak service account), or a record type this version does not know */
  | { line: number; kind: 'skip'; reason: string }
  | { line: number; kind: 'error'; reason: string };

/** The file as text, a chunk at a time (decoded as UTF-8 across chunk boundaries). */
export type TextChunks = AsyncIterable<string>;

export type JsonObject = Record<string, unknown>;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A field that must be a string when present. */
export function optionalString(record: JsonObject, key: string): string | undefined {
  const value = record[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new FormatError(`"${key}" must be a string`);
  return value;
}

export function optionalBoolean(record: JsonObject, key: string): boolean | undefined {
  const value = record[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw new FormatError(`"${key}" must be true or false`);
  return value;
}

/** A record the format cannot read: the reason goes into the summary with its line. */
export class FormatError extends Error {
  override name = 'FormatError';
}
