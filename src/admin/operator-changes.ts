// Changes operators make to accounts and applications, each recorded as an audit event with who made
// it (an operator key, or the command line), from which address, and whether it worked. The rules
// stay in the accounts and clients domains; this file only calls them and writes the trail. The admin
// API uses these; `signet user …` and `signet client …` can call the same functions.
import { isIP } from 'node:net';
import { endSessionOf, endSessionsOf } from '../accounts/account-admin.ts';
import { endConsoleSessionsOf } from './console/console-sessions.ts';
import { notifySecurity, resetFactors, type FactorsReset } from '../accounts/factors/factors.ts';
import * as accounts from '../accounts/accounts.ts';
import * as roles from '../accounts/roles.ts';
import { withdrawApplication } from '../consent/grants.ts';
import { unblockAddress, unlockAccount } from '../accounts/throttle.ts';
import { recordAudit, type AuditActor, type AuditDetail, type AuditLog, type AuditType } from '../audit/audit.ts';
import * as clients from '../clients/clients.ts';
import type { Clock } from '../config/clock.ts';
import type { Db } from '../db/database.ts';
import type { ObjectStore } from '../storage/object-store.ts';
import { AdminKeyError, createAdminKey, revokeAdminKey, type AdminKeyView } from './admin-keys.ts';
import * as signingKeys from '../oauth/oidc/keys.ts';
import type { ExportCounts } from '../portability/export.ts';
import type { ImportOptions, ImportSummary } from '../portability/import.ts';
import type { ImportFormat } from '../portability/records.ts';
import * as upstream from '../accounts/upstream/providers.ts';
import * as upstreamLinks from '../accounts/upstream/links.ts';

export type OperatorContext = {
  db: Db;
  clock: Clock;
  /** the key of keyed hashes (client secrets) */
  hashKey: Buffer;
  /** where task files live (removed with an account) */
  objects: ObjectStore;
  actor: AuditActor;
  /** the operator's client address (admin API); null on the command line */
  ip: string | null;
  /** where audit log lines go (the CLI passes none: its stdout is its answer) */
  log?: AuditLog | undefined;
};

type EventBase = { type: AuditType; sub?: string | undefined; clientId?: string | undefined; detail?: AuditDetail | undefined };

/** A domain error's code (e.g. email_taken), for the trail of a refused change. */
function reasonOf(error: unknown): string {
  if (error instanceof accounts.AccountError || error instanceof clients.ClientError || error instanceof AdminKeyError || error instanceof signingKeys.SigningKeyError) return error.code;
  // the tasks domain's errors (loaded lazily, so matched by shape): `code` is a short snake_case word
  if (error instanceof Error && 'code' in error && typeof error.code === 'string' && /^[a-z_]{1,40}$/.test(error.code)) return error.code;
  return 'error';
}

function record(op: OperatorContext, event: EventBase, outcome: 'success' | 'failure', extra: AuditDetail = {}): Promise<unknown> {
  return recordAudit(op.db, op.clock, { ...event, ip: op.ip, actor: op.actor, outcome, detail: { ...event.detail, ...extra } }, op.log);
}

/**
 * Runs a change and records it: `success` with what `describe` adds about the result, or `failure`
 * with the reason; the error then goes on to the caller.
 */
async function audited<T>(op: OperatorContext, event: EventBase, change: () => Promise<T>, describe: (result: T) => Partial<EventBase> = () => ({})): Promise<T> {
  let result: T;
  try {
    result = await change();
  } catch (error) {
    await record(op, event, 'failure', { reason: reasonOf(error) });
    throw error;
  }
  const more = describe(result);
  await record(op, { ...event, ...more, detail: { ...event.detail, ...more.detail } }, 'success');
  return result;
}

// ---- accounts ----

export async function createAccountAsOperator(op: OperatorContext, input: accounts.NewAccount): Promise<accounts.Profile> {
  const given = (['email', 'phone', 'name', 'picture'] as const).filter((f) => input[f] !== undefined).map((f) => (f === 'phone' ? 'phone_number' : f));
  const fields = [...given, ...(input.emailVerified ? ['email_verified'] : []), ...(input.phoneVerified ? ['phone_number_verified'] : [])];
  return audited(op, { type: 'account.created', detail: { fields } }, () => accounts.createAccount(op.db, op.clock, input), (profile) => ({ sub: profile.sub }));
}

