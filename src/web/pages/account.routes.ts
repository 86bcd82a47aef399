// /account: the profile (display name, picture, e-mail verification), the password, the sessions, the
// applications a person authorized — each with Withdraw (after a confirmation) and Mute (or Unmute) —
// and the notification preferences per category × channel (push shown, disabled: not available).
// The profile and password forms are in account-profile.routes.ts and account-security.routes.ts.
import type { FastifyPluginAsync } from 'fastify';
import { findAccount } from '../../accounts/accounts.ts';
import { recordAudit } from '../../audit/audit.ts';
import type { AccountLinkContext } from '../../accounts/account-tokens.ts';
import { findClient } from '../../clients/clients.ts';
import { findProvider } from '../../accounts/upstream/providers.ts';
import { withdrawApplication } from '../../consent/grants.ts';
import { AVAILABLE_CHANNELS, CATEGORIES } from '../../notifications/categories.ts';
import { setApplicationMuted, updatePreferences } from '../../notifications/preferences.ts';
import type { Messages } from '../i18n/en.ts';
import { accountProfileRoutes } from './account-profile.routes.ts';
import { accountSecurityRoutes } from './account-security.routes.ts';
import { accountApiKeyRoutes } from './account-api-keys.routes.ts';
import { showAccount, type AccountPageContext } from './account-page.ts';
import { field, fields } from './forms.ts';

/** What the page says after a form came back: which form, and the application it named. */
const NOTICES = ['withdrawn', 'muted', 'unmuted'] as const;

/** Notices named by `?saved=`, `?ended=` and `?verification=` after a redirect. */
const SIMPLE_NOTICES: Record<string, (t: Messages) => string> = {
  'saved=notifications': (t) => t.preferencesSaved,
  'saved=profile': (t) => t.profile.saved,
  'saved=password': (t) => t.password.changed,
  'ended=session': (t) => t.sessions.ended,
  'saved=passkey': (t) => t.passkeys.addedNotice,
  'saved=passkey_removed': (t) => t.passkeys.removedNotice,
  'saved=two-step-off': (t) => t.twoStep.turnedOff,
};

export const accountRoutes: FastifyPluginAsync<{ ctx: AccountPageContext; links: AccountLinkContext }> = async (app, { ctx, links }) => {
  const { db, clock } = ctx;

  app.get('/account', async (request, reply) => {
    const session = await request.currentSession();
    if (!session) return reply.redirect('/signin?return=%2Faccount', 302);
    const kind = NOTICES.find((k) => field(request.query, k) !== '');
    const named = kind ? await findClient(db, field(request.query, kind)) : undefined;
    const simple = ['saved', 'ended'].map((k) => SIMPLE_NOTICES[`${k}=${field(request.query, k)}`]).find((n) => n !== undefined);
    const endedOthers = /^\d{1,6}$/.test(field(request.query, 'ended_others')) ? Number(field(request.query, 'ended_others')) : undefined;
    const verificationTo = field(request.query, 'verification') === 'sent' ? (await findAccount(db, session.sub))?.email : undefined;
    // issue 33: after linking or unlinking an upstream identity provider.
    const idpSlug = field(request.query, 'idp_linked') || field(request.query, 'idp_unlinked');
    const idpName = idpSlug ? ((await findProvider(db, idpSlug))?.name ?? idpSlug) : undefined;
    const notice = (t: Messages): string | undefined => {
      if (idpName !== undefined) return field(request.query, 'idp_linked') ? t.idp.linkedNotice(idpName) : t.idp.unlinkedNotice(idpName);
      if (kind && named) return t[kind](named.name);
      if (endedOthers !== undefined) return t.sessions.endedOthers(endedOthers);
      if (verificationTo) return t.profile.verificationSent(verificationTo);
      return simple?.(t);
    };
    return showAccount(ctx, request, reply, session.sub, { notice });
  });

  // spec: "the user withdraws the application in account settings" → grant deleted, every token revoked.
  // The page asks first (a popover with "Withdraw access" and "Keep access"); this is its form.
  app.post('/account/withdraw', { preHandler: app.csrfProtection }, async (request, reply) => {
    const session = await request.currentSession();
    if (!session) return reply.redirect('/signin?return=%2Faccount', 303);
    const clientId = field(request.body, 'client_id');
    if (clientId && (await withdrawApplication(db, clock, session.sub, clientId))) {
      await recordAudit(db, clock, { type: 'consent.withdrawn', sub: session.sub, clientId, ip: request.ip, outcome: 'success', detail: { revoked: 'user_client_tokens' } }, request.log);
    }
    request.log.info({ event: 'application_withdrawn' }, 'application withdrawn');
    return reply.redirect(`/account?withdrawn=${encodeURIComponent(clientId)}`, 303);
  });

  // spec: "can mute an authorized third-party application without revoking its access".
  for (const [path, muted] of [
    ['/account/mute', true],
    ['/account/unmute', false],
  ] as const) {
    app.post(path, { preHandler: app.csrfProtection }, async (request, reply) => {
      const session = await request.currentSession();
      if (!session) return reply.redirect('/signin?return=%2Faccount', 303);
      const clientId = field(request.body, 'client_id');
      const changed = clientId !== '' && (await setApplicationMuted(db, session.sub, clientId, muted));
      // Not authorized (or withdrawn meanwhile): nothing to mute; the page shows the current list.
      return reply.redirect(changed ? `/account?${muted ? 'muted' : 'unmuted'}=${encodeURIComponent(clientId)}#app-${encodeURIComponent(clientId)}` : '/account', 303);
    });
  }

  // The grid posts every ticked `category:channel`; an available channel not ticked is turned off.
  app.post('/account/notifications', { preHandler: app.csrfProtection }, async (request, reply) => {
    const session = await request.currentSession();
    if (!session) return reply.redirect('/signin?return=%2Faccount', 303);
    const ticked = new Set(fields(request.body, 'preference'));
    const categories = Object.fromEntries(CATEGORIES.map((category) => [category, Object.fromEntries(AVAILABLE_CHANNELS.map((channel) => [channel, ticked.has(`${category}:${channel}`)]))]));
    await updatePreferences(db, clock, session.sub, { categories });
    return reply.redirect('/account?saved=notifications#notifications-heading', 303);
  });

  await app.register(accountProfileRoutes, { ctx, links });
  await app.register(accountSecurityRoutes, { ctx });
  // issue 40: API keys for the document APIs (the keys are hashed with the same key as sessions).
  await app.register(accountApiKeyRoutes, { ctx: { ...ctx, hashKey: ctx.sessionKey } });
};
