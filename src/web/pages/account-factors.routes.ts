// /account's Two-step verification: setting up an authenticator app (then ten recovery codes shown
// once), making a new set of recovery codes, turning the app off — the last two are sensitive changes
// (issue 19 item 5) behind a recent check — and the confirmation page that gives the check.
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { passwordMatches } from '../../accounts/accounts.ts';
import { notifySecurity, turnOffAuthenticatorApp } from '../../accounts/factors/factors.ts';
import { newRecoveryCodes } from '../../accounts/factors/recovery-codes.ts';
import { acceptsCodes, checkCode, confirmSetupCode } from '../../accounts/factors/second-step.ts';
import { requireRecentCheck } from '../../accounts/factors/step-up.ts';
import { hasTotp, TOTP_KIND } from '../../accounts/factors/totp.ts';
import { markSessionChecked, type Session } from '../../accounts/sessions.ts';
import { blockedUntil, recordFailure, recordSuccess } from '../../accounts/throttle.ts';
import { recordAudit } from '../../audit/audit.ts';
import { SECOND } from '../../config/clock.ts';
import type { Messages } from '../i18n/en.ts';
import { field } from './forms.ts';
import type { SecondStepPageContext } from './second-step.routes.ts';
import { waitText } from './signin-flow.ts';
import { showRecoveryCodes, showSetup } from './two-step-pages.ts';
import { localeOf, localPath, renderPage } from './view.ts';

const SECTION = '/account#two-step-heading';

