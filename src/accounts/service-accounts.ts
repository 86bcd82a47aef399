// Service identities (issue 43): an application registered with `--grant client_credentials` acts as
// itself, not as a person. Like Keycloak's `service-account-<client>` users, the identity is a row of
// `users` — so document tasks can be owned by it, with the same foreign keys and cascades as a person's
// — that can never sign in: no e-mail, no phone (sign-in, password reset and upstream linking all start
// from one of those) and no password (NO_PASSWORD verifies nothing). Its sub is a random UUID; its name
// says whose it is. The application record names it (clients.service_sub); deleting the application
// deletes it, with its tasks.
import { randomUUID } from 'node:crypto';
import type { Clock } from '../config/clock.ts';
import type { Db } from '../db/database.ts';
import { NO_PASSWORD } from './accounts.ts';
import * as store from './accounts.store.ts';

/** The display name of an application's service identity (what operators see in task lists). */
export function serviceAccountName(clientId: string): string {
  return `service-account-${clientId}`;
}

/** Creates the service identity of one application; returns its sub. */
export async function createServiceAccount(db: Db, clock: Clock, clientId: string): Promise<string> {
  const now = clock();
  const sub = randomUUID();
  await store.insertUser(db, {
    sub,
    email: null,
    email_verified: 0,
    phone_number: null,
    phone_number_verified: 0,
    name: serviceAccountName(clientId),
    picture: null,
    password_hash: NO_PASSWORD,
    disabled: 0,
    created_at: now,
    updated_at: now,
  });
  return sub;
}

/** Removes a service identity (its tasks, files' records and tokens go with it by the foreign keys). */
export async function deleteServiceAccount(db: Db, sub: string): Promise<void> {
  await store.deleteUser(db, sub);
}
