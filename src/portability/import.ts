// `signet import`: reads a file of people (and, from Signet's own export, applications) a few hundred
// records at a time and writes each batch in one transaction. A record that is refused — by its
// format, or by the accounts and clients rules — is reported with its line and writes nothing; the
// records around it still land. A second run of the same file updates, never duplicates. With
// `dryRun`, every batch runs and is rolled back: the summary is what a real run would say.
import { StringDecoder } from 'node:string_decoder';
import { importAccount } from '../accounts/account-import.ts';
import { AccountError } from '../accounts/accounts.ts';
import { LinkError } from '../accounts/upstream/links.ts';
import { ProviderError } from '../accounts/upstream/providers.ts';
import { importClient } from '../clients/client-import.ts';
import { ClientError } from '../clients/clients.ts';
import type { Clock } from '../config/clock.ts';
import type { Db } from '../db/database.ts';
import { isUniqueViolation } from '../db/errors.ts';
import { readAuth0 } from './auth0.ts';
import { readCsv } from './csv.ts';
import { readKeycloak } from './keycloak.ts';
import { FormatError, ImportFileError, type ImportFormat, type ImportItem, type JsonObject, type TextChunks } from './records.ts';
import { EXPORT_HEADER_TYPE, readSignet } from './signet.ts';
import { importLinkRecord, importProviderRecord } from './upstream.ts';

export type ImportError = { line: number; reason: string };
/** The contract's summary: `{"created","updated","skipped","errors":[…]}`. */
export type ImportSummary = { created: number; updated: number; skipped: number; errors: ImportError[] };
export type ImportProgress = { records: number; bytes: number };
export type ImportOptions = { format?: ImportFormat | undefined; dryRun: boolean; onProgress?: ((progress: ImportProgress) => void) | undefined };

/**
 * The importers of record types other domains own (Signet's export: `provider`, `link` — upstream
 * identity providers and people's links to them, upstream.ts). A type with no importer is skipped.
 */
export type ExtensionImporter = (db: Db, clock: Clock, record: JsonObject) => Promise<'created' | 'updated'>;
const EXTENSION_IMPORTERS: Partial<Record<string, ExtensionImporter>> = { provider: importProviderRecord, link: importLinkRecord };

/** Records written in one transaction. */
const BATCH = 250;
/** Past this many, refusals are counted in one last entry instead of listed one by one. */
const MAX_LISTED_ERRORS = 10_000;

/** Bytes in, text out (UTF-8 across chunk boundaries), counting the bytes read for progress. */
async function* decode(input: AsyncIterable<Buffer | string>, counter: { bytes: number }): TextChunks {
  const decoder = new StringDecoder('utf8');
  for await (const chunk of input) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    counter.bytes += bytes.length;
    const text = decoder.write(bytes);
    if (text) yield text;
  }
  const rest = decoder.end();
  if (rest) yield rest;
}

/** Reads the beginning of the text (up to its first line) and gives back the whole of it. */
async function peek(chunks: TextChunks): Promise<{ head: string; all: TextChunks }> {
  const iterator = chunks[Symbol.asyncIterator]();
  let head = '';
  let finished = false;
  while (!head.includes('\n') && head.length < 65_536) {
    const next = await iterator.next();
    if (next.done) {
      finished = true;
      break;
    }
    head += next.value;
  }
  async function* all(): TextChunks {
    if (head) yield head;
    if (finished) return;
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value;
  }
  return { head, all: all() };
}

/** What the file is when --format is not given: Signet's export, a Keycloak realm, an Auth0 array, or CSV. */
export function detectFormat(head: string): ImportFormat {
  const text = head.replace(/^\uFEFF/, '').trimStart();
  if (text.startsWith('[')) return 'auth0';
  if (text.startsWith('{')) {
    const firstLine = text.split('\n', 1)[0]!;
    try {
      const first = JSON.parse(firstLine) as unknown;
      if (typeof first === 'object' && first !== null && (first as JsonObject)['type'] === EXPORT_HEADER_TYPE) return 'signet';
      // a whole user on the first line: Auth0's export job (JSON Lines)
      if (typeof first === 'object' && first !== null && ('user_id' in first || 'email' in first) && !('realm' in first)) return 'auth0';
    } catch {
      // a realm file spreads over many lines
    }
    return 'keycloak';
  }
  return 'csv';
}

const READERS: Record<ImportFormat, (chunks: TextChunks) => AsyncGenerator<ImportItem>> = { signet: readSignet, keycloak: readKeycloak, auth0: readAuth0, csv: readCsv };

type Tally = { created: number; updated: number; skipped: number; errors: ImportError[] };

/** Why the rules refused a record, in words for the summary; undefined for anything else (the batch is retried record by record). */
function refusal(error: unknown): string | undefined {
  if (error instanceof AccountError || error instanceof ClientError || error instanceof ProviderError || error instanceof LinkError || error instanceof FormatError) return error.message;
  return undefined;
}