export const accountFactorRoutes: FastifyPluginAsync<{ ctx: SecondStepPageContext }> = async (app, { ctx }) => {
  const { db } = ctx;

  async function signedIn(request: FastifyRequest, reply: FastifyReply, back: string): Promise<Session | undefined> {
    const session = await request.currentSession();
    if (!session) void reply.redirect(`/signin?return=${encodeURIComponent(back)}`, 303);
    return session;
  }

  /** spec: the sensitive change needs a recent check; otherwise the confirmation page, which returns to `back`. */
  function stepUpFirst(reply: FastifyReply, session: Session, back: string): FastifyReply | undefined {
    const confirm = requireRecentCheck(session, ctx.clock(), back);
    return confirm === undefined ? undefined : reply.redirect(confirm, 303);
  }

  const appName = (request: FastifyRequest) => (localeOf(request) === 'zh-CN' ? '身份验证器应用' : 'Authenticator app');

  // ---- setting up ----

  app.get('/account/two-step/setup', async (request, reply) => {
    const returnTo = localPath(field(request.query, 'return'));
    const session = await signedIn(request, reply, '/account/two-step/setup');
    if (!session) return reply;
    if (await hasTotp(db, session.sub)) return reply.redirect(SECTION, 303);
    return showSetup(ctx, request, reply, { sub: session.sub, action: '/account/two-step/setup', returnTo, cancelHref: SECTION });
  });

  app.post('/account/two-step/setup', { preHandler: app.csrfProtection }, async (request, reply) => {
    const session = await signedIn(request, reply, '/account/two-step/setup');
    if (!session) return reply;
    const returnTo = localPath(field(request.body, 'return'));
    const code = field(request.body, 'code').trim().slice(0, 40);
    const again = (status: number, error: (t: Messages) => string) => showSetup(ctx, request, reply, { sub: session.sub, action: '/account/two-step/setup', returnTo, cancelHref: SECTION, status, error });
    if (!code) return again(400, (t) => t.twoStep.missingCode);
    const outcome = await confirmSetupCode(ctx, session.sub, code, request.ip);
    if (outcome === 'throttled' || outcome === 'wrong_code') return again(outcome === 'throttled' ? 429 : 400, (t) => t.twoStep.wrongSetupCode);
    // Already on (another tab finished first): nothing new to show.
    if (outcome === 'no_setup') return reply.redirect(SECTION, 303);
    const codes = await newRecoveryCodes(db, ctx.hashKey, ctx.clock, session.sub);
    await recordAudit(db, ctx.clock, { type: 'mfa.enabled', sub: session.sub, ip: request.ip, outcome: 'success', detail: { factor: TOTP_KIND, stage: 'setup' } }, request.log);
    await notifySecurity(db, ctx.clock, session.sub, localeOf(request), { category: 'security', outcome: 'factor_added', factorName: appName(request) });
    return showRecoveryCodes(ctx, request, reply, {
      sub: session.sub,
      codes,
      continueHref: returnTo ?? SECTION,
      notice: (t) => t.twoStep.turnedOn,
      continueText: (t) => (returnTo ? t.twoStep.continueLink : t.twoStep.backToAccount),
    });
  });

  // ---- new recovery codes (a sensitive change) ----

  function actionPage(request: FastifyRequest, reply: FastifyReply, page: (t: Messages) => { heading: string; lines: string[]; button: string }, action: string, danger: boolean) {
    return renderPage(db, request, reply, 'two-step-action', (t) => page(t).heading, (t) => ({ ...page(t), action, danger }), { here: action });
  }

  app.get('/account/two-step/recovery-codes', async (request, reply) => {
    const session = await signedIn(request, reply, '/account/two-step/recovery-codes');
    if (!session) return reply;
    if (!(await hasTotp(db, session.sub))) return reply.redirect(SECTION, 303);
    return stepUpFirst(reply, session, '/account/two-step/recovery-codes') ?? actionPage(request, reply, (t) => ({ heading: t.twoStep.newCodesTitle, lines: [t.twoStep.newCodesIntro], button: t.twoStep.newCodesButton }), '/account/two-step/recovery-codes', false);
  });

  app.post('/account/two-step/recovery-codes', { preHandler: app.csrfProtection }, async (request, reply) => {
    const session = await signedIn(request, reply, '/account/two-step/recovery-codes');
    if (!session) return reply;
    const stepUp = stepUpFirst(reply, session, '/account/two-step/recovery-codes');
    if (stepUp) return stepUp;
    if (!(await hasTotp(db, session.sub))) return reply.redirect(SECTION, 303);
    const codes = await newRecoveryCodes(db, ctx.hashKey, ctx.clock, session.sub);
    request.log.info({ event: 'recovery_codes_renewed' }, 'a new set of recovery codes');
    return showRecoveryCodes(ctx, request, reply, { sub: session.sub, codes, continueHref: SECTION, notice: (t) => t.twoStep.codesOld, continueText: (t) => t.twoStep.backToAccount });
  });

  // ---- turning the app off (a sensitive change) ----

  app.get('/account/two-step/turn-off', async (request, reply) => {
    const session = await signedIn(request, reply, '/account/two-step/turn-off');
    if (!session) return reply;
    if (!(await hasTotp(db, session.sub))) return reply.redirect(SECTION, 303);
    return (
      stepUpFirst(reply, session, '/account/two-step/turn-off') ??
      actionPage(
        request,
        reply,
        (t) => ({ heading: t.twoStep.turnOffTitle, lines: [t.twoStep.turnOffIntro, ...(ctx.mfa === 'required' ? [t.twoStep.turnOffRequired] : [])], button: t.twoStep.turnOffButton }),
        '/account/two-step/turn-off',
        true,
      )
    );
  });

  app.post('/account/two-step/turn-off', { preHandler: app.csrfProtection }, async (request, reply) => {
    const session = await signedIn(request, reply, '/account/two-step/turn-off');
    if (!session) return reply;
    const stepUp = stepUpFirst(reply, session, '/account/two-step/turn-off');
    if (stepUp) return stepUp;
    const passkeysLeft = (await ctx.passkeys.count(db, session.sub)) > 0;
    const removed = await turnOffAuthenticatorApp(db, session.sub, passkeysLeft);
    if (removed > 0) {
      await recordAudit(db, ctx.clock, { type: 'mfa.disabled', sub: session.sub, ip: request.ip, outcome: 'success', detail: { factor: TOTP_KIND, factors_removed: removed } }, request.log);
      await notifySecurity(db, ctx.clock, session.sub, localeOf(request), { category: 'security', outcome: 'factor_removed', factorName: appName(request) });
    }
    return reply.redirect('/account?saved=two-step-off#two-step-heading', 303);
  });

  // ---- the recent check ----

  async function showConfirm(request: FastifyRequest, reply: FastifyReply, session: Session, returnTo: string, extra: { status?: number; error?: (t: Messages) => string; errorField?: 'password' | 'code' } = {}) {
    const hasCodes = await acceptsCodes(db, session.sub);
    return renderPage(db, request, reply, 'confirm', (t) => t.twoStep.confirmTitle, (t) => ({ returnTo, hasCodes, error: extra.error?.(t), errorField: extra.errorField }), {
      status: extra.status ?? 200,
      here: `/account/confirm?return=${encodeURIComponent(returnTo)}`,
    });
  }

  app.get('/account/confirm', async (request, reply) => {
    const returnTo = localPath(field(request.query, 'return')) ?? '/account';
    const session = await signedIn(request, reply, `/account/confirm?return=${encodeURIComponent(returnTo)}`);
    if (!session) return reply;
    return showConfirm(request, reply, session, returnTo);
  });

  app.post('/account/confirm', { preHandler: app.csrfProtection }, async (request, reply) => {
    const returnTo = localPath(field(request.body, 'return')) ?? '/account';
    const session = await signedIn(request, reply, `/account/confirm?return=${encodeURIComponent(returnTo)}`);
    const id = request.cookies[request.server.cookieNames.session];
    if (!session || !id) return reply;
    const method = field(request.body, 'method') === 'code' ? 'code' : 'password';
    const failed = (status: number, retryAt: number | undefined, wrong: (t: Messages) => string) => {
      const wait = retryAt === undefined ? undefined : retryAt - ctx.clock();
      if (wait !== undefined) reply.header('retry-after', String(Math.ceil(wait / SECOND)));
      return showConfirm(request, reply, session, returnTo, {
        status,
        errorField: method,
        error: (t) => [status === 429 ? '' : wrong(t), wait === undefined ? '' : t.twoStep.throttled(waitText(t, wait))].filter(Boolean).join(' '),
      });
    };
    if (method === 'password') {
      // Wrong passwords here count against sign-in throttling, as on the password form.
      const source = { account: session.sub, address: request.ip };
      const blocked = await blockedUntil(db, ctx.clock, source);
      if (blocked !== undefined) return failed(429, blocked, (t) => t.twoStep.wrongPassword);
      if (!(await passwordMatches(db, session.sub, field(request.body, 'password')))) return failed(400, await recordFailure(db, ctx.clock, source), (t) => t.twoStep.wrongPassword);
      await recordSuccess(db, source);
    } else {
      const result = await checkCode(ctx, session.sub, field(request.body, 'code').trim().slice(0, 40), request.ip);
      if (result.outcome !== 'accepted') {
        await recordAudit(db, ctx.clock, { type: 'mfa.failed', sub: session.sub, ip: request.ip, outcome: result.outcome === 'throttled' ? 'refused' : 'failure', detail: { stage: 'step_up' } }, request.log);
        return failed(result.outcome === 'throttled' ? 429 : 400, result.retryAt, (t) => t.twoStep.wrongCode);
      }
      if (result.via === 'recovery_code') {
        await recordAudit(db, ctx.clock, { type: 'mfa.recovery_used', sub: session.sub, ip: request.ip, outcome: 'success', detail: { stage: 'step_up', recovery_codes_left: result.remaining } }, request.log);
        await notifySecurity(db, ctx.clock, session.sub, localeOf(request), { category: 'security', outcome: 'recovery_code_used', remaining: result.remaining });
      }
    }
    await markSessionChecked(db, ctx.hashKey, ctx.clock, id, request.servedOrigin.origin);
    return reply.redirect(returnTo, 303);
  });
};
