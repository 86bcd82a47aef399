// What every command starts from: settings (validated), keys, an open and migrated database.
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { OperatorContext } from '../admin/operator-changes.ts';
import { systemClock, type Clock } from '../config/clock.ts';
import { deriveKeys, loadRootSecret, type Keys } from '../config/keys.ts';
import { parseSettings, readEnvironment, type Settings } from '../config/settings.ts';
import { migrate, openDatabase, type DatabaseHandle } from '../db/database.ts';
import type { ObjectStore } from '../storage/object-store.ts';
import { openObjectStore, parseStorageUrl } from '../storage/open.ts';

export type CommandContext = {
  settings: Settings;
  keys: Keys;
  database: DatabaseHandle;
  /** SIGNET_STORAGE_URL's store (opening it connects to nothing): `user delete` removes task files */
  objects: ObjectStore;
  /** the migrations opening the database applied (every command brings the schema up to date) */
  migrationsApplied: string[];
  clock: Clock;
};

/**
 * How a command makes an operator's change (admin/operator-changes.ts): recorded in the audit trail
 * with actor `cli` and no client address; no audit log line, since a command's stdout is its answer.
 */
export function cliOperator(ctx: CommandContext): OperatorContext {
  return { db: ctx.database.db, clock: ctx.clock, hashKey: ctx.keys.tokenHash, objects: ctx.objects, actor: 'cli', ip: null };
}

/** The file loadRootSecret (config/keys.ts) generates in the data dir when SIGNET_SECRET is not set. */
const SECRET_FILE = 'secret.key';

/** A command would have started a new, empty Signet where the operator expected their data. */
export class MissingDataError extends Error {
  override name = 'MissingDataError';
}

export function loadSettingsFromProcess(): Settings {
  return parseSettings(readEnvironment(process.env, process.cwd()), process.cwd());
}

/**
 * Refuses to go on when the data a command expects is not there. Run from another folder, a
 * command would otherwise create an empty ./data (and a new secret), and `user list` would print []
 * as if there were no accounts. `serve`, `migrate`, `worker` and `--init` may create it.
 */
export function checkDataExists(settings: Settings): void {
  const db = settings.database;
  if (db.kind === 'sqlite' && !existsSync(db.file)) {
    const defaultFile = path.join(settings.dataDir, 'signet.sqlite');
    if (db.file === defaultFile) {
      throw new MissingDataError(`no Signet data in ${settings.dataDir}: run it from the folder you ran "npm start" in, set SIGNET_DATA_DIR, or pass --init to create one`);
    }
    throw new MissingDataError(`no Signet database at ${db.file} (named by SIGNET_DATABASE_URL): check the path, or pass --init to create one`);
  }
  // A new secret would make every stored client secret and token hash unreadable to the server.
  if (!settings.secret && !existsSync(path.join(settings.dataDir, SECRET_FILE))) {
    throw new MissingDataError(
      `no ${SECRET_FILE} in ${settings.dataDir} and SIGNET_SECRET is not set: run it from the folder you ran "npm start" in, set SIGNET_DATA_DIR or SIGNET_SECRET as the server has them, or pass --init to create one`,
    );
  }
}

/** Names the data a command used, for the footer of terminal output (never a password). */
export function describeData(settings: Settings): string {
  const db = settings.database;
  if (db.kind === 'sqlite') return db.file === path.join(settings.dataDir, 'signet.sqlite') ? `(data dir: ${settings.dataDir})` : `(database: ${db.file})`;
  let where = 'PostgreSQL';
  try {
    const url = new URL(db.url);
    where = `PostgreSQL ${url.host}${url.pathname}`;
  } catch {
    // an unparsable URL fails to connect anyway; say only which kind
  }
  return `(database: ${where}; data dir: ${settings.dataDir})`;
}

export async function openContext(settings = loadSettingsFromProcess(), options: { mayCreateData?: boolean } = {}): Promise<CommandContext> {
  if (!options.mayCreateData) checkDataExists(settings);
  const keys = deriveKeys(loadRootSecret(settings));
  const database = openDatabase(settings.database);
  let migrationsApplied: string[];
  try {
    migrationsApplied = await migrate(database.db);
  } catch (error) {
    await database.close();
    throw error;
  }
  return { settings, keys, database, objects: openObjectStore(parseStorageUrl(settings.storageUrl)), migrationsApplied, clock: systemClock };
}
