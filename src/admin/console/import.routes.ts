// The console's import page (issue 35): choose a file and a format, start, and watch a progress bar
// while the server reads it; the same operator function as `signet import` and POST /admin/v1/import,
// audited with the operator's sub. The answer to the upload is JSON Lines — progress as each batch
// lands ({"progress":{"records","bytes"}}), then {"summary":{…}} or {"error":"…"} — read by import.js.
import { PassThrough } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { AccountError } from '../../accounts/accounts.ts';
import { ClientError } from '../../clients/clients.ts';
import { ImportFileError, isImportFormat } from '../../portability/records.ts';
import * as changes from '../operator-changes.ts';
import { MAX_IMPORT_BYTES } from '../portability.routes.ts';
import { operatorOf, requireOperator, type ConsoleContext } from './console-auth.ts';
import { consoleLocale, consoleMessages, renderConsole } from './render.ts';

/** A multipart field's value (fields before the file part arrive with it). */
function fieldValue(fields: Record<string, unknown>, name: string): string | undefined {
  const field = fields[name];
  const value = typeof field === 'object' && field !== null && 'value' in field ? (field as { value: unknown }).value : undefined;
  return typeof value === 'string' ? value : undefined;
}

export async function consoleImportRoutes(app: FastifyInstance, { ctx }: { ctx: ConsoleContext }): Promise<void> {
  const guard = requireOperator(ctx);
  const { default: multipart } = await import('@fastify/multipart');
  await app.register(multipart, { limits: { files: 1, fields: 5, fileSize: MAX_IMPORT_BYTES, fieldSize: 100 } });

  app.get('/admin/import', { preHandler: guard }, (request, reply) => {
    const c = consoleMessages(consoleLocale(request));
    return renderConsole(request, reply, 'import', { title: () => c.importPage.title, operator: operatorOf(request).label, nav: 'import' }, ctx.productName);
  });

  // The CSRF token comes as the x-csrf-token header (import.js sends it): a multipart body is read as a stream, after the checks.
  app.post('/admin/import', { preHandler: [app.csrfProtection, guard] }, async (request, reply) => {
    const line = (value: unknown) => JSON.stringify(value) + '\n';
    if (!request.isMultipart()) return reply.code(415).type('application/x-ndjson').send(line({ error: 'send the file as multipart/form-data with a field named file' }));
    const part = await request.file();
    if (!part) return reply.code(400).type('application/x-ndjson').send(line({ error: 'no file was sent' }));
    const format = fieldValue(part.fields, 'format') || undefined;
    if (format !== undefined && !isImportFormat(format)) return reply.code(400).type('application/x-ndjson').send(line({ error: `unknown format ${JSON.stringify(format.slice(0, 20))}` }));
    const dryRun = fieldValue(part.fields, 'dry_run') === 'true';
    const out = new PassThrough();
    void reply.code(200).type('application/x-ndjson; charset=utf-8').header('cache-control', 'no-store').send(out);
    changes
      .importAsOperator(operatorOf(request).op, part.file, { format, dryRun, onProgress: (progress) => out.write(line({ progress })) })
      .then(
        ({ summary }) => {
          if (part.file.truncated) out.end(line({ error: `the file is larger than ${MAX_IMPORT_BYTES / 1024 / 1024} MiB; the records before the cut were imported; import the rest with \`signet import\`` }));
          else out.end(line({ summary }));
        },
        (error: unknown) => {
          const known = error instanceof ImportFileError || error instanceof AccountError || error instanceof ClientError;
          if (!known) request.log.error({ err: error }, 'console import failed');
          out.end(line({ error: known ? error.message : 'the import stopped on a server error; the log has the details. Records before it were imported; importing the file again updates them.' }));
        },
      );
    return reply;
  });
}
