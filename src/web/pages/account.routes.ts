// /account: the applications a person authorized, each with a Withdraw button.
import type { FastifyPluginAsync } from 'fastify';
import { findClient } from '../../clients/clients.ts';
import type { Clock } from '../../config/clock.ts';
import { listAuthorizedApplications, withdrawApplication } from '../../consent/grants.ts';
import type { Db } from '../../db/database.ts';
import { field } from './forms.ts';
import { formatDate, localeOf, renderPage } from './view.ts';

export const accountRoutes: FastifyPluginAsync<{ db: Db; clock: Clock }> = async (app, { db, clock }) => {
  app.get('/account', async (request, reply) => {
    const session = await request.currentSession();
    if (!session) return reply.redirect('/signin?return=%2Faccount', 302);
    const locale = localeOf(request);
    const apps = (await listAuthorizedApplications(db, session.sub)).map((a) => ({
      clientId: a.clientId,
      name: a.name,
      scope: a.scope.join(' '),
      firstAuthorized: formatDate(locale, a.firstAuthorizedAt),
      firstAuthorizedIso: new Date(a.firstAuthorizedAt).toISOString(),
    }));
    const withdrawnId = field(request.query, 'withdrawn');
    const withdrawn = withdrawnId ? await findClient(db, withdrawnId) : undefined;
    return renderPage(db, request, reply, 'account', (t) => t.accountTitle, (t) => ({ apps, notice: withdrawn ? t.withdrawn(withdrawn.name) : undefined }));
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
};
