// Passkeys on the admin listener (issue 36): an operator whose only factor is a passkey gets in. The
// console's sign-in page has "Sign in with a passkey" (a discoverable credential whose authenticator
// verified the person: two factors on its own, as on the public sign-in page); after a password, the
// second step takes a passkey as well as a code; the step-up before a destructive change too.
//
// A passkey belongs to the public site's host (its RP ID). The browser lets a page use it only on that
// host or a subdomain of it, so the console offers passkeys when it is opened under such a name (e.g.
// http://localhost:9465 for a site at http://localhost:8080, or admin.signet.example for
// signet.example) — never at an IP address. The expected origin is the console's own.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasPasskeyOn, PasskeyError, startPasskeyAuthentication, verifyPasskeyAssertion, type PasskeyContext, type RelyingParty } from '../../accounts/factors/passkeys.ts';
import { findSecondStep, finishSecondStep, type HalfSignedIn } from '../../accounts/factors/second-step.ts';
import { recordAuditSafely } from '../../audit/audit.ts';
import { isPostgres } from '../../db/database.ts';
import { brandedMessages } from '../../web/i18n/i18n.ts';
import { CONSOLE_COOKIES, CONSOLE_ORIGIN, consoleCookieOptions, consolePath, operatorOf, requireOperator, secondStepContext, type ConsoleContext } from './console-auth.ts';
import { endConsoleSession, markConsoleChecked, startConsoleSession } from './console-sessions.ts';
import { consoleLocale } from './render.ts';

/** The relying party of the console as this request reached it: a public host it is under, and its own origin. */
export function consoleRelyingParty(ctx: ConsoleContext, request: FastifyRequest): RelyingParty | undefined {
  const host = request.hostname.toLowerCase();
  const rpId = ctx.passkeyHosts.find((id) => host === id || host.endsWith(`.${id}`));
  return rpId === undefined ? undefined : { id: rpId, origin: `${request.protocol}://${request.host}`, name: ctx.productName };
}

/** What a page's passkey button needs (console-passkeys.js reads it from data-passkey), or undefined when no passkey can be used here. */
export async function passkeyOffer(ctx: ConsoleContext, request: FastifyRequest, kind: 'signin' | 'second-step' | 'confirm', sub?: string, extra: Record<string, string> = {}): Promise<string | undefined> {
  const rp = consoleRelyingParty(ctx, request);
  if (!rp || (sub !== undefined && !(await hasPasskeyOn(ctx.db, sub, rp.id)))) return undefined;
  const t = brandedMessages(consoleLocale(request), ctx.productName);
  const base = kind === 'signin' ? '/admin/signin/passkey' : kind === 'second-step' ? '/admin/signin/two-step/passkey' : '/admin/confirm/passkey';
  return JSON.stringify({ optionsUrl: `${base}/options`, finishUrl: base, body: extra, text: t.passkeys.script });
}

