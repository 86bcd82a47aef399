// /account: the applications a person authorized, each with Withdraw and Mute (or Unmute), and the
// notification preferences per category × channel (push shown, disabled: not available).
import type { FastifyPluginAsync } from 'fastify';
import { findClient } from '../../clients/clients.ts';
import type { Clock } from '../../config/clock.ts';
import { listAuthorizedApplications, withdrawApplication } from '../../consent/grants.ts';
import type { Db } from '../../db/database.ts';
import { AVAILABLE_CHANNELS, CATEGORIES, CHANNELS } from '../../notifications/categories.ts';
import { getPreferences, setApplicationMuted, updatePreferences, type Preferences } from '../../notifications/preferences.ts';
import type { Messages } from '../i18n/en.ts';
import { field, fields } from './forms.ts';
import { formatDate, localeOf, renderPage } from './view.ts';

/** What the page says after a form came back: which form, and the application it named. */
const NOTICES = ['withdrawn', 'muted', 'unmuted'] as const;

/** The preference grid: a row per category, a column per channel; push channels shown but disabled. */
function preferenceGrid(t: Messages, preferences: Preferences) {
  return {
    channels: CHANNELS.map((channel) => ({ channel, name: t.notificationChannel[channel], available: AVAILABLE_CHANNELS.includes(channel) })),
    rows: CATEGORIES.map((category) => ({
      category,
      name: t.notificationCategory[category],
      cells: CHANNELS.map((channel) => ({ channel, value: `${category}:${channel}`, checked: preferences.categories[category][channel], available: AVAILABLE_CHANNELS.includes(channel) })),
    })),
  };
}

export const accountRoutes: FastifyPluginAsync<{ db: Db; clock: Clock }> = async (app, { db, clock }) => {
  app.get('/account', async (request, reply) => {
    const session = await request.currentSession();
    if (!session) return reply.redirect('/signin?return=%2Faccount', 302);
    const locale = localeOf(request);
    const preferences = await getPreferences(db, session.sub);
    const apps = (await listAuthorizedApplications(db, session.sub)).map((a) => ({
      clientId: a.clientId,
      name: a.name,
      scope: a.scope.join(' '),
      firstAuthorized: formatDate(locale, a.firstAuthorizedAt),
      firstAuthorizedIso: new Date(a.firstAuthorizedAt).toISOString(),
      muted: preferences.muted_clients.includes(a.clientId),
    }));
    const kind = NOTICES.find((k) => field(request.query, k) !== '');
    const named = kind ? await findClient(db, field(request.query, kind)) : undefined;
    const notice = (t: Messages): string | undefined => {
      if (kind && named) return t[kind](named.name);
      return field(request.query, 'saved') === 'notifications' ? t.preferencesSaved : undefined;
    };
    return renderPage(db, request, reply, 'account', (t) => t.accountTitle, (t) => ({ apps, grid: preferenceGrid(t, preferences), notice: notice(t) }));
  });

  // spec: "the user withdraws the application in account settings" → grant deleted, every token revoked.
  app.post('/account/withdraw', { preHandler: app.csrfProtection }, async (request, reply) => {
    const session = await request.currentSession();
    if (!session) return reply.redirect('/signin?return=%2Faccount', 303);
    const clientId = field(request.body, 'client_id');
    if (clientId) await withdrawApplication(db, clock, session.sub, clientId);
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
};
