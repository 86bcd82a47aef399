// People: search by e-mail, phone or sub; the people locked out now; a person's page (profile and
// verification, roles, second factors, sessions, granted applications, lock-outs) with Unlock, Reset
// second factors, End all sessions, Disable / Enable, Delete — each through operator-changes.ts.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { listAccountsPage, sessionPublicId } from '../../accounts/account-admin.ts';
import { findAccount, findAccountByEmail, findAccountByPhone, type Profile } from '../../accounts/accounts.ts';
import { listFactors } from '../../accounts/factors/factors.ts';
import { rolesOf } from '../../accounts/roles.ts';
import { listSessions } from '../../accounts/sessions.ts';
import { lockedAccounts, lockoutsOf } from '../../accounts/throttle.ts';
import { describeUserAgent } from '../../accounts/user-agent.ts';
import { listAuthorizedApplications } from '../../consent/grants.ts';
import { field } from '../../web/pages/forms.ts';
import * as changes from '../operator-changes.ts';
import { operatorOf, requireOperator, stepUpNeeded, type ConsoleContext } from './console-auth.ts';
import { consoleLocale, consoleMessages, renderConsole } from './render.ts';
import type { ConsoleMessages } from './i18n/en.ts';

/** One search box: an e-mail has an @, a phone number starts with + (or is digits), anything else is a sub. */
async function search(ctx: ConsoleContext, query: string): Promise<Profile[]> {
  const q = query.trim().slice(0, 320);
  if (!q) return [];
  const tries: Array<() => Promise<Profile | undefined>> = [() => findAccount(ctx.db, q)];
  if (q.includes('@')) tries.unshift(() => findAccountByEmail(ctx.db, q));
  if (/^\+?[0-9 ()-]{5,}$/.test(q)) tries.unshift(() => findAccountByPhone(ctx.db, q));
  for (const attempt of tries) {
    const found = await attempt().catch(() => undefined);
    if (found) return [found];
  }
  return [];
}

/** The notice a finished action leaves on the person's page (`?notice=…`). */
function personNotice(c: ConsoleMessages, request: FastifyRequest): string | undefined {
  const n = Number(field(request.query, 'n')) || 0;
  const notices: Record<string, string> = {
    confirmed: c.confirmed,
    unlocked: c.people.unlocked,
    factors_reset: c.people.factorsReset(n),
    sessions_ended: c.people.sessionsEnded(n),
    session_ended: c.people.sessionEnded,
    disabled: c.people.disabledDone,
    enabled: c.people.enabledDone,
    withdrawn: c.people.withdrawn,
    deleted: c.people.deleted,
    delete_mismatch: c.people.deleteMismatch,
  };
  return notices[field(request.query, 'notice')];
}

