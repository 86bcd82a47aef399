// Audit: the event list with filters Type (exact or a family such as account.*), Person, Application,
// From, To; paging; each event's detail; Export of the filtered list as JSON Lines or CSV.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AuditQueryError, findAuditEvent, listAuditEvents, type AuditEventView, type AuditFilter } from '../../audit/audit.ts';
import { field } from '../../web/pages/forms.ts';
import { operatorOf, requireOperator, type ConsoleContext } from './console-auth.ts';
import { consoleLocale, consoleMessages, renderConsole } from './render.ts';

/** An export holds at most this many events (newest first); narrow the filter for more. */
export const EXPORT_LIMIT = 50_000;

/** "2026-11-27" or "2026-11-27T06:30" (UTC) → epoch ms; "" → undefined; anything else → null. */
export function parseWhen(value: string, endOfDay: boolean): number | undefined | null {
  if (!value) return undefined;
  const m = /^(\d{4}-\d\d-\d\d)(?:[T ](\d\d:\d\d)(?::\d\d)?)?Z?$/.exec(value.trim());
  if (!m) return null;
  const at = Date.parse(`${m[1]}T${m[2] ?? '00:00'}:00Z`);
  if (Number.isNaN(at)) return null;
  return m[2] === undefined && endOfDay ? at + 24 * 3600_000 : at;
}

type Filters = { type: string; sub: string; clientId: string; from: string; to: string };

function filtersOf(request: FastifyRequest): Filters {
  const q = request.query;
  return { type: field(q, 'type').trim().slice(0, 60), sub: field(q, 'sub').trim().slice(0, 200), clientId: field(q, 'client_id').trim().slice(0, 200), from: field(q, 'from').trim().slice(0, 30), to: field(q, 'to').trim().slice(0, 30) };
}

function auditFilter(f: Filters): AuditFilter | undefined {
  const from = parseWhen(f.from, false);
  const to = parseWhen(f.to, true);
  if (from === null || to === null) return undefined;
  return { type: f.type || undefined, sub: f.sub || undefined, clientId: f.clientId || undefined, from, to };
}

function queryString(f: Filters, extra: Record<string, string> = {}): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries({ type: f.type, sub: f.sub, client_id: f.clientId, from: f.from, to: f.to, ...extra })) if (value) params.set(key, value);
  return params.toString();
}

const CSV_COLUMNS = ['id', 'type', 'at', 'sub', 'client_id', 'ip', 'outcome', 'actor', 'detail'] as const;

/** RFC 4180 quoting; a cell that a spreadsheet would run as a formula is prefixed with ' (OWASP CSV injection). */
export function csvCell(value: unknown): string {
  let text = value === null || value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value);
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export function csvLine(event: AuditEventView): string {
  return CSV_COLUMNS.map((column) => csvCell(event[column])).join(',');
}

export async function consoleAuditRoutes(app: FastifyInstance, { ctx }: { ctx: ConsoleContext }): Promise<void> {
  const guard = requireOperator(ctx);

  app.get('/admin/audit', { preHandler: guard }, async (request, reply) => {
    const f = filtersOf(request);
    const c = consoleMessages(consoleLocale(request));
    const filter = auditFilter(f);
    let events: AuditEventView[] = [];
    let next: string | null = null;
    let error: string | undefined;
    if (!filter) error = c.audit.badDate;
    else {
      try {
        const page = await listAuditEvents(ctx.db, filter, { cursor: field(request.query, 'cursor') || undefined, limit: 50 });
        events = page.events;
        next = page.next_cursor;
      } catch (e) {
        if (!(e instanceof AuditQueryError)) throw e;
        error = e.message;
      }
    }
    return renderConsole(
      request,
      reply,
      'audit',
      {
        status: error ? 400 : 200,
        title: () => c.audit.title,
        operator: operatorOf(request).label,
        nav: 'audit',
        error,
        data: () => ({ f, events, nextHref: next ? `/admin/audit?${queryString(f, { cursor: next })}` : undefined, firstHref: field(request.query, 'cursor') ? `/admin/audit?${queryString(f)}` : undefined, exportQuery: queryString(f) }),
      },
      ctx.productName,
    );
  });

  app.get('/admin/audit/export', { preHandler: guard }, async (request, reply) => {
    const filter = auditFilter(filtersOf(request));
    if (!filter) return reply.code(400).type('text/plain; charset=utf-8').send(consoleMessages(consoleLocale(request)).audit.badDate);
    const csv = field(request.query, 'format') === 'csv';
    const out: string[] = csv ? [CSV_COLUMNS.join(',')] : [];
    let cursor: string | undefined;
    let count = 0;
    do {
      const page = await listAuditEvents(ctx.db, filter, { cursor, limit: 500 });
      for (const event of page.events) out.push(csv ? csvLine(event) : JSON.stringify(event));
      count += page.events.length;
      cursor = page.next_cursor ?? undefined;
    } while (cursor && count < EXPORT_LIMIT);
    const stamp = new Date(ctx.clock()).toISOString().slice(0, 19).replaceAll(':', '');
    return reply
      .header('cache-control', 'no-store')
      .header('content-disposition', `attachment; filename="signet-audit-${stamp}.${csv ? 'csv' : 'jsonl'}"`)
      .type(csv ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8')
      .send(out.length === 0 ? '' : `${out.join('\n')}\n`);
  });

  app.get<{ Params: { id: string } }>('/admin/audit/:id', { preHandler: guard }, async (request, reply) => {
    const event = await findAuditEvent(ctx.db, request.params.id);
    const c = consoleMessages(consoleLocale(request));
    if (!event) return renderConsole(request, reply, 'message', { status: 404, title: () => c.audit.title, operator: operatorOf(request).label, nav: 'audit', data: () => ({ message: c.errors.notFound, failed: true }) }, ctx.productName);
    return renderConsole(request, reply, 'event', { title: () => c.audit.event(event.id), operator: operatorOf(request).label, nav: 'audit', data: () => ({ event, detail: event.detail ? JSON.stringify(event.detail, null, 2) : '' }) }, ctx.productName);
  });
}
