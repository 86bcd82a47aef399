// Tasks: the queue by kind and state, failed tasks with their reason, a task's record (never its
// files' contents: names and sizes only), Cancel; every worker with its heartbeat (issue 36: idle ones
// too) — where it runs, what it takes, when it was last seen and which tasks it runs now.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TaskKind, TaskStatus } from '../../db/schema.ts';
import { MINUTE } from '../../config/clock.ts';
import { field } from '../../web/pages/forms.ts';
import { listWorkers } from '../../worker/heartbeats.ts';
import * as changes from '../operator-changes.ts';
import { operatorOf, requireOperator, type ConsoleContext } from './console-auth.ts';
import { consoleLocale, consoleMessages, renderConsole } from './render.ts';

const KINDS: TaskKind[] = ['translate', 'docparse'];
const STATES: TaskStatus[] = ['queued', 'running', 'finished', 'failed', 'cancelled'];

export async function consoleTaskRoutes(app: FastifyInstance, { ctx }: { ctx: ConsoleContext }): Promise<void> {
  const guard = requireOperator(ctx);
  // Loaded at the first request: the tasks domain imports the document engines.
  const tasks = () => import('../../tasks/tasks.ts');
  const wordsOf = (request: FastifyRequest) => consoleMessages(consoleLocale(request));

  app.get('/admin/tasks', { preHandler: guard }, async (request, reply) => {
    const { listAnyTasks, queueSummary, runningTasksByWorker, TaskError } = await tasks();
    const kindValue = field(request.query, 'kind');
    const statusValue = field(request.query, 'status');
    const kind = KINDS.find((k) => k === kindValue);
    const status = STATES.find((s) => s === statusValue);
    const cursor = field(request.query, 'cursor') || undefined;
    const page = await listAnyTasks(ctx.db, { kind, status }, { cursor, limit: 25 }).catch((error: unknown) => {
      if (error instanceof TaskError) return listAnyTasks(ctx.db, { kind, status }, { limit: 25 });
      throw error;
    });
    const summary = await queueSummary(ctx.db);
    const running = await runningTasksByWorker(ctx.db);
    const workers = await listWorkers(ctx.db, ctx.clock);
    const now = ctx.clock();
    const c = wordsOf(request);
    const base = new URLSearchParams({ ...(kind ? { kind } : {}), ...(status ? { status } : {}) });
    return renderConsole(
      request,
      reply,
      'tasks',
      {
        title: () => c.tasks.title,
        operator: operatorOf(request).label,
        nav: 'tasks',
        notice: field(request.query, 'notice') === 'cancelled' ? c.tasks.cancelled : undefined,
        data: () => ({
          kinds: KINDS,
          states: STATES,
          kind: kind ?? '',
          status: status ?? '',
          counts: summary.counts,
          workers: workers.map((w) => ({ ...w, ago: c.ago(Math.floor((now - w.lastSeenAt) / MINUTE)), running: running.get(w.id) ?? [] })),
          tasks: page.tasks,
          nextHref: page.next_cursor ? `/admin/tasks?${new URLSearchParams({ ...Object.fromEntries(base), cursor: page.next_cursor }).toString()}` : undefined,
          firstHref: cursor ? `/admin/tasks?${base.toString()}` : undefined,
        }),
      },
      ctx.productName,
    );
  });

  app.get<{ Params: { id: string } }>('/admin/tasks/:id', { preHandler: guard }, async (request, reply) => {
    const task = await (await tasks()).findAnyTask(ctx.db, request.params.id);
    const c = wordsOf(request);
    if (!task) return renderConsole(request, reply, 'message', { status: 404, title: () => c.tasks.title, operator: operatorOf(request).label, nav: 'tasks', data: () => ({ message: c.errors.notFound, failed: true }) }, ctx.productName);
    return renderConsole(request, reply, 'task', { title: () => `${c.tasks.record}: ${task.source.name}`, operator: operatorOf(request).label, nav: 'tasks', data: () => ({ task }) }, ctx.productName);
  });

  app.post<{ Params: { id: string } }>('/admin/tasks/:id/cancel', { preHandler: [app.csrfProtection, guard] }, async (request, reply) => {
    const { TaskError } = await tasks();
    try {
      await changes.cancelTaskAsOperator(operatorOf(request).op, request.params.id);
    } catch (error) {
      if (!(error instanceof TaskError)) throw error;
      const c = wordsOf(request);
      return renderConsole(request, reply, 'message', { status: error.status, title: () => c.tasks.title, operator: operatorOf(request).label, nav: 'tasks', data: () => ({ message: error.message, failed: true }) }, ctx.productName);
    }
    return reply.redirect('/admin/tasks?notice=cancelled', 303);
  });
}