/** `user update`'s fields (in the contract's names) and `disabled`. */
export type AccountPatch = {
  name?: string | undefined;
  email?: string | undefined;
  phone_number?: string | undefined;
  picture?: string | undefined;
  email_verified?: boolean | undefined;
  phone_number_verified?: boolean | undefined;
  disabled?: boolean | undefined;
};

/**
 * issue 43: an application's service identity is no person — it gets no e-mail, phone, password or
 * role, so nothing can ever sign in as it (disable or delete the application instead).
 */
async function refuseServiceAccount(db: Db, sub: string): Promise<void> {
  const owner = await clients.findClientByServiceSub(db, sub);
  if (owner) throw new accounts.AccountError('service_account', `${sub} is the service identity of the application ${owner.clientId} (client_credentials), not a person; change the application instead (signet client update|disable ${owner.clientId})`);
}

/** Applies the profile fields, then `disabled` when it changes the account's state; one event for each. */
export async function updateAccountAsOperator(op: OperatorContext, sub: string, patch: AccountPatch): Promise<accounts.Profile> {
  await refuseServiceAccount(op.db, sub);
  const fields = (['name', 'email', 'phone_number', 'picture', 'email_verified', 'phone_number_verified'] as const).filter((f) => patch[f] !== undefined);
  let profile: accounts.Profile | undefined;
  if (fields.length > 0) {
    const changes: accounts.AccountChanges = {
      name: patch.name,
      email: patch.email,
      phone: patch.phone_number,
      picture: patch.picture,
      emailVerified: patch.email_verified,
      phoneVerified: patch.phone_number_verified,
    };
    profile = await audited(op, { type: 'account.updated', sub, detail: { fields } }, () => accounts.updateAccount(op.db, op.clock, sub, changes));
  }
  if (patch.disabled !== undefined) {
    const current = profile ?? (await accounts.findAccount(op.db, sub));
    if (current && current.disabled === patch.disabled) return current;
    const type = patch.disabled ? 'account.disabled' : 'account.enabled';
    const change = patch.disabled ? accounts.disableAccount : accounts.enableAccount;
    profile = await audited(op, { type, sub }, () => change(op.db, op.clock, sub));
  }
  return profile ?? (await existingAccount(op.db, sub));
}

async function existingAccount(db: Db, sub: string): Promise<accounts.Profile> {
  const account = await accounts.findAccount(db, sub);
  if (!account) throw new accounts.AccountError('not_found', `no account with sub ${sub}`);
  return account;
}

/**
 * spec: deleting an account revokes its grants and tokens (they go with it, see deleteAccount). The
 * files of its tasks are removed from object storage first (a retry after a failure starts over).
 */
export async function deleteAccountAsOperator(op: OperatorContext, sub: string): Promise<void> {
  await audited(op, { type: 'account.deleted', sub }, async () => {
    await existingAccount(op.db, sub);
    // Loaded here: the tasks domain (and what it imports) is needed by no other command.
    const { deleteTaskFilesOf } = await import('../tasks/tasks.ts');
    await deleteTaskFilesOf(op.db, op.objects, sub);
    await accounts.deleteAccount(op.db, sub);
  });
}

/**
 * Lifts sign-in throttling for the account (every address, and its ceiling), and with `address` the
 * failures counted against that client address too (over every account: the person may share it with
 * whoever was failing). Returns the counters cleared.
 */
export async function unlockAccountAsOperator(op: OperatorContext, sub: string, options: { address?: string | undefined } = {}): Promise<number> {
  const { address } = options;
  return audited(op, { type: 'account.unlocked', sub, ...(address === undefined ? {} : { detail: { unblocked_address: address } }) }, async () => {
    if (address !== undefined && isIP(address) === 0) throw new accounts.AccountError('invalid_address', `${JSON.stringify(address.slice(0, 60))} is not an IP address (give the client address as the sign-in page saw it, e.g. 203.0.113.9)`);
    await existingAccount(op.db, sub);
    return (await unlockAccount(op.db, sub)) + (address === undefined ? 0 : await unblockAddress(op.db, address));
  });
}