export async function consolePasskeyRoutes(app: FastifyInstance, { ctx }: { ctx: ConsoleContext }): Promise<void> {
  const passkeys: PasskeyContext = { db: ctx.db, dialect: isPostgres(ctx.db) ? 'postgres' : 'sqlite', clock: ctx.clock, hashKey: ctx.hashKey };
  const steps = secondStepContext(ctx);
  const words = (request: FastifyRequest) => brandedMessages(consoleLocale(request), ctx.productName);
  const refuse = (reply: FastifyReply, status: number, error: string, message: string) => reply.code(status).header('cache-control', 'no-store').send({ error, message });

  function refusePasskey(request: FastifyRequest, reply: FastifyReply, error: PasskeyError): FastifyReply {
    const t = words(request).passkeys.errors;
    if (error.code === 'throttled') return refuse(reply, 429, 'throttled', t.throttled.replace('{wait}', '10 min'));
    const status = error.code === 'challenge_expired' || error.code === 'invalid_response' ? 400 : error.code === 'account_disabled' ? 403 : 401;
    return refuse(reply, status, error.code, error.code in t ? t[error.code as keyof typeof t] : t.not_verified);
  }

  /** The relying party, or the refusal already sent. */
  function relyingParty(request: FastifyRequest, reply: FastifyReply): RelyingParty | FastifyReply {
    return consoleRelyingParty(ctx, request) ?? refuse(reply, 404, 'not_available', words(request).passkeys.notAvailable);
  }

  async function options(request: FastifyRequest, reply: FastifyReply, sub: string | undefined): Promise<FastifyReply> {
    const rp = relyingParty(request, reply);
    if (!('id' in rp)) return rp;
    try {
      return reply.header('cache-control', 'no-store').send(await startPasskeyAuthentication(passkeys, rp, { ...(sub === undefined ? {} : { sub }), address: request.ip }));
    } catch (error) {
      if (error instanceof PasskeyError) return refusePasskey(request, reply, error);
      throw error;
    }
  }

  /** The person whose passkey answered, or the refusal already sent (and audited). */
  async function verified(request: FastifyRequest, reply: FastifyReply, options: { sub?: string; requireUserVerification?: boolean }, stage: 'console' | 'step_up'): Promise<string | FastifyReply> {
    const rp = relyingParty(request, reply);
    if (!('id' in rp)) return rp;
    const body = request.body;
    const response = typeof body === 'object' && body !== null ? (body as Record<string, unknown>).response : undefined;
    try {
      return (await verifyPasskeyAssertion(passkeys, rp, response, options)).sub;
    } catch (error) {
      if (!(error instanceof PasskeyError)) throw error;
      const sub = options.sub ?? error.sub;
      await recordAuditSafely(ctx.db, ctx.clock, { type: options.sub ? 'mfa.failed' : 'passkey.signin', sub, ip: request.ip, outcome: 'failure', detail: { stage, factor: 'passkey', reason: error.code } }, request.log);
      return refusePasskey(request, reply, error);
    }
  }

  async function startSession(request: FastifyRequest, reply: FastifyReply, sub: string): Promise<void> {
    const previous = request.cookies[CONSOLE_COOKIES.session];
    if (previous) await endConsoleSession(ctx.db, ctx.hashKey, previous);
    const { id } = await startConsoleSession(ctx.db, ctx.hashKey, ctx.clock, { sub, ip: request.ip });
    reply.setCookie(CONSOLE_COOKIES.session, id, consoleCookieOptions(request));
  }

  const signedIn = (reply: FastifyReply, to: string) => reply.header('cache-control', 'no-store').send({ redirect: to });

  // A passkey on its own: the authenticator must have verified the person (two factors in one).
  app.post('/admin/signin/passkey/options', { preHandler: app.csrfProtection }, async (request, reply) => options(request, reply, undefined));
  app.post('/admin/signin/passkey', { preHandler: app.csrfProtection }, async (request, reply) => {
    const sub = await verified(request, reply, { requireUserVerification: true }, 'console');
    if (typeof sub !== 'string') return sub;
    await startSession(request, reply, sub);
    await recordAuditSafely(ctx.db, ctx.clock, { type: 'passkey.signin', sub, ip: request.ip, outcome: 'success', detail: { stage: 'console' } }, request.log);
    await recordAuditSafely(ctx.db, ctx.clock, { type: 'signin.succeeded', sub, ip: request.ip, outcome: 'success', detail: { stage: 'console', factor: 'passkey' } }, request.log);
    return signedIn(reply, '/admin');
  });

  // The second step after a password: only the person the password named, only their passkeys here.
  const halfSignedIn = async (request: FastifyRequest): Promise<HalfSignedIn | undefined> => {
    const state = await findSecondStep(steps, request.cookies[CONSOLE_COOKIES.secondStep], CONSOLE_ORIGIN);
    return state?.purpose === 'verify' ? state : undefined;
  };
  const expired = (request: FastifyRequest, reply: FastifyReply) => refuse(reply, 400, 'request_expired', words(request).twoStep.stepExpired);

  app.post('/admin/signin/two-step/passkey/options', { preHandler: app.csrfProtection }, async (request, reply) => {
    const state = await halfSignedIn(request);
    return state ? options(request, reply, state.sub) : expired(request, reply);
  });
  app.post('/admin/signin/two-step/passkey', { preHandler: app.csrfProtection }, async (request, reply) => {
    const state = await halfSignedIn(request);
    if (!state) return expired(request, reply);
    const sub = await verified(request, reply, { sub: state.sub }, 'console');
    if (typeof sub !== 'string') return sub;
    const stepId = request.cookies[CONSOLE_COOKIES.secondStep];
    if (!stepId || !(await finishSecondStep(steps, stepId, CONSOLE_ORIGIN))) return expired(request, reply);
    reply.clearCookie(CONSOLE_COOKIES.secondStep, consoleCookieOptions(request));
    await startSession(request, reply, sub);
    await recordAuditSafely(ctx.db, ctx.clock, { type: 'passkey.signin', sub, ip: request.ip, outcome: 'success', detail: { stage: 'console' } }, request.log);
    await recordAuditSafely(ctx.db, ctx.clock, { type: 'signin.succeeded', sub, ip: request.ip, outcome: 'success', detail: { stage: 'console', factor: 'passkey' } }, request.log);
    return signedIn(reply, '/admin');
  });

  // The step-up before a destructive change, with the operator's own passkey.
  const guard = requireOperator(ctx);
  app.post('/admin/confirm/passkey/options', { preHandler: [app.csrfProtection, guard] }, async (request, reply) => options(request, reply, operatorOf(request).session.sub));
  app.post('/admin/confirm/passkey', { preHandler: [app.csrfProtection, guard] }, async (request, reply) => {
    const { session } = operatorOf(request);
    const sub = await verified(request, reply, { sub: session.sub }, 'step_up');
    if (typeof sub !== 'string') return sub;
    await markConsoleChecked(ctx.db, ctx.clock, session);
    const body = request.body;
    const returnTo = consolePath(typeof body === 'object' && body !== null ? (body as Record<string, unknown>).return : undefined) ?? '/admin';
    return signedIn(reply, `${returnTo}${returnTo.includes('?') ? '&' : '?'}notice=confirmed`);
  });
}
