// `signet backup`: a consistent copy of the embedded SQLite database while `serve` and `worker` keep
// writing — SQLite's online backup API, every page copied in one step under one read transaction
// (in WAL mode readers do not block writers, so nothing waits on the backup and the copy is one
// moment's database). The copy is written beside the target and renamed over it, so a backup cut short
// never leaves a half file under the name; it is checked with PRAGMA integrity_check before that.
import { closeSync, fsyncSync, openSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import type { Settings } from '../config/settings.ts';

export class BackupError extends Error {
  override name = 'BackupError';
}

export type BackupResult = { out: string; bytes: number; pages: number; integrity: 'ok' };

/** All remaining pages in the next step (better-sqlite3's largest), so the copy is never restarted by a write. */
const ALL_PAGES = 0x7fffffff;

export async function backupDatabase(database: Settings['database'], out: string): Promise<BackupResult> {
  if (database.kind === 'postgres') {
    throw new BackupError('the database is PostgreSQL: back it up with pg_dump (e.g. pg_dump --format=custom --file=signet.dump "$SIGNET_DATABASE_URL") and restore with pg_restore; see docs/operations/moving-and-backups.md');
  }
  const target = path.resolve(out);
  if (target === path.resolve(database.file)) throw new BackupError('--out names the live database itself; give the backup another name');
  const partial = `${target}.partial-${process.pid}`;
  // The copy holds password hashes: readable by the service's user only, from its first byte on.
  closeSync(openSync(partial, 'wx', 0o600));
  let source: SQLite.Database;
  try {
    source = new SQLite(database.file, { fileMustExist: true });
  } catch (error) {
    rmSync(partial, { force: true });
    throw new BackupError(`cannot open the database ${database.file}: ${error instanceof Error ? error.message : String(error)}`);
  }
  let pages = 0;
  try {
    source.pragma('busy_timeout = 5000');
    const progress = await source.backup(partial, { progress: () => ALL_PAGES });
    pages = progress.totalPages;
  } catch (error) {
    rmSync(partial, { force: true });
    throw error;
  } finally {
    source.close();
  }
  try {
    const copy = new SQLite(partial);
    try {
      // One self-contained file: no -wal beside it to forget when copying the backup elsewhere.
      copy.pragma('journal_mode = DELETE');
      const integrity = copy.pragma('integrity_check', { simple: true });
      if (integrity !== 'ok') throw new BackupError(`the copy failed its integrity check (${String(integrity).slice(0, 200)}); nothing was written to ${out}`);
    } finally {
      copy.close();
    }
    const fd = openSync(partial, 'r+', 0o600);
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(partial, target);
  } catch (error) {
    rmSync(partial, { force: true });
    throw error;
  }
  return { out: target, bytes: statSync(target).size, pages, integrity: 'ok' };
}
