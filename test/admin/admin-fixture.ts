// The admin app beside the public one, on the same test database and clock: an OAuth fixture (a
// person, applications, token helpers) plus an operator key and a helper that calls the admin API.
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import type { FastifyInstance } from 'fastify';
import { createAdminKey } from '../../src/admin/admin-keys.ts';
import { buildAdminApp } from '../../src/admin/app.ts';
import type { TestDatabase } from '../helpers/databases.ts';
import { oauthFixture, type OAuthFixture } from '../oauth/token-fixtures.ts';

export type AdminFixture = OAuthFixture & {
  adminApp: FastifyInstance;
  /** a live operator key and its id */
  key: string;
  keyId: string;
  /** calls the admin API; `key: null` sends no Authorization header */
  admin(method: InjectOptions['method'], url: string, options?: { key?: string | null; body?: unknown; headers?: Record<string, string> }): Promise<LightMyRequestResponse>;
};

export async function adminFixture(database: TestDatabase, env: Record<string, string> = {}): Promise<AdminFixture> {
  const f = await oauthFixture(database, env);
  const { db, clock, keys, logger, objects } = f.deps;
  const adminApp = await buildAdminApp({ db, clock, keys, objects, logger, trustProxy: false });
  await adminApp.ready();
  const { id, key } = await createAdminKey(db, clock, keys.tokenHash, 'tests');
  return {
    ...f,
    adminApp,
    key,
    keyId: id,
    admin(method, url, options = {}) {
      const presented = options.key === undefined ? key : options.key;
      return adminApp.inject({
        method,
        url,
        headers: { ...(presented === null ? {} : { authorization: `Bearer ${presented}` }), ...options.headers },
        ...(options.body === undefined ? {} : { payload: options.body as InjectOptions['payload'] }),
      });
    },
  };
}

/** The parts of an OpenAPI 3 document the tests read. */
export type OpenApiDocument = {
  openapi: string;
  info: { title: string; version: string };
  paths: Record<string, Record<string, { responses: Record<string, unknown>; security?: unknown }>>;
  components: { schemas: Record<string, unknown>; securitySchemes: Record<string, { type: string; scheme?: string }> };
  security?: Array<Record<string, unknown>>;
};
