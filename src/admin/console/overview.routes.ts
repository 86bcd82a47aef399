// The console's overview: spec (issue 27) "accounts, active sessions, sign-ins and failed sign-ins in
// the last 24 hours, tokens issued, tasks queued / running / failed, oldest queued task's age, workers
// seen in the last minute, e-mails pending — each linking to its list".
import type { FastifyInstance } from 'fastify';
import { countAccounts, countLiveSessions } from '../../accounts/account-admin.ts';
import { lockedAccounts } from '../../accounts/throttle.ts';
import { countAuditEventsSince } from '../../audit/audit.ts';
import { DAY, MINUTE } from '../../config/clock.ts';
import { tokenGrantsByGrantSince, tokenGrantsSince } from '../../oauth/token-stats.ts';
import { queueSummary } from '../../tasks/tasks.ts';
import { countLiveWorkers } from '../../worker/heartbeats.ts';
import { outboxCounts } from '../mail-outbox.ts';
import { operatorOf, requireOperator, type ConsoleContext } from './console-auth.ts';
import { renderConsole } from './render.ts';

export type OverviewTile = { label: string; value: string; href: string };

export async function consoleOverviewRoutes(app: FastifyInstance, { ctx }: { ctx: ConsoleContext }): Promise<void> {
  app.get('/admin', { preHandler: requireOperator(ctx) }, async (request, reply) => {
    const now = ctx.clock();
    const since = now - DAY;
    const signins = await countAuditEventsSince(ctx.db, ['signin.succeeded', 'signin.failed', 'signin.locked'], since);
    const queue = await queueSummary(ctx.db);
    const numbers = {
      accounts: await countAccounts(ctx.db),
      sessions: await countLiveSessions(ctx.db, ctx.clock),
      signins: signins.get('signin.succeeded') ?? 0,
      failed: (signins.get('signin.failed') ?? 0) + (signins.get('signin.locked') ?? 0),
      tokens: await tokenGrantsSince(ctx.db, since),
      byGrant: await tokenGrantsByGrantSince(ctx.db, since),
      locked: (await lockedAccounts(ctx.db, ctx.clock)).length,
      mail: (await outboxCounts(ctx.db)).pending,
      workers: await countLiveWorkers(ctx.db, ctx.clock),
    };
    const since24h = new Date(since).toISOString().slice(0, 16);
    return renderConsole(
      request,
      reply,
      'overview',
      {
        title: (c) => c.nav.overview,
        operator: operatorOf(request).label,
        nav: 'overview',
        data: (c) => ({
          tiles: [
            { label: c.overview.accounts, value: String(numbers.accounts), href: '/admin/people' },
            { label: c.overview.sessions, value: String(numbers.sessions), href: '/admin/people' },
            { label: c.overview.signins, value: String(numbers.signins), href: `/admin/audit?type=signin.succeeded&from=${since24h}` },
            { label: c.overview.failed, value: String(numbers.failed), href: `/admin/audit?type=signin.failed&from=${since24h}` },
            { label: c.overview.locked, value: String(numbers.locked), href: '/admin/people?locked=1' },
            { label: c.overview.tokens, value: String(numbers.tokens), href: '/admin/applications' },
            // issue 43: shown once an application uses them — service tokens and device sign-ins among the grants
            ...(numbers.byGrant.client_credentials > 0 ? [{ label: c.overview.serviceTokens, value: String(numbers.byGrant.client_credentials), href: `/admin/audit?type=token.client_credentials&from=${since24h}` }] : []),
            ...(numbers.byGrant.device_code > 0 ? [{ label: c.overview.deviceSignins, value: String(numbers.byGrant.device_code), href: `/admin/audit?type=device.approved&from=${since24h}` }] : []),
            { label: c.overview.queued, value: String(queue.counts.queued), href: '/admin/tasks?status=queued' },
            { label: c.overview.running, value: String(queue.counts.running), href: '/admin/tasks?status=running' },
            { label: c.overview.failedTasks, value: String(queue.counts.failed), href: '/admin/tasks?status=failed' },
            { label: c.overview.oldest, value: queue.oldestQueuedAt === undefined ? c.none : c.age(Math.floor((now - queue.oldestQueuedAt) / MINUTE)), href: '/admin/tasks?status=queued' },
            { label: c.overview.workers, value: String(numbers.workers), href: '/admin/tasks#workers' },
            { label: c.overview.mail, value: String(numbers.mail), href: '/admin/mail?status=pending' },
          ] satisfies OverviewTile[],
        }),
      },
      ctx.productName,
    );
  });
}
