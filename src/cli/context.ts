// What every command starts from: settings (validated), keys, an open and migrated database.
import { systemClock, type Clock } from '../config/clock.ts';
import { deriveKeys, loadRootSecret, type Keys } from '../config/keys.ts';
import { parseSettings, readEnvironment, type Settings } from '../config/settings.ts';
import { migrate, openDatabase, type DatabaseHandle } from '../db/database.ts';

export type CommandContext = {
  settings: Settings;
  keys: Keys;
  database: DatabaseHandle;
  clock: Clock;
};

export function loadSettingsFromProcess(): Settings {
  return parseSettings(readEnvironment(process.env, process.cwd()), process.cwd());
}

export async function openContext(settings = loadSettingsFromProcess()): Promise<CommandContext> {
  const keys = deriveKeys(loadRootSecret(settings));
  const database = openDatabase(settings.database);
  try {
    await migrate(database.db);
  } catch (error) {
    await database.close();
    throw error;
  }
  return { settings, keys, database, clock: systemClock };
}
