// The second step at sign-in (issue 19 item 4) and, with SIGNET_MFA=required, setting a factor up
// before the sign-in finishes (item 6). The browser is half signed in (accounts/factors/second-step.ts):
// no session exists until a code is accepted, so every page that needs one — /account, /consent,
// prompt=none — treats the person as signed out.
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { acceptsCodes, enabledFactorIds, checkCode, confirmSetupCode, findSecondStep, finishSecondStep, type HalfSignedIn, type SecondStepContext } from '../../accounts/factors/second-step.ts';
import { newRecoveryCodes } from '../../accounts/factors/recovery-codes.ts';
import { TOTP_KIND } from '../../accounts/factors/totp.ts';
import { notifySecurity } from '../../accounts/factors/factors.ts';
import { rememberBrowser, REMEMBER_BROWSER_MS } from '../../accounts/factors/remembered-browser.ts';
import { recordAuditSafely } from '../../audit/audit.ts';
import { SECOND } from '../../config/clock.ts';
import { refuseFramedNavigation } from '../../oauth/framing.ts';
import type { Messages } from '../i18n/en.ts';
import { field } from './forms.ts';
import { nextAfterSignIn, rotateCsrfSecret, waitText, type SecondStepPageContext } from './signin-flow.ts';
import { showRecoveryCodes, showSetup } from './two-step-pages.ts';
import { localeOf, renderPage } from './view.ts';
import { cookieOptions } from '../cookies.ts';

export type { SecondStepPageContext } from './signin-flow.ts';

/** Where the sign-in goes once the step is done: the consent page of the pending request, else where it was headed. */
export function nextAfterSecondStep(state: Pick<HalfSignedIn, 'requestId' | 'returnTo'>): string {
  return nextAfterSignIn(state);
}

/** This browser's half-signed-in state, if it has a live one. */
export function secondStepStateOf(ctx: SecondStepContext, request: FastifyRequest): Promise<HalfSignedIn | undefined> {
  return findSecondStep(ctx, request.cookies[request.server.cookieNames.secondStep], request.servedOrigin.origin);
}

function clearStateCookie(request: FastifyRequest, reply: FastifyReply): void {
  reply.clearCookie(request.server.cookieNames.secondStep, cookieOptions(request));
}

/**
 * Turns the half-signed-in state into a session — once (the state is removed atomically first); false
 * when it was already used or expired. The code form and the passkey second step (passkeys.routes.ts) both end here.
 */
export async function completeSecondStep(ctx: SecondStepContext, request: FastifyRequest, reply: FastifyReply, state: HalfSignedIn, amr: readonly string[]): Promise<boolean> {
  const id = request.cookies[request.server.cookieNames.secondStep];
  if (!id || !(await finishSecondStep(ctx, id, request.servedOrigin.origin))) return false;
  clearStateCookie(request, reply);
  // The callers name the password as the first step; after an upstream sign-in (issue 33) it was not.
  await reply.signIn(state.sub, state.firstFactor ? [...state.firstFactor, ...amr.filter((m) => m !== 'pwd')] : amr);
  rotateCsrfSecret(request, reply);
  return true;
}

/** Sets the "Remember this browser for 30 days" cookie (only a person who ticked it skips the step later). */
export async function rememberThisBrowser(ctx: SecondStepPageContext, request: FastifyRequest, reply: FastifyReply, sub: string): Promise<void> {
  const value = rememberBrowser(ctx.rememberKey, sub, await enabledFactorIds(ctx.db, sub), request.cookies[request.server.cookieNames.remembered], ctx.clock());
  reply.setCookie(request.server.cookieNames.remembered, value, cookieOptions(request, { maxAgeMs: REMEMBER_BROWSER_MS }));
}

