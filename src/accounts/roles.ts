// Roles an account may hold. One so far: `operator`, the admin console's door (issue 27: "An operator
// is an account with the operator role: `signet user role add SUB operator` / `role remove`").
import type { Clock } from '../config/clock.ts';
import type { Db } from '../db/database.ts';
import { AccountError, findAccount } from './accounts.ts';
import * as store from './roles.store.ts';

export const ROLES = ['operator'] as const;
export type Role = (typeof ROLES)[number];
export const OPERATOR: Role = 'operator';

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}

function checkedRole(role: string): Role {
  if (!isRole(role)) throw new AccountError('invalid_role', `unknown role ${JSON.stringify(role.slice(0, 40))}: the roles are ${ROLES.join(', ')}`);
  return role;
}

async function existing(db: Db, sub: string): Promise<void> {
  if (!(await findAccount(db, sub))) throw new AccountError('not_found', `no account with sub ${sub}`);
}

/** Gives the person the role. Returns false when they already held it (nothing changes). */
export async function addRole(db: Db, clock: Clock, sub: string, role: string): Promise<boolean> {
  const checked = checkedRole(role);
  await existing(db, sub);
  return store.insertRole(db, sub, checked, clock());
}

/** Takes the role from the person. Returns false when they did not hold it. */
export async function removeRole(db: Db, sub: string, role: string): Promise<boolean> {
  const checked = checkedRole(role);
  await existing(db, sub);
  return store.deleteRole(db, sub, checked);
}

export function rolesOf(db: Db, sub: string): Promise<string[]> {
  return store.rolesOf(db, sub);
}

export function isOperator(db: Db, sub: string): Promise<boolean> {
  return store.holdsRole(db, sub, OPERATOR);
}