/** Ends every session of the person — their admin console sessions too. Returns how many ended. */
export async function endSessionsAsOperator(op: OperatorContext, sub: string): Promise<number> {
  return audited(
    op,
    { type: 'account.sessions_ended', sub },
    async () => (await endSessionsOf(op.db, sub)) + (await endConsoleSessionsOf(op.db, sub)),
    (ended) => ({ detail: { sessions_ended: ended } }),
  );
}

/** issue 36: ends one session of the person (by its public id); the others go on. */
export async function endSessionAsOperator(op: OperatorContext, sub: string, id: string): Promise<void> {
  return audited(op, { type: 'account.session_ended', sub, detail: { session_id: id } }, () => endSessionOf(op.db, op.clock, sub, id));
}

/**
 * issue 19: "`DELETE /admin/v1/accounts/:sub/factors` (204: every factor and recovery code removed,
 * sessions ended)" — and the person gets a security notification.
 */
export async function resetFactorsAsOperator(op: OperatorContext, sub: string): Promise<FactorsReset> {
  const reset = await audited(
    op,
    { type: 'account.factors_reset', sub },
    async () => {
      await existingAccount(op.db, sub);
      return resetFactors(op.db, sub);
    },
    (r) => ({ detail: { factors_removed: r.factorsRemoved, recovery_codes_removed: r.recoveryCodesRemoved, sessions_ended: r.sessionsEnded } }),
  );
  await notifySecurity(op.db, op.clock, sub, 'en', { category: 'security', outcome: 'factors_reset' });
  return reset;
}

/** `user set-password`: a new password, and every session ends. */
export async function setPasswordAsOperator(op: OperatorContext, sub: string, password: string): Promise<void> {
  await audited(op, { type: 'account.password_set', sub }, async () => {
    await refuseServiceAccount(op.db, sub);
    await accounts.setPassword(op.db, op.clock, sub, password);
  });
}

/** `user role add SUB operator`: gives the role. Returns false when the person already held it. */
export async function addRoleAsOperator(op: OperatorContext, sub: string, role: string): Promise<boolean> {
  return audited(op, { type: 'account.role_added', sub, detail: { role } }, async () => {
    await refuseServiceAccount(op.db, sub);
    return roles.addRole(op.db, op.clock, sub, role);
  });
}

/** `user role remove SUB operator`. */
export async function removeRoleAsOperator(op: OperatorContext, sub: string, role: string): Promise<boolean> {
  return audited(op, { type: 'account.role_removed', sub, detail: { role } }, () => roles.removeRole(op.db, sub, role));
}

/** Withdraws the person's grant to one application (its tokens end), as they can on /account. */
export async function withdrawGrantAsOperator(op: OperatorContext, sub: string, clientId: string): Promise<boolean> {
  return audited(op, { type: 'account.grant_withdrawn', sub, clientId }, async () => {
    await existingAccount(op.db, sub);
    return withdrawApplication(op.db, op.clock, sub, clientId);
  });
}

// ---- applications ----

function clientFields(input: Partial<clients.ClientInput> & clients.ClientChanges): string[] {
  const names: Array<[keyof (clients.ClientInput & clients.ClientChanges), string]> = [
    ['name', 'name'],
    ['redirectUris', 'redirect_uris'],
    ['scopes', 'scopes'],
    ['isPublic', 'public'],
    ['allowedOrigins', 'allowed_origins'],
    ['oidc', 'oidc'],
    ['postLogoutRedirectUris', 'post_logout_redirect_uris'],
    ['idTokenAlg', 'id_token_signed_response_alg'],
    ['grants', 'grants'],
  ];
  return names.filter(([key]) => input[key] !== undefined).map(([, name]) => name);
}

export async function createClientAsOperator(op: OperatorContext, input: clients.ClientInput): Promise<{ client: clients.Client; clientSecret?: string }> {
  return audited(
    op,
    { type: 'client.created', detail: { fields: clientFields(input) } },
    () => clients.registerClient(op.db, op.clock, op.hashKey, input),
    (created) => ({ clientId: created.client.clientId }),
  );
}

