// /admin/v1/audit-events: the audit trail, newest first.
import type { FastifyInstance } from 'fastify';
import { listAuditEvents } from '../audit/audit.ts';
import type { AdminContext } from './operator-auth.ts';
import { auditPage, auditQuery, errorResponses } from './schemas.ts';

type Query = { sub?: string; client_id?: string; type?: string; cursor?: string; limit?: string };

export async function auditEventRoutes(app: FastifyInstance, { ctx }: { ctx: AdminContext }): Promise<void> {
  app.get<{ Querystring: Query }>(
    '/admin/v1/audit-events',
    {
      schema: {
        tags: ['audit'],
        summary: 'Audit events, newest first, filtered by account, application and type',
        querystring: auditQuery,
        response: { 200: auditPage, ...errorResponses },
      },
    },
    async (request) => {
      const q = request.query;
      return listAuditEvents(ctx.db, { sub: q.sub, clientId: q.client_id, type: q.type }, { cursor: q.cursor, limit: q.limit === undefined ? undefined : Number(q.limit) });
    },
  );
}
