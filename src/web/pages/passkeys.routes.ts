// Passkeys over HTTP (issue 19 item 3). The ceremonies are JSON calls made by static/passkeys.js from
// /account and /signin, each with the page's CSRF token in `x-csrf-token`; their answers are JSON
// `{error, message}` in the page's language on failure (a malformed body is 400, never a 500). Removing
// a passkey, and the no-script fallback of the add form, are ordinary forms.
import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { findAccount } from '../../accounts/accounts.ts';
import { deviceCookieAfterSignIn } from '../../accounts/device-cookies.ts';
import {
  finishPasskeyRegistration,
  PasskeyError,
  relyingPartyFor,
  removePasskey,
  startPasskeyAuthentication,
  startPasskeyRegistration,
  verifyPasskeyAssertion,
  type PasskeyContext,
  type PasskeyErrorCode,
  type RelyingParty,
} from '../../accounts/factors/passkeys.ts';
import { requireRecentCheck } from '../../accounts/factors/step-up.ts';
import { recordAuditSafely } from '../../audit/audit.ts';
import { SECOND } from '../../config/clock.ts';
import { isDatabaseUnavailable } from '../../db/errors.ts';
import { findPendingRequest, forBrowser, type FlowContext } from '../../oauth/authorization-requests.ts';
import { answerGoneClient, clientWentAway } from '../client-gone.ts';
import { brandedMessages } from '../i18n/i18n.ts';
import type { Messages } from '../i18n/en.ts';
import { showAccount, type AccountPageContext } from './account-page.ts';
import { field } from './forms.ts';
import { rotateCsrfSecret, setDeviceCookie, waitText } from './signin-flow.ts';
import type { HalfSignedIn } from '../../accounts/factors/second-step.ts';
import { completeSecondStep, nextAfterSecondStep, rememberThisBrowser, secondStepStateOf, type SecondStepPageContext } from './second-step.routes.ts';
import { localeOf, localPath } from './view.ts';

export type PasskeyRouteOptions = {
  ctx: FlowContext;
  account: AccountPageContext;
  /** keys.deviceCookie */
  deviceKey: Buffer;
  /** the second step after a password, which a passkey may answer */
  factors: SecondStepPageContext;
};

const CSRF_ERRORS = new Set(['FST_CSRF_INVALID_TOKEN', 'FST_CSRF_MISSING_SECRET']);

/** The answer's status for each refusal. */
const STATUS: Record<PasskeyErrorCode, number> = {
  challenge_expired: 400,
  unknown_credential: 401,
  not_verified: 401,
  invalid_response: 400,
  invalid_name: 400,
  account_disabled: 403,
  user_not_verified: 401,
  already_registered: 409,
  throttled: 429,
};

function textsOf(request: FastifyRequest): Messages {
  return brandedMessages(localeOf(request), request.server.site.productName);
}

/** The relying party of the host this request named (each served host is its own; none for an IP address). */
export function relyingPartyOf(request: FastifyRequest): RelyingParty | undefined {
  return relyingPartyFor(request.servedOrigin, request.server.site.productName);
}

function refuse(reply: FastifyReply, status: number, error: string, message: string): FastifyReply {
  return reply.code(status).header('cache-control', 'no-store').send({ error, message });
}

function refusePasskey(request: FastifyRequest, reply: FastifyReply, error: PasskeyError, now: number): FastifyReply {
  const t = textsOf(request);
  if (error.code === 'throttled') {
    const wait = Math.max(0, (error.retryAt ?? now) - now);
    reply.header('retry-after', String(Math.max(1, Math.ceil(wait / SECOND))));
    return refuse(reply, 429, 'throttled', t.passkeys.errors.throttled.replace('{wait}', waitText(t, wait)));
  }
  return refuse(reply, STATUS[error.code], error.code, t.passkeys.errors[error.code]);
}