/** Applies the changes; `enabled` is recorded as client.enabled / client.disabled when it changes the state. */
export async function updateClientAsOperator(op: OperatorContext, clientId: string, changes: clients.ClientChanges): Promise<clients.Client> {
  const { enabled, ...rest } = changes;
  const fields = clientFields(rest);
  let client: clients.Client | undefined;
  if (fields.length > 0) client = await audited(op, { type: 'client.updated', clientId, detail: { fields } }, () => clients.updateClient(op.db, op.clock, clientId, rest));
  if (enabled !== undefined) {
    const current = client ?? (await clients.findClient(op.db, clientId));
    if (current && current.enabled === enabled) return current;
    client = await audited(op, { type: enabled ? 'client.enabled' : 'client.disabled', clientId }, () => clients.updateClient(op.db, op.clock, clientId, { enabled }));
  }
  return client ?? (await clients.getClient(op.db, clientId));
}

export async function rotateClientSecretAsOperator(op: OperatorContext, clientId: string): Promise<{ client: clients.Client; clientSecret: string }> {
  return audited(op, { type: 'client.secret_rotated', clientId }, () => clients.rotateClientSecret(op.db, op.clock, op.hashKey, clientId));
}

/** Removes the application with its grants, codes and tokens. */
export async function deleteClientAsOperator(op: OperatorContext, clientId: string): Promise<void> {
  await audited(op, { type: 'client.deleted', clientId }, async () => {
    // issue 43: the files of its service identity's tasks go first (the records follow by cascade).
    const serviceSub = (await clients.findClient(op.db, clientId))?.serviceSub;
    if (serviceSub) {
      const { deleteTaskFilesOf } = await import('../tasks/tasks.ts');
      await deleteTaskFilesOf(op.db, op.objects, serviceSub);
    }
    await clients.deleteClient(op.db, clientId);
  });
}

// ---- tasks ----

/** Cancels anyone's queued or running task (the console's Tasks page). */
export async function cancelTaskAsOperator(op: OperatorContext, id: string): Promise<void> {
  const { cancelAnyTask } = await import('../tasks/tasks.ts');
  await audited(op, { type: 'task.cancelled', detail: { task_id: id } }, () => cancelAnyTask(op.db, op.clock, id), (task) => ({ sub: task.sub }));
}

// ---- admin keys ----

/** A new operator key; `key` is the only time it is shown. */
export async function createAdminKeyAsOperator(op: OperatorContext, name: string): Promise<{ id: string; key: string }> {
  return audited(op, { type: 'admin_key.created' }, () => createAdminKey(op.db, op.clock, op.hashKey, name), (created) => ({ detail: { key_id: created.id } }));
}

export async function revokeAdminKeyAsOperator(op: OperatorContext, id: string): Promise<AdminKeyView> {
  return audited(op, { type: 'admin_key.revoked', ...(/^ak_[0-9a-f]{16}$/.test(id) ? { detail: { key_id: id } } : {}) }, () => revokeAdminKey(op.db, op.clock, id));
}

// ---- id_token signing keys (issue 28) ----

/** `signet keys rotate`: new keys sign at once (audited: signing_key.rotated, with each new kid). */
export async function rotateSigningKeysAsOperator(op: OperatorContext, sealKey: Buffer, algs?: readonly signingKeys.SigningAlg[]): Promise<signingKeys.SigningKeyView[]> {
  const made = await audited(op, { type: 'signing_key.rotated' }, () => signingKeys.rotateSigningKeys(op.db, sealKey, op.clock, algs), (views) => ({ detail: { kids: views.map((v) => v.kid) } }));
  return made;
}

/** `signet keys retire KID`: removes a rotated-out key whose id_tokens have expired (audited: signing_key.retired). */
export async function retireSigningKeyAsOperator(op: OperatorContext, kid: string): Promise<void> {
  await audited(op, { type: 'signing_key.retired', detail: { kids: [kid] } }, () => signingKeys.retireSigningKey(op.db, op.clock, kid));
}

