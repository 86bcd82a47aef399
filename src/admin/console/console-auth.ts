// Who may use a console page: a live console session (its own cookie, Path=/admin) of an account with
// the operator role and a second factor. spec: "Only accounts with the operator role get in: anyone
// else signed in gets a 403 page; an operator without a second factor is led to set one up first."
import type { FastifyReply, FastifyRequest } from 'fastify';
import { findAccount } from '../../accounts/accounts.ts';
import { countPasskeys } from '../../accounts/factors/passkeys.ts';
import { acceptsCodes, type SecondStepContext } from '../../accounts/factors/second-step.ts';
import { isRecentlyChecked } from '../../accounts/factors/step-up.ts';
import { isOperator } from '../../accounts/roles.ts';
import type { Clock } from '../../config/clock.ts';
import type { Db } from '../../db/database.ts';
import type { ObjectStore } from '../../storage/object-store.ts';
import type { OperatorContext } from '../operator-changes.ts';
import { endConsoleSession, findConsoleSession, type ConsoleSession } from './console-sessions.ts';
import { renderConsole } from './render.ts';

export type ConsoleContext = {
  db: Db;
  clock: Clock;
  /** keys.tokenHash: session ids, half-signed-in states, recovery codes, client secrets */
  hashKey: Buffer;
  /** keys.factorSecret: TOTP secrets at rest */
  factorKey: Buffer;
  /** keys.deviceCookie (sign-in throttling's known browsers) */
  deviceKey: Buffer;
  objects: ObjectStore;
  productName: string;
  /** keys.upstreamSecret: upstream identity providers' client secrets at rest (issue 33) */
  upstreamKey: Buffer;
  /** SIGNET_BASE_URL's origin: the providers' redirect URIs */
  baseUrl: string;
  /** the public site's host names (its passkeys' RP IDs): passkeys work when the console is opened under one of them (issue 36) */
  passkeyHosts: readonly string[];
};

/** The console's cookies: none shares a name with the public pages' (which a browser also sends here, cookies ignoring ports). */
export const CONSOLE_COOKIES = { session: 'signet_console', secondStep: 'signet_console_step', csrf: 'signet_console_csrf' } as const;

/** Bound into the half-signed-in state's hash, so a public second-step cookie means nothing here. */
export const CONSOLE_ORIGIN = 'signet-admin-console';

export function consoleCookieOptions(request: FastifyRequest, expires?: number) {
  return { path: '/admin', httpOnly: true, sameSite: 'strict' as const, secure: request.protocol === 'https', ...(expires === undefined ? {} : { expires: new Date(expires) }) };
}

/** A return address inside the console only. */
export function consolePath(value: unknown): string | undefined {
  return typeof value === 'string' && value.length <= 2000 && /^\/admin(?:[/?][A-Za-z0-9\-._~!$&'()*+,;=:@/?%]*)?$/.test(value) && !value.startsWith('/admin/signin') ? value : undefined;
}

export function secondStepContext(ctx: ConsoleContext): SecondStepContext {
  return { db: ctx.db, clock: ctx.clock, hashKey: ctx.hashKey, factorKey: ctx.factorKey, passkeys: { count: countPasskeys }, mfa: 'required' };
}

const sessions = new WeakMap<FastifyRequest, Promise<ConsoleSession | undefined>>();
const operators = new WeakMap<FastifyRequest, { session: ConsoleSession; label: string; op: OperatorContext }>();

export function consoleSessionOf(ctx: ConsoleContext, request: FastifyRequest): Promise<ConsoleSession | undefined> {
  let lookup = sessions.get(request);
  if (!lookup) {
    lookup = findConsoleSession(ctx.db, ctx.hashKey, ctx.clock, request.cookies[CONSOLE_COOKIES.session]);
    sessions.set(request, lookup);
  }
  return lookup;
}

/**
 * The preHandler of every console page but sign-in: no session → the sign-in page; not an operator →
 * 403 with nothing listed; an operator who lost their last second factor (reset: no code-taking factor
 * and no passkey) → signed out, so the next sign-in leads them to set one up.
 */
export function requireOperator(ctx: ConsoleContext) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<unknown> => {
    const session = await consoleSessionOf(ctx, request);
    if (!session) {
      reply.clearCookie(CONSOLE_COOKIES.session, consoleCookieOptions(request));
      const idle = request.cookies[CONSOLE_COOKIES.session] !== undefined;
      return reply.redirect(idle ? '/admin/signin?idle=1' : '/admin/signin', 303);
    }
    if (!(await isOperator(ctx.db, session.sub))) {
      return renderConsole(request, reply, 'forbidden', { status: 403, title: (c) => c.forbiddenTitle }, ctx.productName);
    }
    if (!(await acceptsCodes(ctx.db, session.sub)) && (await countPasskeys(ctx.db, session.sub)) === 0) {
      const id = request.cookies[CONSOLE_COOKIES.session];
      if (id) await endConsoleSession(ctx.db, ctx.hashKey, id);
      reply.clearCookie(CONSOLE_COOKIES.session, consoleCookieOptions(request));
      return reply.redirect('/admin/signin', 303);
    }
    const account = await findAccount(ctx.db, session.sub);
    const label = account?.email ?? account?.phone_number ?? session.sub;
    operators.set(request, {
      session,
      label,
      op: { db: ctx.db, clock: ctx.clock, hashKey: ctx.hashKey, objects: ctx.objects, actor: `operator:${session.sub}`, ip: request.ip, log: request.log },
    });
    return undefined;
  };
}

/** The operator of a page behind requireOperator. */
export function operatorOf(request: FastifyRequest): { session: ConsoleSession; label: string; op: OperatorContext } {
  const operator = operators.get(request);
  if (!operator) throw new Error(`${request.url} is served without requireOperator`);
  return operator;
}

/**
 * spec (issue 27): "a destructive action (delete, reset factors, rotate a secret, disable) asks for the
 * second factor again when the last check is older than a few minutes (the step-up that exists)".
 * True when it answered with the way to the confirmation page (the caller stops).
 */
export function stepUpNeeded(ctx: ConsoleContext, request: FastifyRequest, reply: FastifyReply, returnTo: string): boolean {
  const { session } = operatorOf(request);
  if (isRecentlyChecked(session, ctx.clock())) return false;
  void reply.redirect(`/admin/confirm?return=${encodeURIComponent(returnTo)}`, 303);
  return true;
}
