// Preferences per category × channel, and muting an application. spec: "The user sets preferences per
// category and per channel, and can mute an authorized third-party application without revoking its
// access"; e-mail is off by default for every category; browser and mobile push are not available.
import type { Clock } from '../config/clock.ts';
import type { Db } from '../db/database.ts';
import { AVAILABLE_CHANNELS, CATEGORIES, CHANNELS, DEFAULT_PREFERENCES, isCategory, isChannel, type Category, type Channel } from './categories.ts';
import * as store from './preferences.store.ts';

export type Preferences = { categories: Record<Category, Record<Channel, boolean>>; muted_clients: string[] };

/** A refusal of a preferences change, with a message that says what is allowed (HTTP 400). */
export class PreferenceError extends Error {
  override name = 'PreferenceError';
}

/** Every category × channel, the person's choice where they made one, the default elsewhere. */
export async function getPreferences(db: Db, sub: string): Promise<Preferences> {
  const rows = await store.preferencesOf(db, sub);
  const categories = Object.fromEntries(CATEGORIES.map((c) => [c, { ...DEFAULT_PREFERENCES }])) as Record<Category, Record<Channel, boolean>>;
  for (const row of rows) {
    if (isCategory(row.category) && isChannel(row.channel) && AVAILABLE_CHANNELS.includes(row.channel)) categories[row.category][row.channel] = row.enabled === 1;
  }
  return { categories, muted_clients: await store.mutedClientIds(db, sub) };
}

/** Whether one channel is on for one category (what delivery reads). */
export async function channelEnabled(db: Db, sub: string, category: Category, channel: Channel): Promise<boolean> {
  return (await getPreferences(db, sub)).categories[category][channel];
}

/**
 * Applies a partial change: `{categories: {translation: {email: true}}, muted_clients: [...]}`. Unknown
 * categories or channels, non-boolean values, and turning on a channel that is not available are
 * refused as a whole (nothing is written). `muted_clients`, when given, is the full list of muted
 * applications; each must be one the person has authorized.
 */
export async function updatePreferences(db: Db, clock: Clock, sub: string, input: unknown): Promise<Preferences> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw new PreferenceError('Send a JSON object with "categories" and/or "muted_clients".');
  const { categories, muted_clients: muted, ...rest } = input as Record<string, unknown>;
  const unknownKey = Object.keys(rest)[0];
  if (unknownKey !== undefined) throw new PreferenceError(`Unknown field "${unknownKey.slice(0, 40)}"; send "categories" and/or "muted_clients".`);
  const now = clock();
  const rows: store.PreferenceRow[] = [];
  if (categories !== undefined) {
    if (typeof categories !== 'object' || categories === null || Array.isArray(categories)) throw new PreferenceError('"categories" must be an object of category → {channel: true/false}.');
    for (const [category, channels] of Object.entries(categories)) {
      if (!isCategory(category)) throw new PreferenceError(`Unknown category "${category.slice(0, 40)}"; categories are ${CATEGORIES.join(', ')}.`);
      if (typeof channels !== 'object' || channels === null || Array.isArray(channels)) throw new PreferenceError(`"${category}" must be an object of channel → true/false.`);
      for (const [channel, enabled] of Object.entries(channels)) {
        if (!isChannel(channel)) throw new PreferenceError(`Unknown channel "${channel.slice(0, 40)}"; channels are ${CHANNELS.join(', ')}.`);
        if (typeof enabled !== 'boolean') throw new PreferenceError(`${category}.${channel} must be true or false.`);
        if (!AVAILABLE_CHANNELS.includes(channel)) {
          // spec: "browser push and mobile push are not available, and their preference controls are disabled"
          if (enabled) throw new PreferenceError(`${channel} is not available: Signet has no device registration, so push notifications cannot be turned on.`);
          continue;
        }
        rows.push({ sub, category, channel, enabled: enabled ? 1 : 0, updated_at: now });
      }
    }
  }
  let mutedList: string[] | undefined;
  if (muted !== undefined) {
    if (!Array.isArray(muted) || !muted.every((m) => typeof m === 'string') || muted.length > 1000) throw new PreferenceError('"muted_clients" must be a list of client_id strings.');
    mutedList = [...new Set(muted as string[])];
  }
  await db.transaction().execute(async (trx) => {
    await store.upsertPreferences(trx, rows);
    if (mutedList) {
      const authorized = new Set((await trx.selectFrom('grants').select('client_id').where('sub', '=', sub).execute()).map((g) => g.client_id));
      const stranger = mutedList.find((id) => !authorized.has(id));
      if (stranger !== undefined) throw new PreferenceError(`You have not authorized an application with client_id ${stranger.slice(0, 64)}; only authorized applications can be muted.`);
      for (const id of authorized) await store.setMuted(trx, sub, id, mutedList.includes(id));
    }
  });
  return getPreferences(db, sub);
}

/** Mute or unmute one authorized application (the /account buttons). False when it is not authorized. */
export function setApplicationMuted(db: Db, sub: string, clientId: string, muted: boolean): Promise<boolean> {
  // No client_id has a NUL character (and PostgreSQL cannot compare one): not an authorized application.
  if (clientId.includes('\u0000')) return Promise.resolve(false);
  return store.setMuted(db, sub, clientId, muted);
}

export { isMuted } from './preferences.store.ts';
