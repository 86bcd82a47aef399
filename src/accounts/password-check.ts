// Checking a stored password, native or imported, so that a wrong password takes the same time
// whoever it was tried against: a native account, an account whose imported (foreign) hash still
// waits for its first sign-in, an account without a password, or no account at all.
//
// Every check spends one argon2id verification (the account's own hash, or the decoy), a foreign hash
// is checked beside it (in parallel, off the event loop), and a failed check is answered no sooner
// than the slowest scheme in use takes: an imported bcrypt hash of cost 12 may take ten times what
// Signet's argon2id does, and without the wait that difference would tell which accounts exist and
// came from an import.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Clock } from '../config/clock.ts';
import type { Db } from '../db/database.ts';
import * as imported from './imported-passwords.store.ts';
import { sampleHashOf, verifyForeignHash } from './password-hashes.ts';
import { decoyPasswordHash, hashPassword, MAX_PASSWORD_LENGTH, verifyPassword } from './passwords.ts';
import * as store from './accounts.store.ts';

/** users.password_hash while the person's imported foreign hash (imported_passwords) waits for their next sign-in. */
export const IMPORTED_HASH_MARKER = '$signet-imported$';

const NATIVE_SCHEME = 'signet';
/**
 * How long the last checks of each scheme took here (ms); a failed check waits for the largest of them
 * all. The largest, not an average: a wait shorter than a slow check would let that check stand out.
 */
const durations = new Map<string, number[]>();
const KEPT_DURATIONS = 8;
/** The schemes in the database are looked up again after this long (an import in another process adds some). */
const SCHEMES_REFRESH_MS = 60_000;
let schemesCheckedAt = -Infinity;
let calibrating: Promise<void> | undefined;

function observe(scheme: string, ms: number): void {
  const kept = durations.get(scheme) ?? [];
  kept.push(ms);
  if (kept.length > KEPT_DURATIONS) kept.shift();
  durations.set(scheme, kept);
}

/** Measures a check of every scheme the database holds that this process has not timed yet. */
async function calibrate(db: Db): Promise<void> {
  if (performance.now() - schemesCheckedAt < SCHEMES_REFRESH_MS) return;
  calibrating ??= (async () => {
    try {
      for (const scheme of await imported.schemesInUse(db)) {
        if (durations.has(scheme)) continue;
        const sample = sampleHashOf(scheme);
        if (sample === undefined) continue;
        const started = performance.now();
        await Promise.all([verifyForeignHash(sample, 'calibration'), decoyPasswordHash().then((decoy) => verifyPassword(decoy, 'calibration'))]);
        observe(scheme, performance.now() - started);
      }
      schemesCheckedAt = performance.now();
    } finally {
      calibrating = undefined;
    }
  })();
  await calibrating;
}

/** After a failed check that began at `started`: waits until the slowest scheme in use would have answered. */
async function waitOutFailure(db: Db, started: number): Promise<void> {
  await calibrate(db).catch(() => {});
  let slowest = 0;
  for (const kept of durations.values()) slowest = Math.max(slowest, ...kept);
  const remaining = started + slowest - performance.now();
  if (remaining > 1) await sleep(remaining);
}

type StoredPassword = { sub: string; password_hash: string };

/**
 * Whether the password is the account's (undefined: no account; the same work and time are spent).
 * `foreign` is set when it matched an imported foreign hash: the caller then replaces it
 * (replaceImportedHash) once the sign-in is otherwise allowed.
 */
export async function checkStoredPassword(db: Db, row: StoredPassword | undefined, given: string): Promise<{ ok: boolean; foreign: boolean }> {
  const password = given.slice(0, MAX_PASSWORD_LENGTH);
  const started = performance.now();
  let ok = false;
  let foreign = false;
  let scheme = NATIVE_SCHEME;
  if (row !== undefined && row.password_hash === IMPORTED_HASH_MARKER) {
    const waiting = await imported.findImported(db, row.sub);
    const decoy = await decoyPasswordHash();
    if (waiting?.foreign_hash) {
      scheme = waiting.scheme;
      [ok] = await Promise.all([verifyForeignHash(waiting.foreign_hash, password), verifyPassword(decoy, password)]);
      foreign = ok;
    } else {
      await verifyPassword(decoy, password);
    }
  } else {
    const native = row !== undefined && row.password_hash.startsWith('$argon2');
    ok = (await verifyPassword(native ? row.password_hash : await decoyPasswordHash(), password)) && native;
  }
  observe(scheme, performance.now() - started);
  if (!ok) await waitOutFailure(db, started);
  return { ok, foreign };
}

/**
 * issue 35: a foreign hash is "replaced by Signet's own argon2id hash right after a successful check".
 * Only while the account still waits on it (a password set meanwhile is not overwritten).
 */
export async function replaceImportedHash(db: Db, clock: Clock, sub: string, password: string): Promise<void> {
  const own = await hashPassword(password.slice(0, MAX_PASSWORD_LENGTH));
  const now = clock();
  await db.transaction().execute(async (trx) => {
    if (await store.replacePasswordHashIf(trx, sub, IMPORTED_HASH_MARKER, own, now)) await imported.markReplaced(trx, sub, now);
  });
}