/** A value of a JSON body (objects only; anything else is absent). */
function bodyValue(body: unknown, name: string): unknown {
  return typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>)[name] : undefined;
}

/** The JSON ceremonies: options and verification, for adding a passkey and for signing in with one. */
const ceremonyRoutes: FastifyPluginAsync<PasskeyRouteOptions> = async (app, { ctx, deviceKey, factors }) => {
  const passkeys: PasskeyContext = { db: ctx.db, dialect: ctx.dialect, clock: ctx.clock, hashKey: ctx.hashKey };

  /** An authentication ceremony's options (refusals in words): discoverable for anyone, or one person's passkeys. */
  async function sendAuthenticationOptions(request: FastifyRequest, reply: FastifyReply, rp: RelyingParty, sub: string | undefined): Promise<FastifyReply> {
    try {
      const options = await startPasskeyAuthentication(passkeys, rp, { ...(sub === undefined ? {} : { sub }), address: request.ip });
      return reply.header('cache-control', 'no-store').send(options);
    } catch (error) {
      if (error instanceof PasskeyError) return refusePasskey(request, reply, error, ctx.clock());
      throw error;
    }
  }

  // Every failure here is JSON in the page's language: a bad token 403, a malformed body 400.
  app.setErrorHandler(async (error: FastifyError, request, reply) => {
    if (clientWentAway(request, error)) return answerGoneClient(request, reply);
    const t = textsOf(request);
    if (CSRF_ERRORS.has(error.code)) return refuse(reply, 403, 'csrf_failed', t.csrfFailed);
    if (isDatabaseUnavailable(error)) {
      request.log.error({ err: error }, 'database unavailable');
      return refuse(reply.header('retry-after', '5'), 503, 'unavailable', t.unavailable);
    }
    const status = typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
    if (status === 500) {
      request.log.error({ err: error }, 'unexpected error in a passkey ceremony');
      return refuse(reply, 500, 'server_error', t.serverError);
    }
    // A body that is not JSON, too large, or of another type is not a WebAuthn answer.
    return refuse(reply, status, status === 400 ? 'invalid_response' : status === 413 ? 'payload_too_large' : status === 415 ? 'unsupported_media_type' : 'bad_request', t.passkeys.errors.invalid_response);
  });

  app.post('/account/passkeys/options', { preHandler: app.csrfProtection }, async (request, reply) => {
    const t = textsOf(request);
    const session = await request.currentSession();
    if (!session) return refuse(reply, 401, 'not_signed_in', t.passkeys.errors.notSignedIn);
    const rp = relyingPartyOf(request);
    if (!rp) return refuse(reply, 404, 'not_available', t.passkeys.notAvailable);
    const account = await findAccount(ctx.db, session.sub);
    const userName = account?.email ?? account?.phone_number ?? session.sub;
    const options = await startPasskeyRegistration(passkeys, rp, { sub: session.sub, userName, displayName: account?.name ?? userName });
    return reply.header('cache-control', 'no-store').send(options);
  });

  app.post('/account/passkeys', { preHandler: app.csrfProtection }, async (request, reply) => {
    const t = textsOf(request);
    const session = await request.currentSession();
    if (!session) return refuse(reply, 401, 'not_signed_in', t.passkeys.errors.notSignedIn);
    const rp = relyingPartyOf(request);
    if (!rp) return refuse(reply, 404, 'not_available', t.passkeys.notAvailable);
    try {
      await finishPasskeyRegistration(passkeys, rp, session.sub, { name: bodyValue(request.body, 'name'), response: bodyValue(request.body, 'response'), locale: localeOf(request) });
    } catch (error) {
      if (error instanceof PasskeyError) return refusePasskey(request, reply, error, ctx.clock());
      throw error;
    }
    await recordAuditSafely(ctx.db, ctx.clock, { type: 'passkey.added', sub: session.sub, ip: request.ip, outcome: 'success' }, request.log);
    request.log.info({ event: 'passkey_added' }, 'passkey added');
    return reply.header('cache-control', 'no-store').send({ redirect: '/account?saved=passkey#passkeys-heading' });
  });

  app.post('/signin/passkey/options', { preHandler: app.csrfProtection }, async (request, reply) => {
    const t = textsOf(request);
    const rp = relyingPartyOf(request);
    if (!rp) return refuse(reply, 404, 'not_available', t.passkeys.notAvailable);
    // spec (issue 19): "discoverable credentials, no e-mail typed" — no allow list.
    return sendAuthenticationOptions(request, reply, rp, undefined);
  });

  // issue 19: "A passkey sign-in is complete by itself" — the session starts as after a password
  // (new session id, CSRF secret rotated, device cookie), then on to consent when a request waits.
  app.post('/signin/passkey', { preHandler: app.csrfProtection }, async (request, reply) => {
    const t = textsOf(request);
    const rp = relyingPartyOf(request);
    if (!rp) return refuse(reply, 404, 'not_available', t.passkeys.notAvailable);
    const requestId = field(request.body, 'request');
    const pending = requestId ? await findPendingRequest(forBrowser(ctx, request.cookies[request.server.cookieNames.flow]), requestId, request.servedOrigin.origin) : undefined;
    if (requestId && !pending) return refuse(reply, 400, 'request_expired', t.requestExpired);
    const returnTo = localPath(bodyValue(request.body, 'return'));
    const about = { clientId: pending?.clientId, ip: request.ip };
    let sub: string;
    let method: 'hwk' | 'swk';
    try {
      // On its own a passkey must be two factors: the authenticator verified the person.
      ({ sub, amr: method } = await verifyPasskeyAssertion(passkeys, rp, bodyValue(request.body, 'response'), { requireUserVerification: true }));
    } catch (error) {
      if (!(error instanceof PasskeyError)) throw error;
      await recordAuditSafely(ctx.db, ctx.clock, { ...about, type: 'passkey.signin', sub: error.sub, outcome: 'failure', detail: { reason: error.code } }, request.log);
      return refusePasskey(request, reply, error, ctx.clock());
    }
    await recordAuditSafely(ctx.db, ctx.clock, { ...about, type: 'passkey.signin', sub, outcome: 'success' }, request.log);
    // RFC 8176: a passkey with user verification is a hardware-bound key and a second factor on its own.
    await reply.signIn(sub, [method, 'mfa']);
    rotateCsrfSecret(request, reply);
    setDeviceCookie(request, reply, deviceCookieAfterSignIn(deviceKey, sub, request.cookies[request.server.cookieNames.device], ctx.clock()));
    request.log.info({ event: 'signed_in', method: 'passkey' }, 'person signed in with a passkey');
    const next = pending ? `/consent?request=${encodeURIComponent(requestId)}` : (returnTo ?? '/account');
    return reply.header('cache-control', 'no-store').send({ redirect: next });
  });
  // issue 19: "a passkey may also be used as the second step after a password" — only the person the
  // password named, only their passkeys on this host; presence is enough (the password was the other factor).
  /** The relying party and the half-signed-in person a second-step ceremony is for, or the refusal already sent. */
  async function secondStepCeremony(request: FastifyRequest, reply: FastifyReply): Promise<{ rp: RelyingParty; state: HalfSignedIn } | FastifyReply> {
    const t = textsOf(request);
    const rp = relyingPartyOf(request);
    if (!rp) return refuse(reply, 404, 'not_available', t.passkeys.notAvailable);
    const state = await secondStepStateOf(factors, request);
    if (!state || state.purpose !== 'verify') return refuse(reply, 400, 'request_expired', t.twoStep.stepExpired);
    return { rp, state };
  }

  app.post('/signin/two-step/passkey/options', { preHandler: app.csrfProtection }, async (request, reply) => {
    const ceremony = await secondStepCeremony(request, reply);
    if (!('rp' in ceremony)) return ceremony;
    return sendAuthenticationOptions(request, reply, ceremony.rp, ceremony.state.sub);
  });

  app.post('/signin/two-step/passkey', { preHandler: app.csrfProtection }, async (request, reply) => {
    const ceremony = await secondStepCeremony(request, reply);
    if (!('rp' in ceremony)) return ceremony;
    const { rp, state } = ceremony;
    let method: 'hwk' | 'swk';
    try {
      ({ amr: method } = await verifyPasskeyAssertion(passkeys, rp, bodyValue(request.body, 'response'), { sub: state.sub }));
    } catch (error) {
      if (!(error instanceof PasskeyError)) throw error;
      await recordAuditSafely(ctx.db, ctx.clock, { type: 'mfa.failed', sub: state.sub, ip: request.ip, outcome: 'failure', detail: { stage: 'signin', factor: 'passkey', reason: error.code } }, request.log);
      return refusePasskey(request, reply, error, ctx.clock());
    }
    if (!(await completeSecondStep(factors, request, reply, state, ['pwd', method, 'mfa']))) return refuse(reply, 400, 'request_expired', textsOf(request).twoStep.stepExpired);
    await recordAuditSafely(ctx.db, ctx.clock, { type: 'passkey.signin', sub: state.sub, ip: request.ip, outcome: 'success', detail: { stage: 'signin' } }, request.log);
    await recordAuditSafely(ctx.db, ctx.clock, { type: 'signin.succeeded', sub: state.sub, ip: request.ip, outcome: 'success', detail: { factor: 'passkey' } }, request.log);
    if (bodyValue(request.body, 'remember') === true) await rememberThisBrowser(factors, request, reply, state.sub);
    request.log.info({ event: 'signed_in', factor: 'passkey' }, 'person signed in with a second step');
    return reply.header('cache-control', 'no-store').send({ redirect: nextAfterSecondStep(state) });
  });
};