/**
 * A dry run rolls every batch back, so a link in a later batch would not find the account or provider an
 * earlier batch of the same file created: what the dry run created is remembered, and such a link counts
 * as created (a real run writes it).
 */
type DryRunMemory = { subs: Set<string>; providers: Set<string> };

function createdEarlierInDryRun(item: ImportItem, memory: DryRunMemory | undefined): boolean {
  if (!memory || item.kind !== 'extension' || item.type !== 'link') return false;
  return memory.subs.has(String(item.record['sub'])) || memory.providers.has(String(item.record['provider']));
}

async function applyItem(db: Db, clock: Clock, item: ImportItem, tally: Tally, memory: DryRunMemory | undefined): Promise<void> {
  if (item.kind === 'error') {
    tally.errors.push({ line: item.line, reason: item.reason });
    return;
  }
  if (item.kind === 'skip') {
    tally.skipped++;
    return;
  }
  if (createdEarlierInDryRun(item, memory)) {
    tally.created++;
    return;
  }
  try {
    let outcome: 'created' | 'updated' | 'skipped';
    if (item.kind === 'account') {
      const imported = await importAccount(db, clock, item.person);
      if (memory && imported.outcome === 'created') memory.subs.add(imported.sub);
      outcome = imported.outcome;
    } else if (item.kind === 'client') outcome = await importClient(db, clock, item.client);
    else outcome = (await EXTENSION_IMPORTERS[item.type]?.(db, clock, item.record)) ?? 'skipped';
    if (memory && item.kind === 'extension' && item.type === 'provider' && outcome === 'created') memory.providers.add(String(item.record['slug']));
    tally[outcome]++;
  } catch (error) {
    const reason = refusal(error);
    if (reason === undefined) throw error;
    tally.errors.push({ line: item.line, reason });
  }
}

class RollBack extends Error {}

/** One batch in one transaction (rolled back on a dry run). */
async function runBatch(db: Db, clock: Clock, items: ImportItem[], memory: DryRunMemory | undefined): Promise<Tally> {
  const dryRun = memory !== undefined;
  const tally: Tally = { created: 0, updated: 0, skipped: 0, errors: [] };
  try {
    await db.transaction().execute(async (trx) => {
      for (const item of items) await applyItem(trx, clock, item, tally, memory);
      if (dryRun) throw new RollBack();
    });
  } catch (error) {
    if (!(error instanceof RollBack)) throw error;
  }
  return tally;
}

/**
 * A batch the database refused as a whole (a person created meanwhile by a sign-up, say): each record
 * again in a transaction of its own, so only the one that cannot be written is reported.
 */
async function runOneByOne(db: Db, clock: Clock, items: ImportItem[], memory: DryRunMemory | undefined): Promise<Tally> {
  const tally: Tally = { created: 0, updated: 0, skipped: 0, errors: [] };
  for (const item of items) {
    try {
      const one = await runBatch(db, clock, [item], memory);
      tally.created += one.created;
      tally.updated += one.updated;
      tally.skipped += one.skipped;
      tally.errors.push(...one.errors);
    } catch (error) {
      const reason = isUniqueViolation(error) ? 'its e-mail or phone number was taken by another account meanwhile; import the file again' : 'the database could not write it; import the file again (the records that landed are updated, not duplicated)';
      tally.errors.push({ line: item.line, reason });
    }
  }
  return tally;
}

export async function importFile(db: Db, clock: Clock, input: AsyncIterable<Buffer | string>, options: ImportOptions): Promise<{ summary: ImportSummary; format: ImportFormat }> {
  const counter = { bytes: 0 };
  const { head, all } = await peek(decode(input, counter));
  if (head.replace(/^\uFEFF/, '').trim() === '') throw new ImportFileError('the file is empty');
  const format = options.format ?? detectFormat(head);
  const summary: ImportSummary = { created: 0, updated: 0, skipped: 0, errors: [] };
  let unlisted = 0;
  let records = 0;
  const merge = (tally: Tally) => {
    summary.created += tally.created;
    summary.updated += tally.updated;
    summary.skipped += tally.skipped;
    for (const error of tally.errors) {
      if (summary.errors.length < MAX_LISTED_ERRORS) summary.errors.push(error);
      else unlisted++;
    }
  };
  const memory: DryRunMemory | undefined = options.dryRun ? { subs: new Set(), providers: new Set() } : undefined;
  let batch: ImportItem[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    let tally: Tally;
    try {
      tally = await runBatch(db, clock, batch, memory);
    } catch {
      tally = await runOneByOne(db, clock, batch, memory);
    }
    merge(tally);
    records += batch.length;
    batch = [];
    options.onProgress?.({ records, bytes: counter.bytes });
  };
  for await (const item of READERS[format](all)) {
    batch.push(item);
    if (batch.length >= BATCH) await flush();
  }
  await flush();
  if (unlisted > 0) summary.errors.push({ line: 0, reason: `${unlisted} more records were refused; the first ${MAX_LISTED_ERRORS} are listed above` });
  return { summary, format };
}
