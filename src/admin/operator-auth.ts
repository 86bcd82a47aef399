// "Authorization: Bearer <operator key>" on every admin route but the OpenAPI document: checked in
// onRequest, before the body is read or validated, so a request without a live key learns nothing
// (always 401, never a 400 about its body or a 404 about its path parameters).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../config/clock.ts';
import type { Db } from '../db/database.ts';
import type { ObjectStore } from '../storage/object-store.ts';
import { verifyAdminKey } from './admin-keys.ts';
import type { OperatorContext } from './operator-changes.ts';

export type AdminContext = {
  db: Db;
  clock: Clock;
  hashKey: Buffer;
  objects: ObjectStore;
  /** keys.upstreamSecret: upstream identity providers' client secrets at rest (issue 33) */
  upstreamKey: Buffer;
  /** SIGNET_BASE_URL's origin: the providers' redirect URIs */
  baseUrl: string;
};

const CHALLENGE = 'Bearer realm="signet-admin"';
const operators = new WeakMap<FastifyRequest, OperatorContext>();

/** The key from `Authorization: Bearer <key>` (the scheme in any case, RFC 9110 §11.1). */
export function presentedKey(header: string | undefined): string | undefined {
  const match = /^Bearer +(\S{1,200})\s*$/i.exec(header ?? '');
  return match?.[1];
}

/** The onRequest hook of the operator-only routes. */
export function requireOperatorKey(ctx: AdminContext) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const key = presentedKey(request.headers.authorization);
    const keyId = key === undefined ? undefined : await verifyAdminKey(ctx.db, ctx.clock, ctx.hashKey, key);
    if (keyId === undefined) {
      const message =
        key === undefined
          ? 'An operator key is required: send "Authorization: Bearer <key>" (create one with `signet admin-key create --name NAME`).'
          : 'This operator key is unknown or revoked. `signet admin-key list` shows the live ones; create a new one with `signet admin-key create --name NAME`.';
      request.log.info({ adminAuth: key === undefined ? 'missing key' : 'wrong key' }, 'admin request refused');
      await reply.code(401).header('www-authenticate', CHALLENGE).header('cache-control', 'no-store').send({ error: 'unauthenticated', message });
      return;
    }
    operators.set(request, { db: ctx.db, clock: ctx.clock, hashKey: ctx.hashKey, objects: ctx.objects, actor: `admin_key:${keyId}`, ip: request.ip, log: request.log });
  };
}

/** Who is acting on this request (set by requireOperatorKey; a route outside it has none). */
export function operatorOf(request: FastifyRequest): OperatorContext {
  const operator = operators.get(request);
  if (!operator) throw new Error(`${request.routeOptions.url ?? request.url} is served without requireOperatorKey`);
  return operator;
}
