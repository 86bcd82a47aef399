// POST /admin/v1/import and GET /admin/v1/export (issue 35): the file as the request body, read as it
// arrives (never held whole), and the export streamed as JSON Lines. The same operator functions as
// `signet import` and `signet export` (operator-changes.ts), audited alike.
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { IMPORT_FORMATS, ImportFileError, type ImportFormat } from '../portability/records.ts';
import { operatorOf, type AdminContext } from './operator-auth.ts';
import { exportAsOperator, importAsOperator } from './operator-changes.ts';
import { errorResponses, ref } from './schemas.ts';

/** The largest file an import takes through the API (a Keycloak realm of about a million people). */
export const MAX_IMPORT_BYTES = 1024 * 1024 * 1024;

const importQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    format: { type: 'string', enum: [...IMPORT_FORMATS], description: 'what the file is; without it, detected (Signet export, Keycloak realm, Auth0 array, else CSV)' },
    dry_run: { type: 'string', enum: ['true', 'false'], description: 'true: check and count everything, write nothing' },
  },
} as const;

const importSummary = {
  type: 'object',
  required: ['created', 'updated', 'skipped', 'errors'],
  properties: {
    created: { type: 'integer' },
    updated: { type: 'integer' },
    skipped: { type: 'integer', description: 'records that are not people (Keycloak service accounts) or of a type this version does not read' },
    errors: {
      type: 'array',
      description: 'each refused record with its line in the file; nothing of it was written',
      items: { type: 'object', required: ['line', 'reason'], properties: { line: { type: 'integer' }, reason: { type: 'string' } } },
    },
  },
} as const;

const exportQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { include_secrets: { type: 'string', enum: ['true', 'false'], description: 'true: password hashes and application secret hashes too' } },
} as const;

/** The body as it arrives, refused past MAX_IMPORT_BYTES. */
async function* limited(body: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  let bytes = 0;
  for await (const chunk of body) {
    bytes += chunk.length;
    if (bytes > MAX_IMPORT_BYTES) throw new ImportFileError(`the file is larger than ${MAX_IMPORT_BYTES / 1024 / 1024} MiB; import it with \`signet import\` on the server`);
    yield chunk;
  }
}

const bodies = new WeakMap<FastifyRequest, Readable>();

export async function portabilityRoutes(app: FastifyInstance, { ctx: _ctx }: { ctx: AdminContext }): Promise<void> {
  // The file is read by the import as it arrives: every content type passes through unparsed.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (request, payload, done) => {
    bodies.set(request, payload as Readable);
    done(null, undefined);
  });

  app.post<{ Querystring: { format?: ImportFormat; dry_run?: 'true' | 'false' } }>(
    '/admin/v1/import',
    {
      schema: {
        tags: ['portability'],
        summary: 'Create or update accounts (and, from a Signet export, applications) from a file sent as the body',
        description:
          'The body is the file: a Signet export (JSON Lines), a Keycloak realm export, an Auth0 bulk-import array, or CSV with a header (email,phone,name,email_verified,password_hash). Foreign password hashes are kept and checked at the next sign-in. Audited as one accounts.imported event.',
        querystring: importQuery,
        response: { 200: importSummary, ...errorResponses },
      },
    },
    async (request) => {
      const body = bodies.get(request);
      if (!body) throw new ImportFileError('send the file as the request body');
      const { summary } = await importAsOperator(operatorOf(request), limited(body), { format: request.query.format, dryRun: request.query.dry_run === 'true' });
      return summary;
    },
  );

  app.get<{ Querystring: { include_secrets?: 'true' | 'false' } }>(
    '/admin/v1/export',
    {
      schema: {
        tags: ['portability'],
        summary: 'Every account, application and upstream provider as JSON Lines, streamed (what `signet export` writes)',
        querystring: exportQuery,
        response: { 200: { description: 'one record a line, each with its "type"; the first line says what the file is', content: { 'application/x-ndjson': { schema: { type: 'string' } } } }, ...errorResponses },
      },
    },
    async (request, reply) => {
      const lines = await exportAsOperator(operatorOf(request), { includeSecrets: request.query.include_secrets === 'true' });
      return reply.type('application/x-ndjson; charset=utf-8').header('content-disposition', 'attachment; filename="signet-export.jsonl"').send(Readable.from(lines));
    },
  );
}
