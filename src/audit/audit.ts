// Audit events: who signed in, failed or was locked out, changed a password, consented or withdrew,
// which refresh token was replayed, and every change an operator made — each with its time, account,
// application, client address and outcome, never a secret. Kept in the database (swept after
// SIGNET_AUDIT_RETENTION_DAYS), written as one structured log line each (`event: "audit"`), and
// counted for Prometheus where a counter exists (audit-metrics.ts).
import { isIP } from 'node:net';
import type { Clock } from '../config/clock.ts';
import type { Db } from '../db/database.ts';
import { countAuditEvent } from './audit-metrics.ts';
import * as store from './audit.store.ts';

import { AUDIT_TYPES, type AuditType } from './audit-types.ts';

export { AUDIT_TYPES, type AuditType };


/**
 * - `success`: the thing happened (a sign-in, a change);
 * - `failure`: it was tried and did not work (a wrong password, a change the rules refused);
 * - `refused`: policy stopped it before it was tried (throttled, locked, a replayed token).
 */
export const AUDIT_OUTCOMES = ['success', 'failure', 'refused'] as const;
export type AuditOutcome = (typeof AUDIT_OUTCOMES)[number];

/** Who made a change: an operator on the command line, an operator key, an operator in the admin console (their sub), or (absent) the person themselves. */
export type AuditActor = 'cli' | `admin_key:${string}` | `operator:${string}`;

/**
 * The keys `detail` may hold, each with a check of its value. Anything else is dropped, so a call
 * site can never put a password, token, secret or e-mail address into the trail by accident.
 */
const DETAIL_KEYS = {
  /** names of the fields a change touched (never their values) */
  fields: (v: unknown) => Array.isArray(v) && v.length <= 20 && v.every((f) => typeof f === 'string' && /^[a-z_]{1,40}$/.test(f)),
  /** a short machine-readable reason, e.g. an error code */
  reason: (v: unknown) => typeof v === 'string' && /^[a-z0-9_.]{1,60}$/.test(v),
  /** what a replay revoked: "user_client_tokens" (every token of the person for the application) or "code_chain" */
  revoked: (v: unknown) => v === 'user_client_tokens' || v === 'code_chain',
  /** refresh chains a revocation ended (each with its access tokens and its refresh token) */
  revoked_chains: isCount,
  /** rows of tokens from before one row per chain (migration 0010) */
  revoked_access_tokens: isCount,
  revoked_refresh_tokens: isCount,
  sessions_ended: isCount,
  /** the public id of a session an operator ended (account-admin.ts sessionPublicId: a digest, never the cookie or its hash) */
  session_id: (v: unknown) => typeof v === 'string' && /^[A-Za-z0-9_-]{22}$/.test(v),
  /** a space-separated scope list (scope names only) */
  scope: (v: unknown) => typeof v === 'string' && /^[a-z_ ]{0,200}$/.test(v),
  grant_type: (v: unknown) => v === 'authorization_code' || v === 'refresh_token' || v === 'client_credentials' || v === 'device_code',
  /** when a throttled or locked person may try again (ISO 8601) */
  retry_at: (v: unknown) => typeof v === 'string' && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3})?Z$/.test(v),
  /** a client address an operator unblocked (an IP address, as request.ip gives it) */
  unblocked_address: (v: unknown) => typeof v === 'string' && isIP(v) !== 0,
  /** a second factor's kind ("totp"), or how a second step was passed ("totp", "recovery_code") */
  factor: (v: unknown) => typeof v === 'string' && /^[a-z_]{1,30}$/.test(v),
  /** where a second-factor event happened: "signin" (the second step), "step_up" (confirming a change), "setup", "console" (the admin console's sign-in) */
  stage: (v: unknown) => v === 'signin' || v === 'step_up' || v === 'setup' || v === 'console',
  factors_removed: isCount,
  recovery_codes_removed: isCount,
  recovery_codes_left: isCount,
  /** an operator key's id (its public half) */
  key_id: (v: unknown) => typeof v === 'string' && /^ak_[0-9a-f]{1,64}$/.test(v),
  /** a role given or taken (accounts/roles.ts) */
  role: (v: unknown) => v === 'operator',
  /** a task an operator cancelled (its id, a UUID) */
  task_id: (v: unknown) => typeof v === 'string' && /^[0-9a-f-]{36}$/.test(v),
  /** id_token signing keys' ids (public: they are in the JWKS) */
  /** an upstream identity provider's slug (issue 33) */
  provider: (v: unknown) => typeof v === 'string' && /^[a-z0-9-]{1,40}$/.test(v),
  kids: (v: unknown) => Array.isArray(v) && v.length <= 10 && v.every((k) => typeof k === 'string' && /^[A-Za-z0-9_-]{1,100}$/.test(k)),
  /** an import's counts (portability/import.ts): records created, updated, skipped, and refused */
  created: isCount,
  updated: isCount,
  skipped: isCount,
  errors: isCount,
  /** which file format an import read */
  format: (v: unknown) => v === 'signet' || v === 'keycloak' || v === 'auth0' || v === 'csv',
  /** issue 39: how a self-registered application authenticates at the token endpoint */
  auth_method: (v: unknown) => v === 'none' || v === 'client_secret_post',
  /** whether an export held password and application secret hashes */
  include_secrets: (v: unknown) => typeof v === 'boolean',
} satisfies Record<string, (v: unknown) => boolean>;

