// The admin API: its own Fastify instance on its own listener (SIGNET_ADMIN_ADDR, default
// 127.0.0.1:9465), never on the public port — as Hydra keeps its admin port apart. Built without
// listening, so tests use app.inject.
import Fastify, { type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyReply, type FastifySchemaValidationError } from 'fastify';
import swagger from '@fastify/swagger';
import type { Logger } from 'pino';
import type { Clock } from '../config/clock.ts';
import type { Keys } from '../config/keys.ts';
import type { Settings } from '../config/settings.ts';
import type { Db } from '../db/database.ts';
import type { ObjectStore } from '../storage/object-store.ts';
import { adminRoutes } from './admin.routes.ts';
import { adminErrorHandler } from './errors.ts';
import { sharedSchemas } from './schemas.ts';

export type AdminDeps = {
  db: Db;
  clock: Clock;
  keys: Pick<Keys, 'tokenHash' | 'cookie' | 'factorSecret' | 'deviceCookie' | 'upstreamSecret'>;
  /** SIGNET_BASE_URL (the upstream identity providers' redirect URIs); default http://localhost:8080 */
  baseUrl?: string | undefined;
  /** the operator's product name (SIGNET_PRODUCT_NAME), on the console's pages */
  productName?: string | undefined;
  /** the public site's host names (SIGNET_BASE_URL, SIGNET_ALT_BASE_URL): the console takes passkeys when opened under one of them */
  passkeyHosts?: readonly string[] | undefined;
  /** where task files live: deleting an account removes its tasks' files */
  objects: ObjectStore;
  logger: Logger;
  /** the client address of a request behind a proxy (recorded in audit events) */
  trustProxy: Settings['trustProxy'];
};

const BODY_LIMIT = 64 * 1024;

/** A validation error in words that name the field, e.g. `body has a field "nmae" this call does not take`. */
function describeSchemaError(error: FastifySchemaValidationError, dataVar: string): string {
  const where = `${dataVar}${error.instancePath.replaceAll('/', '.')}`;
  const extra = error.params['additionalProperty'];
  if (error.keyword === 'additionalProperties' && typeof extra === 'string') return `${where} has a field "${extra}" this call does not take (see /admin/v1/openapi.json)`;
  return `${where} ${error.message ?? 'is not valid'}`;
}

/**
 * Fastify's `frameworkErrors`: a URL it cannot route (a broken %-escape, a path segment longer than
 * maxParamLength) is answered before any hook runs — so here, in the admin API's shape and headers.
 */
function answerFrameworkError(error: FastifyError, _request: unknown, reply: FastifyReply): void {
  const status = error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 400;
  reply
    .code(status)
    .header('x-content-type-options', 'nosniff')
    .header('cache-control', 'no-store')
    .type('application/json; charset=utf-8')
    .send({ error: status === 414 ? 'uri_too_long' : 'bad_request', message: 'The address of this request is not valid (a broken %-escape, or a path segment over 200 characters). Check the URL.' });
}

/** Whether a parsed value (path parameters, query, JSON body) holds a NUL character anywhere, in a key or a value. */
function holdsNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (Array.isArray(value)) return value.some(holdsNul);
  if (value !== null && typeof value === 'object') return Object.entries(value).some(([key, inner]) => key.includes('\u0000') || holdsNul(inner));
  return false;
}

export async function buildAdminApp(deps: AdminDeps): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.logger.child({ listener: 'admin' }) as unknown as FastifyBaseLogger,
    bodyLimit: BODY_LIMIT,
    trustProxy: typeof deps.trustProxy === 'number' ? (_address: string, hop: number) => hop < (deps.trustProxy as number) : deps.trustProxy,
    routerOptions: { maxParamLength: 200 },
    return503OnClosing: true,
    // Strict bodies: an unknown field is refused (400), not silently dropped, and nothing is coerced.
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, useDefaults: false } },
    schemaErrorFormatter: (errors, dataVar) => new Error(errors.map((e) => describeSchemaError(e, dataVar)).join('; ')),
    frameworkErrors: answerFrameworkError,
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Signet admin API',
        // the API's version, as in the path /admin/v1
        version: '1',
        description: 'Accounts, applications, sessions and the audit trail, for operators. Every call but this document needs `Authorization: Bearer <operator key>` (`signet admin-key create --name NAME`).',
      },
      components: { securitySchemes: { operatorKey: { type: 'http', scheme: 'bearer', description: 'an operator key from `signet admin-key create`' } } },
      security: [{ operatorKey: [] }],
      tags: [
        { name: 'accounts', description: 'people, their sessions and sign-in throttling' },
        { name: 'clients', description: 'applications' },
        { name: 'audit', description: 'the audit trail' },
        { name: 'portability', description: 'import and export of accounts and applications' },
        { name: 'identity-providers', description: 'upstream identity providers people sign in with, and their linked identities' },
      ],
    },
    // Shared schemas appear under components.schemas by their $id (Account, Client, AuditEvent, …).
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
  });
  for (const schema of sharedSchemas) app.addSchema(schema);

  app.addHook('onSend', async (_request, reply) => {
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
    reply.header('x-content-type-options', 'nosniff');
  });
  // No field of this API takes a NUL character, and PostgreSQL can neither store nor compare one in
  // text: refused here for every route (after the key check, before the schemas), never a 500.
  app.addHook('preValidation', async (request, reply) => {
    for (const [part, value] of [['path', request.params], ['query string', request.query], ['body', request.body]] as const) {
      if (holdsNul(value)) return reply.code(400).send({ error: 'bad_request', message: `The ${part} contains a NUL character (%00 or \\u0000); no field takes one.` });
    }
  });
  app.setErrorHandler(adminErrorHandler);
  app.setNotFoundHandler((request, reply) => {
    reply.code(404).send({ error: 'not_found', message: `Nothing is served at ${request.method} ${request.url.split('?', 1)[0]}; the API is described at /admin/v1/openapi.json.` });
  });

  await app.register(adminRoutes, { ctx: { db: deps.db, clock: deps.clock, hashKey: deps.keys.tokenHash, objects: deps.objects, upstreamKey: deps.keys.upstreamSecret, baseUrl: deps.baseUrl ?? 'http://localhost:8080' } });
  // issue 27: the admin console at /admin, in a context of its own (cookies, forms, CSRF, page errors).
  const { consoleRoutes } = await import('./console/console.routes.ts');
  const consoleCtx = { db: deps.db, clock: deps.clock, hashKey: deps.keys.tokenHash, factorKey: deps.keys.factorSecret, deviceKey: deps.keys.deviceCookie, objects: deps.objects, productName: deps.productName ?? 'Signet', upstreamKey: deps.keys.upstreamSecret, baseUrl: deps.baseUrl ?? 'http://localhost:8080', passkeyHosts: deps.passkeyHosts ?? [] };
  await app.register(consoleRoutes, { ctx: consoleCtx, cookieKey: deps.keys.cookie });
  return app;
}

/** Builds the admin app and listens; the caller closes it on shutdown. */
export async function startAdminServer(deps: AdminDeps, address: { host: string; port: number }): Promise<FastifyInstance> {
  const app = await buildAdminApp(deps);
  await app.listen({ host: address.host, port: address.port });
  return app;
}
