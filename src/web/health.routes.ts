// /healthz: the process is up. /readyz: database reachable and migrated (503 otherwise).
import type { FastifyInstance } from 'fastify';
import { isMigrated, ping, type Db } from '../db/database.ts';

export type ReadinessCheck = { name: string; check(): Promise<void> };

export async function healthRoutes(app: FastifyInstance, { db, checks = [] }: { db: Db; checks?: ReadinessCheck[] }): Promise<void> {
  app.get('/healthz', async () => ({ status: 'ok' }));

  app.get('/readyz', async (request, reply) => {
    const failures: Record<string, string> = {};
    try {
      await ping(db);
      if (!(await isMigrated(db))) failures.database = 'migrations pending: run `signet migrate`';
    } catch (error) {
      request.log.warn({ err: error }, 'readiness: database unreachable');
      failures.database = 'unreachable';
    }
    for (const { name, check } of checks) {
      try {
        await check();
      } catch (error) {
        request.log.warn({ err: error }, `readiness: ${name} unreachable`);
        failures[name] = 'unreachable';
      }
    }
    if (Object.keys(failures).length > 0) return reply.code(503).send({ status: 'unavailable', failures });
    return { status: 'ready' };
  });
}