export async function consolePeopleRoutes(app: FastifyInstance, { ctx }: { ctx: ConsoleContext }): Promise<void> {
  const guard = requireOperator(ctx);
  const changing = { preHandler: [app.csrfProtection, guard] };

  app.get('/admin/people', { preHandler: guard }, async (request, reply) => {
    const q = field(request.query, 'q');
    const locked = field(request.query, 'locked') === '1';
    let people: Profile[];
    let nextCursor: string | null = null;
    if (q) people = await search(ctx, q);
    else if (locked) people = (await Promise.all((await lockedAccounts(ctx.db, ctx.clock)).map((sub) => findAccount(ctx.db, sub)))).filter((p): p is Profile => p !== undefined);
    else {
      const cursor = field(request.query, 'cursor') || undefined;
      const page = await listAccountsPage(ctx.db, { cursor, limit: 25 }).catch(() => listAccountsPage(ctx.db, { limit: 25 }));
      people = page.accounts;
      nextCursor = page.next_cursor;
    }
    const c = consoleMessages(consoleLocale(request));
    return renderConsole(
      request,
      reply,
      'people',
      { title: () => c.people.title, operator: operatorOf(request).label, nav: 'people', notice: personNotice(c, request), data: () => ({ q, locked, people, nextCursor, paged: !q && !locked && Boolean(field(request.query, 'cursor')) }) },
      ctx.productName,
    );
  });

  app.get<{ Params: { sub: string } }>('/admin/people/:sub', { preHandler: guard }, async (request, reply) => {
    const { sub } = request.params;
    const person = await findAccount(ctx.db, sub);
    const c = consoleMessages(consoleLocale(request));
    if (!person) return renderConsole(request, reply, 'message', { status: 404, title: () => c.people.title, operator: operatorOf(request).label, nav: 'people', data: () => ({ message: c.errors.notFound, failed: true }) }, ctx.productName);
    const { factors, recoveryCodesLeft } = await listFactors(ctx.db, sub);
    const sessions = (await listSessions(ctx.db, ctx.hashKey, ctx.clock, sub, undefined)).map((s) => ({
      signedInAt: s.signedInAt,
      expiresAt: s.expiresAt,
      ip: s.ip,
      // the id the admin API names the session by (never its stored hash)
      id: sessionPublicId(s.handle),
      device: [describeUserAgent(s.userAgent).browser, describeUserAgent(s.userAgent).system].filter(Boolean).join(' · '),
    }));
    const roles = await rolesOf(ctx.db, sub);
    const grants = await listAuthorizedApplications(ctx.db, sub);
    const lockouts = await lockoutsOf(ctx.db, ctx.clock, sub);
    return renderConsole(
      request,
      reply,
      'person',
      {
        title: () => person.email ?? person.phone_number ?? person.sub,
        operator: operatorOf(request).label,
        nav: 'people',
        notice: personNotice(c, request),
        data: () => ({
          person,
          roles,
          factors,
          recoveryCodesLeft,
          sessions,
          grants,
          lockouts,
          base: `/admin/people/${encodeURIComponent(sub)}`,
        }),
      },
      ctx.productName,
    );
  });

  type Action = { Params: { sub: string } };
  const back = (sub: string, notice: string, n?: number) => `/admin/people/${encodeURIComponent(sub)}?notice=${notice}${n === undefined ? '' : `&n=${n}`}`;
  const pagePath = (sub: string) => `/admin/people/${encodeURIComponent(sub)}`;

  app.post<Action>('/admin/people/:sub/unlock', changing, async (request, reply) => {
    await changes.unlockAccountAsOperator(operatorOf(request).op, request.params.sub);
    return reply.redirect(back(request.params.sub, 'unlocked'), 303);
  });

  app.post<Action>('/admin/people/:sub/reset-factors', changing, async (request, reply) => {
    if (stepUpNeeded(ctx, request, reply, pagePath(request.params.sub))) return reply;
    const reset = await changes.resetFactorsAsOperator(operatorOf(request).op, request.params.sub);
    return reply.redirect(back(request.params.sub, 'factors_reset', reset.factorsRemoved), 303);
  });

  app.post<Action>('/admin/people/:sub/end-sessions', changing, async (request, reply) => {
    const ended = await changes.endSessionsAsOperator(operatorOf(request).op, request.params.sub);
    return reply.redirect(back(request.params.sub, 'sessions_ended', ended), 303);
  });

  // issue 36: "End this session" — one session of the person; the others go on.
  app.post<{ Params: { sub: string; id: string } }>('/admin/people/:sub/sessions/:id/end', changing, async (request, reply) => {
    await changes.endSessionAsOperator(operatorOf(request).op, request.params.sub, request.params.id);
    return reply.redirect(back(request.params.sub, 'session_ended'), 303);
  });

  app.post<Action>('/admin/people/:sub/disable', changing, async (request, reply) => {
    if (stepUpNeeded(ctx, request, reply, pagePath(request.params.sub))) return reply;
    await changes.updateAccountAsOperator(operatorOf(request).op, request.params.sub, { disabled: true });
    return reply.redirect(back(request.params.sub, 'disabled'), 303);
  });

  app.post<Action>('/admin/people/:sub/enable', changing, async (request, reply) => {
    await changes.updateAccountAsOperator(operatorOf(request).op, request.params.sub, { disabled: false });
    return reply.redirect(back(request.params.sub, 'enabled'), 303);
  });

  app.post<Action & { Params: { clientId: string } }>('/admin/people/:sub/grants/:clientId/withdraw', changing, async (request, reply) => {
    await changes.withdrawGrantAsOperator(operatorOf(request).op, request.params.sub, request.params.clientId);
    return reply.redirect(back(request.params.sub, 'withdrawn'), 303);
  });

  app.post<Action>('/admin/people/:sub/delete', changing, async (request, reply) => {
    if (stepUpNeeded(ctx, request, reply, pagePath(request.params.sub))) return reply;
    const person = await findAccount(ctx.db, request.params.sub);
    const typed = field(request.body, 'confirm').trim();
    if (!person || (typed !== person.sub && typed !== (person.email ?? ''))) return reply.redirect(back(request.params.sub, 'delete_mismatch'), 303);
    await changes.deleteAccountAsOperator(operatorOf(request).op, person.sub);
    return reply.redirect('/admin/people?notice=deleted', 303);
  });
}
