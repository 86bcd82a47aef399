// Every storage-level test runs on both SQLite (a real file) and PostgreSQL (a fresh database).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, after } from 'node:test';
import type { Settings } from '../../src/config/settings.ts';
import { migrate, openDatabase, type DatabaseHandle } from '../../src/db/database.ts';
import { createPostgresDatabase, postgresUnavailableReason, skipUnlessAvailable } from './services.ts';

export type TestDatabase = DatabaseHandle & { settings: Settings['database'] };

/** A new, migrated SQLite file in a temporary folder. */
export async function sqliteDatabase(): Promise<TestDatabase & { dispose(): Promise<void> }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'signet-test-'));
  const settings: Settings['database'] = { kind: 'sqlite', file: path.join(dir, 'signet.sqlite') };
  const handle = openDatabase(settings);
  await migrate(handle.db);
  return {
    ...handle,
    settings,
    async dispose() {
      await handle.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A new, migrated PostgreSQL database. */
export async function postgresDatabase(): Promise<TestDatabase & { dispose(): Promise<void> }> {
  const created = await createPostgresDatabase();
  const settings: Settings['database'] = { kind: 'postgres', url: created.url, poolSize: 10 };
  const handle = openDatabase(settings);
  await migrate(handle.db);
  return {
    ...handle,
    settings,
    async dispose() {
      await handle.close();
      await created.drop();
    },
  };
}

const pgSkip = skipUnlessAvailable('PostgreSQL', await postgresUnavailableReason());

/**
 * Declares the suite once per database. `open` gives each test (or group) its own fresh database;
 * everything opened is disposed of after the suite.
 */
export function forEachDatabase(title: string, suite: (open: () => Promise<TestDatabase>) => void): void {
  for (const kind of ['sqlite', 'postgres'] as const) {
    describe(`${title} [${kind}]`, { skip: kind === 'postgres' ? pgSkip : false }, () => {
      const opened: Array<{ dispose(): Promise<void> }> = [];
      after(async () => {
        await Promise.all(opened.map((d) => d.dispose()));
      });
      suite(async () => {
        const database = kind === 'sqlite' ? await sqliteDatabase() : await postgresDatabase();
        opened.push(database);
        return database;
      });
    });
  }
}