function isCount(v: unknown): boolean {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0;
}

export type AuditDetailKey = keyof typeof DETAIL_KEYS;
export type AuditDetail = Partial<Record<AuditDetailKey, unknown>>;

export type AuditEventInput = {
  type: AuditType;
  sub?: string | null | undefined;
  clientId?: string | null | undefined;
  /** the client address of the request (request.ip); absent on the command line */
  ip?: string | null | undefined;
  outcome: AuditOutcome;
  actor?: AuditActor | null | undefined;
  detail?: AuditDetail | undefined;
};

/** The contract's shape: `{"id","type","at","sub","client_id","ip","outcome"}`, plus who acted and the detail. */
export type AuditEventView = {
  id: string;
  type: string;
  at: string;
  sub: string | null;
  client_id: string | null;
  ip: string | null;
  outcome: string;
  actor: string | null;
  detail: Record<string, unknown> | null;
};

/** Where the log line goes: a pino logger (a request's `request.log` will do). */
export type AuditLog = { info(object: object, message: string): void };

/** Keeps only whitelisted keys whose values pass their check; undefined when nothing is left. */
export function safeDetail(detail: AuditDetail | undefined): Record<string, unknown> | undefined {
  if (!detail) return undefined;
  const kept: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(detail)) {
    const check = (DETAIL_KEYS as Record<string, (v: unknown) => boolean>)[key];
    if (check?.(value)) kept[key] = value;
  }
  return Object.keys(kept).length === 0 ? undefined : kept;
}

function toView(row: store.AuditEventRow): AuditEventView {
  return {
    id: String(row.id),
    type: row.type,
    at: new Date(Number(row.at)).toISOString(),
    sub: row.sub,
    client_id: row.client_id,
    ip: row.ip,
    outcome: row.outcome,
    actor: row.actor,
    detail: row.detail === null ? null : (JSON.parse(row.detail) as Record<string, unknown>),
  };
}

/**
 * Records one event: a row in the database, a log line (when `log` is given: every process that
 * serves requests passes its logger; the CLI, whose stdout is its answer, does not), and the
 * Prometheus counter of its kind. Returns the stored event.
 */
