// Sensitive changes need a recent check (issue 19 item 5): "changing the password or e-mail, turning
// factors off, making new recovery codes and removing a passkey require a factor or the password within
// the last 10 minutes". Each session records when it last proved one (sessions.checked_at: set at
// sign-in, after the second step when one is due, and at every confirmation on /account/confirm).
import { MINUTE } from '../../config/clock.ts';
import type { Session } from '../sessions.ts';

export const STEP_UP_WINDOW_MS = 10 * MINUTE;

/** Whether the session proved the password or a factor within the last 10 minutes. */
export function isRecentlyChecked(session: Pick<Session, 'checkedAt'>, now: number): boolean {
  return session.checkedAt !== null && session.checkedAt <= now && now - session.checkedAt < STEP_UP_WINDOW_MS;
}

/**
 * For a route about to make a sensitive change (the passkeys code's Remove uses it too): undefined when
 * the session is recently checked, else the address of the confirmation page that comes back to `returnTo`.
 */
export function requireRecentCheck(session: Pick<Session, 'checkedAt'>, now: number, returnTo: string): string | undefined {
  return isRecentlyChecked(session, now) ? undefined : `/account/confirm?return=${encodeURIComponent(returnTo)}`;
}
