// Changing one's own password on /account. spec (issue): "current password required; argon2id; every
// other session of that person ends" — the current one stays, with a new id (the route starts it).
// Wrong current passwords count against sign-in throttling, so a borrowed session cannot be used to
// guess the password at leisure.
import type { Clock } from '../config/clock.ts';
import type { Db } from '../db/database.ts';
import { passwordMatches, replacePasswordHash } from './accounts.ts';
import { hashPassword, passwordLengthProblem } from './passwords.ts';
import { blockedUntil, recordFailure, recordSuccess } from './throttle.ts';

export type PasswordChangeResult =
  | { outcome: 'changed' }
  | { outcome: 'wrong_password'; retryAt: number | undefined }
  | { outcome: 'throttled'; retryAt: number }
  | { outcome: 'invalid_password'; problem: 'too_short' | 'too_long' };

export async function changePassword(db: Db, clock: Clock, input: { sub: string; currentPassword: string; newPassword: string; address: string }): Promise<PasswordChangeResult> {
  const problem = passwordLengthProblem(input.newPassword);
  if (problem) return { outcome: 'invalid_password', problem };
  const source = { account: input.sub, address: input.address };
  const blocked = await blockedUntil(db, clock, source);
  if (blocked !== undefined) return { outcome: 'throttled', retryAt: blocked };
  if (!(await passwordMatches(db, input.sub, input.currentPassword))) return { outcome: 'wrong_password', retryAt: await recordFailure(db, clock, source) };
  await recordSuccess(db, source);
  const passwordHash = await hashPassword(input.newPassword);
  await db.transaction().execute((trx) => replacePasswordHash(trx, clock, input.sub, passwordHash));
  return { outcome: 'changed' };
}
