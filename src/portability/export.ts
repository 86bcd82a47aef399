// `signet export`: every account, application and (with the upstream-provider domain) provider and
// link, as JSON Lines — one record a line with its `type`, read back by `signet import`. Streamed a page
// at a time. Password hashes and application secret hashes only with `includeSecrets`; never
// sessions, tokens or second factors (people set up TOTP and passkeys again after a move).
import { exportAccounts } from '../accounts/account-import.ts';
import { exportClients } from '../clients/client-import.ts';
import type { Clock } from '../config/clock.ts';
import type { Db } from '../db/database.ts';
import type { JsonObject } from './records.ts';
import { EXPORT_HEADER_TYPE, EXPORT_VERSION } from './signet.ts';
import { exportUpstream } from './upstream.ts';

export type ExportOptions = { includeSecrets: boolean };

/**
 * The writers of record types other domains own (upstream identity providers: `provider`, `link`,
 * upstream.ts), each yielding records with their `type`; they follow accounts and applications.
 */
export type ExtensionExporter = (db: Db, options: ExportOptions) => AsyncIterable<JsonObject & { type: string }>;
const EXTENSION_EXPORTERS: ExtensionExporter[] = [exportUpstream];

/** How many records of each type were written. */
export type ExportCounts = Record<string, number>;

/** The export, a line at a time; `counts` fills as the lines are read. */
export async function* exportLines(db: Db, clock: Clock, options: ExportOptions, counts: ExportCounts = {}): AsyncGenerator<string> {
  yield JSON.stringify({ type: EXPORT_HEADER_TYPE, version: EXPORT_VERSION, exported_at: new Date(clock()).toISOString(), includes_secrets: options.includeSecrets }) + '\n';
  const line = (type: string, record: object) => {
    counts[type] = (counts[type] ?? 0) + 1;
    return JSON.stringify({ type, ...record }) + '\n';
  };
  for await (const account of exportAccounts(db, options)) yield line('account', account);
  for await (const client of exportClients(db, options)) yield line('client', client);
  for (const exporter of EXTENSION_EXPORTERS) {
    for await (const { type, ...record } of exporter(db, options)) yield line(type, record);
  }
}