/** The forms: removing a passkey (after the page's confirmation), and the add form posted without script. */
const formRoutes: FastifyPluginAsync<PasskeyRouteOptions> = async (app, { ctx, account }) => {
  const passkeys: PasskeyContext = { db: ctx.db, dialect: ctx.dialect, clock: ctx.clock, hashKey: ctx.hashKey };

  app.post('/account/passkeys/add', { preHandler: app.csrfProtection }, async (request, reply) => {
    const session = await request.currentSession();
    if (!session) return reply.redirect('/signin?return=%2Faccount', 303);
    return showAccount(account, request, reply, session.sub, { status: 400, passkeyError: (t) => t.passkeys.noScript });
  });

  app.post('/account/passkeys/remove', { preHandler: app.csrfProtection }, async (request, reply) => {
    const session = await request.currentSession();
    if (!session) return reply.redirect('/signin?return=%2Faccount', 303);
    // spec (issue 19): "removing a passkey require[s] a factor or the password within the last 10 minutes".
    const confirm = requireRecentCheck(session, ctx.clock(), '/account#passkeys-heading');
    if (confirm) return reply.redirect(confirm, 303);
    const removed = await removePasskey(passkeys, session.sub, field(request.body, 'passkey'), localeOf(request));
    if (!removed) return reply.redirect('/account#passkeys-heading', 303);
    await recordAuditSafely(ctx.db, ctx.clock, { type: 'passkey.removed', sub: session.sub, ip: request.ip, outcome: 'success' }, request.log);
    request.log.info({ event: 'passkey_removed' }, 'passkey removed');
    return reply.redirect('/account?saved=passkey_removed#passkeys-heading', 303);
  });
};

export const passkeyRoutes: FastifyPluginAsync<PasskeyRouteOptions> = async (app, options) => {
  await app.register(ceremonyRoutes, options);
  await app.register(formRoutes, options);
};