export const secondStepRoutes: FastifyPluginAsync<{ ctx: SecondStepPageContext }> = async (app, { ctx }) => {
  const { db } = ctx;
  app.addHook('onRequest', refuseFramedNavigation);

  const stateOf = (request: FastifyRequest) => secondStepStateOf(ctx, request);

  /** No (live) half-signed-in state: the 5 minutes ran out, or the browser never had one. Back to sign-in. */
  function expired(request: FastifyRequest, reply: FastifyReply): FastifyReply {
    clearStateCookie(request, reply);
    return reply.redirect('/signin?second_step=expired', 303);
  }

  // RFC 8176: the password and an authenticator code (`otp`) — or a recovery code — are two factors (`mfa`).
  const complete = (request: FastifyRequest, reply: FastifyReply, state: HalfSignedIn, via: string = 'totp') => completeSecondStep(ctx, request, reply, state, via === 'recovery_code' ? ['pwd', 'mfa'] : ['pwd', 'otp', 'mfa']);

  async function renderStep(request: FastifyRequest, reply: FastifyReply, state: HalfSignedIn, extra: { status?: number; error?: (t: Messages) => string; remember?: boolean } = {}) {
    const hasPasskey = (await ctx.passkeys.count(db, state.sub)) > 0;
    const hasCodes = await acceptsCodes(db, state.sub);
    return renderPage(
      db,
      request,
      reply,
      'second-step',
      (t) => t.twoStep.stepTitle,
      (t) => ({
        error: extra.error?.(t),
        remember: extra.remember ?? false,
        hasPasskey,
        hasCodes,
        // issue 19: "a passkey may also be used as the second step after a password" (static/passkeys.js).
        passkeyScript: hasPasskey ? JSON.stringify({ mode: 'second-step', optionsUrl: '/signin/two-step/passkey/options', finishUrl: '/signin/two-step/passkey', text: t.passkeys.script }) : '',
      }),
      { status: extra.status ?? 200, header: false, here: '/signin/two-step' },
    );
  }

  app.get('/signin/two-step', async (request, reply) => {
    const state = await stateOf(request);
    if (!state) return expired(request, reply);
    if (state.purpose === 'enrol') return reply.redirect('/signin/two-step/setup', 303);
    return renderStep(request, reply, state);
  });

  app.post('/signin/two-step', { preHandler: app.csrfProtection }, async (request, reply) => {
    const state = await stateOf(request);
    if (!state || state.purpose !== 'verify') return expired(request, reply);
    const code = field(request.body, 'code').trim().slice(0, 40);
    const remember = field(request.body, 'remember') === '1';
    if (!code) return renderStep(request, reply, state, { status: 400, error: (t) => t.twoStep.missingCode, remember });
    const result = await checkCode(ctx, state.sub, code, request.ip);
    const about = { sub: state.sub, ip: request.ip };
    if (result.outcome === 'throttled' || result.outcome === 'wrong') {
      await recordAuditSafely(db, ctx.clock, { ...about, type: 'mfa.failed', outcome: result.outcome === 'throttled' ? 'refused' : 'failure', detail: { stage: 'signin' } }, request.log);
      const retryAt = result.retryAt;
      const wait = retryAt === undefined ? undefined : retryAt - ctx.clock();
      if (wait !== undefined) reply.header('retry-after', String(Math.ceil(wait / SECOND)));
      return renderStep(request, reply, state, {
        status: result.outcome === 'throttled' ? 429 : 401,
        remember,
        error: (t) => [result.outcome === 'wrong' ? t.twoStep.wrongCode : '', wait === undefined ? '' : t.twoStep.throttled(waitText(t, wait))].filter(Boolean).join(' '),
      });
    }
    if (!(await complete(request, reply, state, result.via))) return expired(request, reply);
    if (result.via === 'recovery_code') {
      await recordAuditSafely(db, ctx.clock, { ...about, type: 'mfa.recovery_used', outcome: 'success', detail: { stage: 'signin', recovery_codes_left: result.remaining } }, request.log);
      await notifySecurity(db, ctx.clock, state.sub, localeOf(request), { category: 'security', outcome: 'recovery_code_used', remaining: result.remaining });
    }
    await recordAuditSafely(db, ctx.clock, { ...about, type: 'signin.succeeded', outcome: 'success', detail: { factor: result.via } }, request.log);
    // spec: only a browser whose owner ticked "Remember this browser for 30 days" skips the step later.
    if (remember) await rememberThisBrowser(ctx, request, reply, state.sub);
    request.log.info({ event: 'signed_in', factor: result.via }, 'person signed in with a second step');
    return reply.redirect(nextAfterSecondStep(state), 303);
  });

  // SIGNET_MFA=required: "a person without a factor is led, after the password, to set one up before
  // any consent or callback".
  app.get('/signin/two-step/setup', async (request, reply) => {
    const state = await stateOf(request);
    if (!state) return expired(request, reply);
    if (state.purpose !== 'enrol') return reply.redirect('/signin/two-step', 303);
    return showSetup(ctx, request, reply, { sub: state.sub, action: '/signin/two-step/setup', header: false, notice: (t) => t.twoStep.enrolRequired });
  });

  app.post('/signin/two-step/setup', { preHandler: app.csrfProtection }, async (request, reply) => {
    const state = await stateOf(request);
    if (!state || state.purpose !== 'enrol') return expired(request, reply);
    const code = field(request.body, 'code').trim().slice(0, 40);
    if (!code) return showSetup(ctx, request, reply, { sub: state.sub, action: '/signin/two-step/setup', header: false, status: 400, error: (t) => t.twoStep.missingCode });
    const outcome = await confirmSetupCode(ctx, state.sub, code, request.ip);
    if (outcome === 'throttled' || outcome === 'wrong_code') {
      return showSetup(ctx, request, reply, { sub: state.sub, action: '/signin/two-step/setup', header: false, status: outcome === 'throttled' ? 429 : 400, error: (t) => t.twoStep.wrongSetupCode });
    }
    if (outcome === 'no_setup' || !(await complete(request, reply, state))) return expired(request, reply);
    const codes = await newRecoveryCodes(db, ctx.hashKey, ctx.clock, state.sub);
    await recordAuditSafely(db, ctx.clock, { sub: state.sub, ip: request.ip, type: 'mfa.enabled', outcome: 'success', detail: { factor: TOTP_KIND, stage: 'setup' } }, request.log);
    await recordAuditSafely(db, ctx.clock, { sub: state.sub, ip: request.ip, type: 'signin.succeeded', outcome: 'success', detail: { factor: TOTP_KIND } }, request.log);
    await notifySecurity(db, ctx.clock, state.sub, localeOf(request), { category: 'security', outcome: 'factor_added', factorName: localeOf(request) === 'zh-CN' ? '身份验证器应用' : 'Authenticator app' });
    return showRecoveryCodes(ctx, request, reply, { sub: state.sub, codes, continueHref: nextAfterSecondStep(state), notice: (t) => t.twoStep.turnedOn, continueText: (t) => t.twoStep.continueLink });
  });
};