// ---- moving in and out (issue 35) ----

/**
 * `signet import`, `POST /admin/v1/import`, the console's import: one `accounts.imported` event with the
 * counts (none for a dry run, which writes nothing).
 */
export async function importAsOperator(op: OperatorContext, input: AsyncIterable<Buffer | string>, options: ImportOptions): Promise<{ summary: ImportSummary; format: ImportFormat }> {
  // Loaded here: the formats' readers (and the CSV parser) are needed by no other command.
  const { importFile } = await import('../portability/import.ts');
  if (options.dryRun) return importFile(op.db, op.clock, input, options);
  return audited(
    op,
    { type: 'accounts.imported', ...(options.format ? { detail: { format: options.format } } : {}) },
    () => importFile(op.db, op.clock, input, options),
    ({ summary, format }) => ({ detail: { format, created: summary.created, updated: summary.updated, skipped: summary.skipped, errors: summary.errors.length } }),
  );
}

/** `signet export`, `GET /admin/v1/export`: recorded as `accounts.exported` (with whether secrets were in it) before the first line. */
export async function exportAsOperator(op: OperatorContext, options: { includeSecrets: boolean }, counts: ExportCounts = {}): Promise<AsyncGenerator<string>> {
  const { exportLines } = await import('../portability/export.ts');
  await record(op, { type: 'accounts.exported', detail: { include_secrets: options.includeSecrets } }, 'success');
  return exportLines(op.db, op.clock, options, counts);
}

// ---- upstream identity providers (issue 33) ----

/** `signet idp add`: the client secret is sealed under `sealKey` (keys.upstreamSecret) and never shown again. */
export async function addProviderAsOperator(op: OperatorContext, sealKey: Buffer, input: upstream.NewProvider): Promise<upstream.Provider> {
  return audited(op, { type: 'idp.provider_added', detail: { provider: input.slug } }, () => upstream.addProvider(op.db, op.clock, sealKey, input));
}

/** `signet idp update|disable|enable`: `enabled` is recorded as idp.provider_enabled / _disabled. */
export async function updateProviderAsOperator(op: OperatorContext, sealKey: Buffer, slug: string, changes: upstream.ProviderChanges): Promise<upstream.Provider> {
  const { enabled, ...rest } = changes;
  const fields = (['name', 'issuer', 'clientId', 'clientSecret', 'scope'] as const).filter((f) => rest[f] !== undefined).map((f) => ({ clientId: 'client_id', clientSecret: 'client_secret' } as Record<string, string>)[f] ?? f);
  let provider: upstream.Provider | undefined;
  if (fields.length > 0) provider = await audited(op, { type: 'idp.provider_updated', detail: { provider: slug, fields } }, () => upstream.updateProvider(op.db, op.clock, sealKey, slug, rest));
  if (enabled !== undefined) {
    const current = provider ?? (await upstream.getProvider(op.db, slug));
    if (current.enabled === enabled) return current;
    provider = await audited(op, { type: enabled ? 'idp.provider_enabled' : 'idp.provider_disabled', detail: { provider: slug } }, () => upstream.updateProvider(op.db, op.clock, sealKey, slug, { enabled }));
  }
  return provider ?? (await upstream.getProvider(op.db, slug));
}

/** `signet idp remove`: the provider goes with every identity linked through it. */
export async function removeProviderAsOperator(op: OperatorContext, slug: string): Promise<void> {
  await audited(op, { type: 'idp.provider_removed', detail: { provider: slug } }, () => upstream.removeProvider(op.db, slug));
}

/** `signet user unlink SUB SLUG`: an operator may remove the last way in (the person can still reset a password by e-mail). */
export async function unlinkIdentityAsOperator(op: OperatorContext, sub: string, slug: string): Promise<void> {
  await audited(op, { type: 'idp.unlinked', sub, detail: { provider: slug } }, async () => {
    if (!(await accounts.findAccount(op.db, sub))) throw new accounts.AccountError('not_found', `no account with sub ${sub}`);
    await upstreamLinks.unlinkIdentity(op.db, sub, slug, { force: true });
  });
}