export async function recordAudit(db: Db, clock: Clock, event: AuditEventInput, log?: AuditLog): Promise<AuditEventView> {
  const detail = safeDetail(event.detail);
  const row = await store.insertEvent(db, {
    type: event.type,
    at: clock(),
    sub: event.sub ?? null,
    client_id: event.clientId ?? null,
    ip: event.ip ?? null,
    outcome: event.outcome,
    actor: event.actor ?? null,
    detail: detail === undefined ? null : JSON.stringify(detail),
  });
  const view = toView(row);
  log?.info({ event: 'audit', audit: view }, `audit: ${view.type} ${view.outcome}`);
  countAuditEvent(event.type);
  return view;
}

/** A request's logger: where the event's line goes, and where a failure to record it is reported. */
export type RequestAuditLog = AuditLog & { error(object: object, message: string): void };

/**
 * recordAudit for the request path (sign-in, consent, token endpoint): the trail must never fail the
 * request it describes, so a failure to store the event (a busy or unreachable database) is logged and
 * the request goes on. The event's Prometheus counter still counts it.
 */
export async function recordAuditSafely(db: Db, clock: Clock, event: AuditEventInput, log: RequestAuditLog | undefined): Promise<void> {
  try {
    await recordAudit(db, clock, event, log);
  } catch (error) {
    countAuditEvent(event.type);
    // Only what identifies the event: its detail is whitelisted, the error names no secret.
    log?.error({ err: error, auditType: event.type, outcome: event.outcome }, 'an audit event could not be recorded; the request went on');
  }
}

export class AuditQueryError extends Error {
  readonly code = 'invalid_cursor';
  constructor(message: string) {
    super(message);
    this.name = 'AuditQueryError';
  }
}

export type AuditFilter = {
  sub?: string | undefined;
  clientId?: string | undefined;
  /** an exact type (`signin.failed`) or a family (`account.*`) */
  type?: string | undefined;
  /** recorded at or after (epoch ms) */
  from?: number | undefined;
  /** recorded before (epoch ms) */
  to?: number | undefined;
};

export const DEFAULT_AUDIT_PAGE = 50;
export const MAX_AUDIT_PAGE = 500;

// The cursor is opaque to clients: the id of the last event on the page.
function encodeCursor(id: number): string {
  return Buffer.from(`a:${id}`).toString('base64url');
}

function decodeCursor(cursor: string): number {
  const match = /^a:(\d{1,15})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match) throw new AuditQueryError('The cursor is not one this server handed out. Start again without it.');
  return Number(match[1]);
}

/** Events newest first, filtered, one page at a time. */
export async function listAuditEvents(
  db: Db,
  filter: AuditFilter,
  page: { cursor?: string | undefined; limit?: number | undefined } = {},
): Promise<{ events: AuditEventView[]; next_cursor: string | null }> {
  const limit = Math.min(Math.max(page.limit ?? DEFAULT_AUDIT_PAGE, 1), MAX_AUDIT_PAGE);
  const beforeId = page.cursor === undefined ? undefined : decodeCursor(page.cursor);
  const family = filter.type?.endsWith('.*') ? filter.type.slice(0, -1) : undefined;
  const rows = await store.listEvents(db, {
    sub: filter.sub,
    clientId: filter.clientId,
    type: family === undefined ? filter.type : undefined,
    typePrefix: family,
    from: filter.from,
    to: filter.to,
    beforeId,
    limit: limit + 1,
  });
  const pageRows = rows.slice(0, limit);
  const last = pageRows.at(-1);
  return { events: pageRows.map(toView), next_cursor: rows.length > limit && last ? encodeCursor(Number(last.id)) : null };
}

/** How many events of each type were recorded at or after `since` (the console's overview). */
export function countAuditEventsSince(db: Db, types: readonly AuditType[], since: number): Promise<Map<string, number>> {
  return store.countEventsSince(db, types, since);
}

/** One event by its id, or undefined. */
export async function findAuditEvent(db: Db, id: string): Promise<AuditEventView | undefined> {
  if (!/^\d{1,15}$/.test(id)) return undefined;
  const row = await store.findEvent(db, Number(id));
  return row ? toView(row) : undefined;
}
