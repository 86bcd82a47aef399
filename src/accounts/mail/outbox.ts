// Account mail: the password-reset link, the e-mail-verification link, and the note that an address
// already has an account. These are not notifications: nobody can turn them off, they carry no
// unsubscribe link, and notification preferences and mutes never apply. So they do not go through
// notification_deliveries (whose every row belongs to a notification and a category a person controls)
// but through this small outbox, which `signet worker`'s e-mail runner drains with the same lease,
// retry and back-off rules (mail/deliver.ts).
//
// The outbox never holds a link's token. The worker mints the token when it sends the message
// (deliver.ts): the token exists only in the worker's memory and in the e-mail, the database only its
// keyed hash — and the link's lifetime still counts from when the person asked (`link_expires_at`).
import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/database.ts';
import type { OutboxStatus } from '../../db/schema.ts';
import type { TokenPurpose } from '../account-tokens.ts';
import * as store from './outbox.store.ts';

export const ACCOUNT_MAIL_KINDS = ['password_reset', 'email_verification', 'signup_exists'] as const;
export type AccountMailKind = (typeof ACCOUNT_MAIL_KINDS)[number];

/** The link token a kind of mail carries, if any. */
export const TOKEN_OF_KIND: Record<AccountMailKind, TokenPurpose | undefined> = {
  password_reset: 'password_reset',
  email_verification: 'email_verification',
  signup_exists: undefined,
};

export function isAccountMailKind(value: string): value is AccountMailKind {
  return (ACCOUNT_MAIL_KINDS as readonly string[]).includes(value);
}

export type AccountMail = {
  kind: AccountMailKind;
  /** undefined when the request named no account */
  sub: string | undefined;
  to: string | undefined;
  /** the page language of the request: the message is written in it */
  locale: string;
  linkExpiresAt: number | undefined;
  /** why this message is recorded but not sent (no such account, a limit reached) */
  suppressed?: string | undefined;
};

/**
 * Records a message for the worker. A suppressed message is recorded too, settled at once: the request
 * does the same work whether or not an account exists.
 */
export async function queueAccountMail(db: Db, now: number, mail: AccountMail): Promise<string> {
  const id = randomUUID();
  const send = mail.suppressed === undefined && mail.sub !== undefined && mail.to !== undefined;
  await store.insertMail(db, {
    id,
    kind: mail.kind,
    sub: mail.sub ?? null,
    to_address: send ? (mail.to ?? null) : null,
    locale: mail.locale,
    created_at: now,
    link_expires_at: mail.linkExpiresAt ?? null,
    status: send ? 'pending' : 'suppressed',
    reason: send ? null : (mail.suppressed ?? 'no account'),
    attempts: 0,
    next_attempt_at: send ? now : null,
    lease_owner: null,
    lease_expires_at: null,
    updated_at: now,
  });
  return id;
}

/** Forgets settled messages after a week (the periodic sweep). */
export function forgetSettledAccountMail(db: Db, now: number): Promise<number> {
  return store.deleteSettledBefore(db, now - 7 * 24 * 60 * 60 * 1000);
}

/** What the operators' outbox lists of account mail: never a link token (the outbox holds none). */
export type OutboxEntry = {
  id: string;
  /** password_reset, email_verification, signup_exists */
  kind: string;
  sub: string | null;
  to: string | null;
  status: OutboxStatus;
  reason: string | null;
  attempts: number;
  nextAttemptAt: number | null;
  createdAt: number;
  updatedAt: number;
};

/** Account mail for the console's outbox, newest first. */
export async function accountMailForOperators(db: Db, filter: store.OutboxFilter, before: number | undefined, limit: number): Promise<OutboxEntry[]> {
  const rows = await store.listForOperators(db, filter, before, limit);
  return rows.map((r) => ({ id: r.id, kind: r.kind, sub: r.sub, to: r.to_address, status: r.status, reason: r.reason, attempts: Number(r.attempts), nextAttemptAt: r.next_attempt_at === null ? null : Number(r.next_attempt_at), createdAt: Number(r.created_at), updatedAt: Number(r.updated_at) }));
}

/** Account mail by status. */
export function accountMailCounts(db: Db): Promise<Map<string, number>> {
  return store.countByStatus(db);
}
