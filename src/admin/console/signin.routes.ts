// Signing in to the console on the admin listener: Signet's own sign-in (the same password check,
// throttling and second step as the public pages, the same landmarks — Email or phone, Password, Sign
// in; Code, Verify), ending in a console session of its own. Operators must have a second factor (an
// authenticator app, or a passkey: passkey-signin.routes.ts): one without is led to set up an
// authenticator app first. Also the step-up confirmation and sign-out.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { notifySecurity } from '../../accounts/factors/factors.ts';
import { newRecoveryCodes } from '../../accounts/factors/recovery-codes.ts';
import { acceptsCodes, beginSecondStep, checkCode, confirmSetupCode, findSecondStep, finishSecondStep, type HalfSignedIn } from '../../accounts/factors/second-step.ts';
import { beginTotpSetup, TOTP_KIND } from '../../accounts/factors/totp.ts';
import { hasPasskeyOn } from '../../accounts/factors/passkeys.ts';
import { isOperator } from '../../accounts/roles.ts';
import { signIn } from '../../accounts/signin.ts';
import { recordAuditSafely } from '../../audit/audit.ts';
import { findAccount } from '../../accounts/accounts.ts';
import { SECOND } from '../../config/clock.ts';
import { messages } from '../../web/i18n/i18n.ts';
import { field } from '../../web/pages/forms.ts';
import { keyGroups } from '../../web/pages/two-step-pages.ts';
import { CONSOLE_COOKIES, CONSOLE_ORIGIN, consoleCookieOptions, consolePath, consoleSessionOf, operatorOf, requireOperator, secondStepContext, type ConsoleContext } from './console-auth.ts';
import { endConsoleSession, markConsoleChecked, startConsoleSession } from './console-sessions.ts';
import { consoleRelyingParty, passkeyOffer } from './passkey-signin.routes.ts';
import { consoleLocale, consoleMessages, renderConsole } from './render.ts';


