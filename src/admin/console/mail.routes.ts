// The e-mail outbox (issue 36): account e-mails and e-mail notifications, newest first, by state —
// queued, sent, failed, not sent (suppressed), retried — with their attempts and last reason. Never a
// message's text or link. "E-mails pending" on the overview leads here.
import type { FastifyInstance } from 'fastify';
import { field } from '../../web/pages/forms.ts';
import { OUTBOX_STATES, outboxCounts, outboxPage, type OutboxView } from '../mail-outbox.ts';
import { operatorOf, requireOperator, type ConsoleContext } from './console-auth.ts';
import { consoleLocale, consoleMessages, renderConsole } from './render.ts';

const VIEWS = [...OUTBOX_STATES, 'retried'] as const;

export async function consoleMailRoutes(app: FastifyInstance, { ctx }: { ctx: ConsoleContext }): Promise<void> {
  app.get('/admin/mail', { preHandler: requireOperator(ctx) }, async (request, reply) => {
    const statusValue = field(request.query, 'status');
    const view: OutboxView = VIEWS.find((v) => v === statusValue);
    const beforeText = field(request.query, 'before');
    const before = /^\d{1,15}$/.test(beforeText) ? Number(beforeText) : undefined;
    const { lines, nextBefore } = await outboxPage(ctx.db, view, before);
    const counts = await outboxCounts(ctx.db);
    const c = consoleMessages(consoleLocale(request));
    const base = view ? `/admin/mail?status=${view}` : '/admin/mail';
    return renderConsole(
      request,
      reply,
      'mail',
      {
        title: () => c.mail.title,
        operator: operatorOf(request).label,
        nav: 'mail',
        data: () => ({
          views: VIEWS,
          view: view ?? '',
          counts,
          lines,
          olderHref: nextBefore === undefined ? undefined : `${base}${view ? '&' : '?'}before=${nextBefore}`,
          newestHref: before === undefined ? undefined : base,
        }),
      },
      ctx.productName,
    );
  });
}
