// One Kysely instance per dialect: SQLite (better-sqlite3, WAL, the embedded default) or PostgreSQL (pg).
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql, type Migration, type MigrationProvider } from 'kysely';
import type { Settings } from '../config/settings.ts';
import type { Database } from './schema.ts';
import * as m0001 from './migrations/0001_initial.ts';
import * as m0002 from './migrations/0002_tasks_notifications.ts';
import * as m0003 from './migrations/0003_notification_preferences.ts';

export type Db = Kysely<Database>;
export type Dialect = 'sqlite' | 'postgres';

export type DatabaseHandle = {
  db: Db;
  dialect: Dialect;
  close(): Promise<void>;
};

/** Migrations, in order. A new one is one line here. */
const MIGRATIONS: Record<string, Migration> = {
  '0001_initial': m0001,
  '0002_tasks_notifications': m0002,
  '0003_notification_preferences': m0003,
};

const provider: MigrationProvider = { getMigrations: async () => MIGRATIONS };

// PostgreSQL returns bigint (int8) as a string; our bigints are epoch milliseconds, safe as numbers.
const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === 20) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format);
  },
};

export function openDatabase(database: Settings['database']): DatabaseHandle {
  if (database.kind === 'postgres') {
    const pool = new pg.Pool({ connectionString: database.url, max: database.poolSize, types: pgTypes as pg.CustomTypesConfig });
    // An idle client that loses its connection must not crash the process; the next query reconnects.
    pool.on('error', () => {});
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    return { db, dialect: 'postgres', close: () => db.destroy() };
  }
  mkdirSync(path.dirname(database.file), { recursive: true });
  const sqlite = new SQLite(database.file);
  sqlite.pragma('journal_mode = WAL');
  // WAL with synchronous=NORMAL is durable across process crashes; FULL also survives power loss.
  sqlite.pragma('synchronous = FULL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
  return { db, dialect: 'sqlite', close: () => db.destroy() };
}

/** Brings the schema up to date. Safe to run from several processes at once (Kysely takes a lock). */
export async function migrate(db: Db): Promise<string[]> {
  const migrator = new Migrator({ db, provider });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** Whether every known migration has been applied. */
export async function isMigrated(db: Db): Promise<boolean> {
  const migrations = await new Migrator({ db, provider }).getMigrations();
  return migrations.every((m) => m.executedAt !== undefined);
}

/** A cheap round trip, for readiness checks. */
export async function ping(db: Db): Promise<void> {
  await sql`select 1`.execute(db);
}