export async function consoleSigninRoutes(app: FastifyInstance, { ctx }: { ctx: ConsoleContext }): Promise<void> {
  const steps = secondStepContext(ctx);
  const render = (request: FastifyRequest, reply: FastifyReply, template: string, page: Parameters<typeof renderConsole>[3]) => renderConsole(request, reply, template, page, ctx.productName);

  async function showSignIn(request: FastifyRequest, reply: FastifyReply, extra: { status?: number; error?: string; notice?: string; identifier?: string } = {}) {
    const passkey = await passkeyOffer(ctx, request, 'signin');
    return render(request, reply, 'signin', { status: extra.status ?? 200, title: (_c, t) => t.signInTitle, error: extra.error, notice: extra.notice, data: () => ({ identifier: extra.identifier ?? '', passkey }) });
  }

  const stateOf = (request: FastifyRequest) => findSecondStep(steps, request.cookies[CONSOLE_COOKIES.secondStep], CONSOLE_ORIGIN);

  function expired(request: FastifyRequest, reply: FastifyReply) {
    reply.clearCookie(CONSOLE_COOKIES.secondStep, consoleCookieOptions(request));
    return reply.redirect('/admin/signin?expired=1', 303);
  }

  /** The half-signed-in state becomes a console session — once. */
  async function complete(request: FastifyRequest, reply: FastifyReply, state: HalfSignedIn): Promise<boolean> {
    const id = request.cookies[CONSOLE_COOKIES.secondStep];
    if (!id || !(await finishSecondStep(steps, id, CONSOLE_ORIGIN))) return false;
    reply.clearCookie(CONSOLE_COOKIES.secondStep, consoleCookieOptions(request));
    await startSession(request, reply, state.sub);
    return true;
  }

  async function startSession(request: FastifyRequest, reply: FastifyReply, sub: string) {
    const { id } = await startConsoleSession(ctx.db, ctx.hashKey, ctx.clock, { sub, ip: request.ip, previousId: request.cookies[CONSOLE_COOKIES.session] });
    reply.setCookie(CONSOLE_COOKIES.session, id, consoleCookieOptions(request));
  }

  app.get('/admin/signin', async (request, reply) => {
    if (await consoleSessionOf(ctx, request)) return reply.redirect('/admin', 303);
    const q = request.query;
    const c = consoleMessages(consoleLocale(request));
    const notice = field(q, 'signed_out') ? c.signedOut : field(q, 'idle') ? c.idleOut : field(q, 'expired') ? c.stepExpired : undefined;
    return showSignIn(request, reply, { notice });
  });

  app.post('/admin/signin', { preHandler: app.csrfProtection }, async (request, reply) => {
    const identifier = field(request.body, 'identifier').trim().slice(0, 320);
    const password = field(request.body, 'password');
    const words = messages(consoleLocale(request));
    if (!identifier || !password) return showSignIn(request, reply, { status: 400, identifier, error: words.missingFields });
    const result = await signIn(ctx.db, ctx.hashKey, ctx.clock, { identifier, password, address: request.ip }, { key: ctx.deviceKey, cookie: undefined });
    if (result.outcome === 'throttled') {
      await recordAuditSafely(ctx.db, ctx.clock, { type: 'signin.throttled', sub: result.sub, ip: request.ip, outcome: 'refused', detail: { stage: 'console' } }, request.log);
      reply.header('retry-after', String(Math.ceil((result.retryAt - ctx.clock()) / SECOND)));
      return showSignIn(request, reply, { status: 429, identifier, error: words.throttled(words.waitMinutes(Math.max(1, Math.ceil((result.retryAt - ctx.clock()) / 60_000)))) });
    }
    if (result.outcome === 'wrong_credentials') {
      await recordAuditSafely(ctx.db, ctx.clock, { type: result.locked ? 'signin.locked' : 'signin.failed', sub: result.sub, ip: request.ip, outcome: 'failure', detail: { stage: 'console' } }, request.log);
      return showSignIn(request, reply, { status: 401, identifier, error: words.wrongCredentials });
    }
    // A correct password is never a console session yet: whoever can take a code gives one, and an
    // operator whose only factor is a passkey usable here gives that (issue 36); an operator with
    // neither is led to set an authenticator app up. (Anyone else — no factor, no role — gets a
    // session that shows them the 403 page.)
    const operator = await isOperator(ctx.db, result.sub);
    const rp = consoleRelyingParty(ctx, request);
    const verifiable = (await acceptsCodes(ctx.db, result.sub)) || (rp !== undefined && (await hasPasskeyOn(ctx.db, result.sub, rp.id)));
    const purpose = verifiable ? 'verify' : operator ? 'enrol' : undefined;
    const previous = request.cookies[CONSOLE_COOKIES.session];
    if (previous) await endConsoleSession(ctx.db, ctx.hashKey, previous);
    reply.clearCookie(CONSOLE_COOKIES.session, consoleCookieOptions(request));
    if (purpose === undefined) {
      await recordAuditSafely(ctx.db, ctx.clock, { type: 'signin.succeeded', sub: result.sub, ip: request.ip, outcome: 'success', detail: { stage: 'console' } }, request.log);
      await startSession(request, reply, result.sub);
      return reply.redirect('/admin', 303);
    }
    const step = await beginSecondStep(steps, { sub: result.sub, purpose, origin: CONSOLE_ORIGIN });
    reply.setCookie(CONSOLE_COOKIES.secondStep, step.id, consoleCookieOptions(request, step.expiresAt));
    return reply.redirect(purpose === 'enrol' ? '/admin/signin/two-step/setup' : '/admin/signin/two-step', 303);
  });

  async function showStep(request: FastifyRequest, reply: FastifyReply, sub: string, extra: { status?: number; error?: string } = {}) {
    const codes = await acceptsCodes(ctx.db, sub);
    const passkey = await passkeyOffer(ctx, request, 'second-step', sub);
    return render(request, reply, 'second-step', { status: extra.status ?? 200, title: (_c, t) => t.twoStep.stepTitle, error: extra.error, data: () => ({ action: '/admin/signin/two-step', codes, passkey }) });
  }

  app.get('/admin/signin/two-step', async (request, reply) => {
    const state = await stateOf(request);
    if (!state) return expired(request, reply);
    if (state.purpose === 'enrol') return reply.redirect('/admin/signin/two-step/setup', 303);
    return showStep(request, reply, state.sub);
  });

  app.post('/admin/signin/two-step', { preHandler: app.csrfProtection }, async (request, reply) => {
    const state = await stateOf(request);
    if (!state || state.purpose !== 'verify') return expired(request, reply);
    const words = messages(consoleLocale(request));
    const code = field(request.body, 'code').trim().slice(0, 40);
    if (!code) return showStep(request, reply, state.sub, { status: 400, error: words.twoStep.missingCode });
    const result = await checkCode(steps, state.sub, code, request.ip);
    if (result.outcome !== 'accepted') {
      await recordAuditSafely(ctx.db, ctx.clock, { type: 'mfa.failed', sub: state.sub, ip: request.ip, outcome: result.outcome === 'throttled' ? 'refused' : 'failure', detail: { stage: 'console' } }, request.log);
      return showStep(request, reply, state.sub, { status: result.outcome === 'throttled' ? 429 : 401, error: result.outcome === 'wrong' ? words.twoStep.wrongCode : words.twoStep.throttled(words.waitMinutes(1)) });
    }
    if (!(await complete(request, reply, state))) return expired(request, reply);
    if (result.via === 'recovery_code') {
      await recordAuditSafely(ctx.db, ctx.clock, { type: 'mfa.recovery_used', sub: state.sub, ip: request.ip, outcome: 'success', detail: { stage: 'console', recovery_codes_left: result.remaining } }, request.log);
      await notifySecurity(ctx.db, ctx.clock, state.sub, consoleLocale(request), { category: 'security', outcome: 'recovery_code_used', remaining: result.remaining });
    }
    await recordAuditSafely(ctx.db, ctx.clock, { type: 'signin.succeeded', sub: state.sub, ip: request.ip, outcome: 'success', detail: { stage: 'console', factor: result.via } }, request.log);
    return reply.redirect('/admin', 303);
  });

  async function showSetup(request: FastifyRequest, reply: FastifyReply, sub: string, extra: { status?: number; error?: string } = {}) {
    const account = await findAccount(ctx.db, sub);
    const setup = await beginTotpSetup(ctx.db, ctx.factorKey, ctx.clock, { sub, issuer: ctx.productName, label: account?.email ?? account?.phone_number ?? sub });
    const { default: QRCode } = await import('qrcode');
    const qrSvg = await QRCode.toString(setup.uri, { type: 'svg', margin: 1, errorCorrectionLevel: 'M' });
    return render(request, reply, 'setup', {
      status: extra.status ?? 200,
      title: (_c, t) => t.twoStep.setupTitle,
      error: extra.error,
      notice: consoleMessages(consoleLocale(request)).enrolRequired,
      data: () => ({ qrSvg, setupKey: setup.secretBase32, keyGroups: keyGroups(setup.secretBase32) }),
    });
  }

  app.get('/admin/signin/two-step/setup', async (request, reply) => {
    const state = await stateOf(request);
    if (!state) return expired(request, reply);
    if (state.purpose !== 'enrol') return reply.redirect('/admin/signin/two-step', 303);
    return showSetup(request, reply, state.sub);
  });

  app.post('/admin/signin/two-step/setup', { preHandler: app.csrfProtection }, async (request, reply) => {
    const state = await stateOf(request);
    if (!state || state.purpose !== 'enrol') return expired(request, reply);
    const words = messages(consoleLocale(request));
    const code = field(request.body, 'code').trim().slice(0, 40);
    const outcome = code ? await confirmSetupCode(steps, state.sub, code, request.ip) : 'wrong_code';
    if (outcome === 'throttled' || outcome === 'wrong_code') return showSetup(request, reply, state.sub, { status: outcome === 'throttled' ? 429 : 400, error: words.twoStep.wrongSetupCode });
    if (outcome === 'no_setup' || !(await complete(request, reply, state))) return expired(request, reply);
    const codes = await newRecoveryCodes(ctx.db, ctx.hashKey, ctx.clock, state.sub);
    await recordAuditSafely(ctx.db, ctx.clock, { sub: state.sub, ip: request.ip, type: 'mfa.enabled', outcome: 'success', detail: { factor: TOTP_KIND, stage: 'console' } }, request.log);
    await recordAuditSafely(ctx.db, ctx.clock, { sub: state.sub, ip: request.ip, type: 'signin.succeeded', outcome: 'success', detail: { stage: 'console', factor: TOTP_KIND } }, request.log);
    const locale = consoleLocale(request);
    await notifySecurity(ctx.db, ctx.clock, state.sub, locale, { category: 'security', outcome: 'factor_added', factorName: locale === 'zh-CN' ? '身份验证器应用' : 'Authenticator app' });
    return render(request, reply, 'recovery-codes', { title: (_c, t) => t.twoStep.codesTitle, data: () => ({ codes }) });
  });

  app.post('/admin/signout', { preHandler: app.csrfProtection }, async (request, reply) => {
    const id = request.cookies[CONSOLE_COOKIES.session];
    if (id) await endConsoleSession(ctx.db, ctx.hashKey, id);
    const stepId = request.cookies[CONSOLE_COOKIES.secondStep];
    if (stepId) await finishSecondStep(steps, stepId, CONSOLE_ORIGIN);
    reply.clearCookie(CONSOLE_COOKIES.session, consoleCookieOptions(request));
    reply.clearCookie(CONSOLE_COOKIES.secondStep, consoleCookieOptions(request));
    return reply.redirect('/admin/signin?signed_out=1', 303);
  });

  // The step-up: a fresh code before a destructive change (console-auth.ts stepUpNeeded sends here).
  const guard = requireOperator(ctx);
  const showConfirm = async (request: FastifyRequest, reply: FastifyReply, returnTo: string, extra: { status?: number; error?: string } = {}) => {
    const { sub } = operatorOf(request).session;
    const codes = await acceptsCodes(ctx.db, sub);
    const passkey = await passkeyOffer(ctx, request, 'confirm', sub, { return: returnTo });
    return render(request, reply, 'confirm', { status: extra.status ?? 200, title: (c) => c.confirmTitle, operator: operatorOf(request).label, error: extra.error, data: () => ({ returnTo, codes, passkey }) });
  };

  app.get('/admin/confirm', { preHandler: guard }, async (request, reply) => showConfirm(request, reply, consolePath(field(request.query, 'return')) ?? '/admin'));

  app.post('/admin/confirm', { preHandler: [app.csrfProtection, guard] }, async (request, reply) => {
    const { session } = operatorOf(request);
    const returnTo = consolePath(field(request.body, 'return')) ?? '/admin';
    const words = messages(consoleLocale(request));
    const code = field(request.body, 'code').trim().slice(0, 40);
    const result = code ? await checkCode(steps, session.sub, code, request.ip) : ({ outcome: 'wrong' } as const);
    if (result.outcome !== 'accepted') {
      await recordAuditSafely(ctx.db, ctx.clock, { type: 'mfa.failed', sub: session.sub, ip: request.ip, outcome: result.outcome === 'throttled' ? 'refused' : 'failure', detail: { stage: 'step_up' } }, request.log);
      return showConfirm(request, reply, returnTo, { status: result.outcome === 'throttled' ? 429 : 401, error: words.twoStep.wrongCode });
    }
    await markConsoleChecked(ctx.db, ctx.clock, session);
    return reply.redirect(`${returnTo}${returnTo.includes('?') ? '&' : '?'}notice=confirmed`, 303);
  });
}
