// Fastify assembly: plugins in declared order, then routes. Routes only parse, call a domain function
// and render. Built without listening, so tests use app.inject.
import type http from 'node:http';
import type { Socket } from 'node:net';
import Fastify, { type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyRequest } from 'fastify';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import type { Logger } from 'pino';
import { HOUR, type Clock } from '../config/clock.ts';
import { createUpstreamClient } from '../accounts/upstream/upstream-client.ts';
import { countPasskeys } from '../accounts/factors/passkeys.ts';
import { hasSecondFactor } from '../accounts/factors/second-step.ts';
import type { Keys } from '../config/keys.ts';
import { servedOrigins, type Settings } from '../config/settings.ts';
import type { Db, Dialect } from '../db/database.ts';
import { isDatabaseUnavailable } from '../db/errors.ts';
import { OAuthError } from '../oauth/errors.ts';
import { discoveryRoutes } from '../oauth/discovery.routes.ts';
import { registrationRoutes } from '../oauth/registration/registration.routes.ts';
import { resourceMetadataRoutes } from '../oauth/resources.routes.ts';
import { revokeRoutes } from '../oauth/revoke.routes.ts';
import { introspectRoutes } from '../oauth/introspect.routes.ts';
import { createMetadataDocumentCache } from '../oauth/registration/client-id-metadata.ts';
import { outboundPolicy } from '../net/guarded-fetch.ts';
import { tokenRoutes } from '../oauth/token/token.routes.ts';
import { userinfoRoutes } from '../oauth/userinfo.routes.ts';
import { deviceAuthorizationRoutes } from '../oauth/device/device-authorization.routes.ts';
import { healthRoutes } from './health.routes.ts';
import { requestMetrics, type Metrics } from './metrics.ts';
import { hosts } from './plugins/hosts.ts';
import { lazyRequestLogger } from './plugins/request-logger.ts';
import { answerClientError, answerExpectation, answerFrameworkError, securityHeaders } from './plugins/security-headers.ts';
import { sessions } from './plugins/session.ts';
import { documentCallers } from './plugins/document-caller.ts';
import { pageRoutes } from './pages/pages.routes.ts';
import { authorizeRoutes } from '../oauth/authorize.routes.ts';
import type { ObjectStore } from '../storage/object-store.ts';
import type { Translator } from '../documents/translate/translator.ts';
import { taskRoutes } from '../tasks/tasks.routes.ts';
import { convertRoutes } from '../convert/convert.routes.ts';
import { unsubscribeRoutes } from '../notifications/unsubscribe.routes.ts';
import { createFanout, type NotificationFanout } from '../notifications/fanout.ts';
import { notificationRoutes } from '../notifications/notifications.routes.ts';
import { localeOf, renderError } from './pages/view.ts';
import { branding } from './branding.ts';
import { answerGoneClient, clientWentAway } from './client-gone.ts';
import { cookieNames } from './cookies.ts';
import { agentRoutes } from '../agents/http.ts';
import { readFileSync } from 'node:fs';

const { version: VERSION } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

/** Everything a route needs, passed down explicitly. */
export type AppDeps = {
  settings: Settings;
  db: Db;
  dialect: Dialect;
  keys: Keys;
  clock: Clock;
  logger: Logger;
  metrics?: Metrics | undefined;
  /** where task files live */
  objects: ObjectStore;
  /** the configured translation engine, if any */
  translator: Translator | undefined;
  /** live notifications across processes (startServer starts it; otherwise made here, started by the first stream) */
  fanout?: NotificationFanout | undefined;
  /** /mcp: how often a waiting tool reads its task and how long it waits (default 1 s, 10 min) */
  agentWait?: { pollMs: number; maxWaitMs: number } | undefined;
};

/** Requests bodies above this are refused with 413 (uploads set their own limits). */
export const BODY_LIMIT = 64 * 1024;

/**
 * Slow clients must not hold connections: a stalled request is closed within 30 s. Node checks the
 * header and request deadlines every `checkIntervalMs`, so a stalled header block goes after at most
 * headers + check interval; a stalled body after `idleMs` without a byte.
 * - `requestMs` bounds *receiving* the request (headers and body, uploads included); a long response
 *   such as a server-sent-events stream is not cut by it.
 * - `idleMs` closes a socket with no traffic either way — so a long-lived stream must write (a comment
 *   line as heartbeat) more often than that.
 * - `keepAliveMs` is above the 60 s idle timeout of common load balancers, so they never reuse a
 *   connection we are closing.
 * - `maxConnections` stays below the usual limit of 1024 open files, so the cap refuses connections
 *   before the process runs out of descriptors (set in server.ts: http.Server has no option for it).
 * - `perAddress`: one client address may hold at most this many of them, so a single slow-loris host
 *   (a body trickled a byte at a time stays within every timeout for `requestMs`) cannot take them
 *   all. A browser opens about 6 per host; an office behind one NAT address, some dozens. Not applied
 *   behind a trusted proxy (SIGNET_TRUST_PROXY), whose connections all come from its own address: the
 *   proxy must limit clients itself.
 */
export const CONNECTION_LIMITS = {
  headersMs: 10_000,
  requestMs: 120_000,
  idleMs: 20_000,
  keepAliveMs: 65_000,
  checkIntervalMs: 5_000,
  maxConnections: 1000,
  perAddress: 100,
};

/** How often, at most, a refused connection is logged (per address, and for the process-wide cap). */
const REFUSAL_LOG_INTERVAL_MS = 60_000;

/**
 * Applies the connection caps to a listening server: `maxConnections` for the process, and (when
 * `perAddress` is given) a per-client-address cap; a connection over either is closed at once. Each
 * refusal is logged as a warning, at most once a minute per address, so an operator sees the flood.
 */
export function capConnections(server: http.Server, limits: { maxConnections: number; perAddress?: number | undefined }, log: { warn(object: object, message: string): void }): void {
  server.maxConnections = limits.maxConnections;
  const lastLogged = new Map<string, number>();
  const warnOnce = (key: string, object: object, message: string) => {
    const now = Date.now();
    if ((lastLogged.get(key) ?? 0) > now - REFUSAL_LOG_INTERVAL_MS) return;
    if (lastLogged.size > 10_000) lastLogged.clear();
    lastLogged.set(key, now);
    log.warn(object, message);
  };
  server.on('drop', (data) => warnOnce('*', { event: 'connection_refused', address: data?.remoteAddress, limit: limits.maxConnections }, 'connection refused: the process holds its maximum of connections'));
  const { perAddress } = limits;
  if (perAddress === undefined) return;
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? '';
    const count = (open.get(address) ?? 0) + 1;
    if (count > perAddress) {
      warnOnce(address, { event: 'connection_refused', address, limit: perAddress }, 'connection refused: this client address holds its maximum of connections');
      socket.destroy();
      return;
    }
    open.set(address, count);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left <= 0) open.delete(address);
      else open.set(address, left);
    });
  });
}

/** The Fastify options that apply CONNECTION_LIMITS (a parameter, so tests can check the semantics at a smaller scale). */
export function connectionOptions(limits: typeof CONNECTION_LIMITS = CONNECTION_LIMITS) {
  return {
    requestTimeout: limits.requestMs,
    connectionTimeout: limits.idleMs,
    keepAliveTimeout: limits.keepAliveMs,
    http: { headersTimeout: limits.headersMs, connectionsCheckingInterval: limits.checkIntervalMs },
  };
}

/**
 * Whether a request that found nothing came from a person's browser: a GET or HEAD that accepts HTML,
 * outside the OAuth, API and discovery paths (whose clients read JSON whatever they accept).
 */
function wantsPage(request: FastifyRequest): boolean {
  if (request.method !== 'GET' && request.method !== 'HEAD') return false;
  if (/^\/(oauth|api|\.well-known)\//.test(request.url)) return false;
  return (request.headers.accept ?? '').includes('text/html');
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.logger as unknown as FastifyBaseLogger,
    // A request's child logger is made when it first writes a line, not for every request.
    childLoggerFactory: lazyRequestLogger,
    bodyLimit: BODY_LIMIT,
    trustProxy: trustProxyOption(deps.settings.trustProxy),
    routerOptions: { maxParamLength: 200 },
    return503OnClosing: true,
    ...connectionOptions(),
    // Answers that Fastify gives before any hook runs carry the security headers too.
    clientErrorHandler: answerClientError,
    frameworkErrors: answerFrameworkError,
  });

  // Node answers two kinds of request itself, before Fastify sees them, with none of our headers
  // (spec: "Every response carries X-Frame-Options: DENY and a frame-blocking content security
  // policy"): an HTTP/1.1 request without Host (400) and an Expect header other than 100-continue
  // (417). The first goes on to the hosts plugin, which refuses it with the headers; the second is
  // answered by answerExpectation.
  (app.server as typeof app.server & { requireHostHeader: boolean }).requireHostHeader = false;
  app.server.on('checkExpectation', answerExpectation);
  app.decorate('cookieNames', cookieNames(deps.settings));
  await app.register(securityHeaders);
  await app.register(hosts, { origins: servedOrigins(deps.settings) });
  if (deps.metrics) await app.register(requestMetrics, { metrics: deps.metrics });
  await app.register(cookie, { secret: deps.keys.cookie.toString('base64url') });
  await app.register(formbody, { bodyLimit: BODY_LIMIT });
  await app.register(sessions, { db: deps.db, tokenHashKey: deps.keys.tokenHash, clock: deps.clock });
  // Who calls the document APIs (API key, OAuth access token, or session where a route allows it).
  await app.register(documentCallers, { db: deps.db, hashKey: deps.keys.tokenHash, clock: deps.clock });
  await app.register(branding, { settings: deps.settings });

  app.setErrorHandler((error: FastifyError | OAuthError | Error, request, reply) => {
    if (clientWentAway(request, error)) return answerGoneClient(request, reply);
    const isOAuthPath = request.url.startsWith('/oauth/');
    if (error instanceof OAuthError) {
      if (error.status >= 500) request.log.error({ err: error }, 'oauth server error');
      else request.log.info({ oauthError: error.error, detail: error.detail }, 'oauth request refused');
      if (error.warning) request.log.warn({ event: error.warning.event, clientId: error.warning.clientId }, error.warning.message);
      if (error.retryAfterSeconds !== undefined) reply.header('retry-after', String(error.retryAfterSeconds));
      return reply.code(error.status).header('cache-control', 'no-store').header('pragma', 'no-cache').send(error.toJSON());
    }
    if (isDatabaseUnavailable(error)) {
      request.log.error({ err: error }, 'database unavailable');
      const message = 'The service is temporarily unavailable. Try again in a moment.';
      return reply
        .code(503)
        .header('retry-after', '5')
        .send(isOAuthPath ? { error: 'temporarily_unavailable', error_description: message } : { error: 'unavailable', message });
    }
    const status = 'statusCode' in error && typeof error.statusCode === 'number' ? error.statusCode : 500;
    if (status >= 400 && status < 500) {
      const message = error.message;
      return reply.code(status).send(isOAuthPath ? { error: 'invalid_request', error_description: message } : { error: errorCodeForStatus(status), message });
    }
    request.log.error({ err: error }, 'unexpected error');
    const message = 'The server could not complete the request. Try again later.';
    return reply.code(500).send(isOAuthPath ? { error: 'server_error', error_description: message } : { error: 'server_error', message });
  });

  app.setNotFoundHandler((request, reply) => {
    // A person who typed or followed a wrong address gets a page (in their language, with a way on);
    // programs, and every API path, get JSON.
    if (wantsPage(request)) return renderError(deps.db, request, reply, 404, (t) => t.pageNotFound);
    return reply.code(404).send({ error: 'not_found', message: `Nothing is served at ${request.method} ${request.url.split('?', 1)[0]}.` });
  });

  await app.register(healthRoutes, { db: deps.db, checks: [{ name: 'storage', check: () => deps.objects.ping() }] });
  // issue 39: Client ID Metadata Documents, fetched through the guarded outbound fetch and cached per process
  const outbound = outboundPolicy(deps.settings.outbound);
  if (outbound.allowLoopbackForTests || outbound.testCa) deps.logger.warn({ event: 'outbound_test_allowance' }, 'SIGNET_OUTBOUND_ALLOW_LOOPBACK_FOR_TESTS or SIGNET_OUTBOUND_TEST_CA_FILE is set: outbound fetches may reach loopback addresses or trust a test certificate authority. These settings are for tests only.');
  const clientIdMetadata =
    deps.settings.clientRegistration === 'open'
      ? { db: deps.db, clock: deps.clock, hashKey: deps.keys.tokenHash, registration: deps.settings.clientRegistration, outbound, cache: createMetadataDocumentCache(deps.clock) }
      : undefined;
  const flow = { db: deps.db, dialect: deps.dialect, hashKey: deps.keys.tokenHash, clock: deps.clock, compat: deps.settings.compat, clientIdMetadata };
  const tasks = { db: deps.db, dialect: deps.dialect, clock: deps.clock, objects: deps.objects, translator: deps.translator, uploadMaxBytes: deps.settings.uploadMaxBytes };
  const accounts = { db: deps.db, clock: deps.clock, hashKey: deps.keys.tokenHash, tokenKey: deps.keys.accountToken, signupOpen: deps.settings.signup === 'open' };
  const factors = {
    db: deps.db,
    clock: deps.clock,
    hashKey: deps.keys.tokenHash,
    factorKey: deps.keys.factorSecret,
    rememberKey: deps.keys.rememberedBrowser,
    passkeys: { count: countPasskeys },
    mfa: deps.settings.mfa,
  };
  // SIGNET_MFA=required: a session from before the policy, without a factor, gets no code from prompt=none.
  const mustEnrol = factors.mfa === 'required' ? async (sub: string) => !(await hasSecondFactor(factors, sub)) : undefined;
  await app.register(authorizeRoutes, { ctx: flow, ...(mustEnrol ? { mustEnrol } : {}) });
  // issue 33: upstream identity providers (discovery documents and JWKS cached per process).
  const upstreamClient = createUpstreamClient({ timeoutMs: deps.settings.idpTimeoutMs, cacheMs: HOUR, now: deps.clock });
  await app.register(pageRoutes, { ctx: flow, tasks, accounts, deviceKey: deps.keys.deviceCookie, factors, upstream: { sealKey: deps.keys.upstreamSecret, client: upstreamClient } });
  // OAuth endpoints (token and revoke read form bodies only, in their own encapsulated contexts).
  // Each takes the narrow options it declares: nothing under oauth/ imports this file.
  const endpoints = { db: deps.db, clock: deps.clock, hashKey: deps.keys.tokenHash };
  await app.register(tokenRoutes, { ctx: endpoints, idTokens: { db: deps.db, sealKey: deps.keys.signingKey, clock: deps.clock, defaultAlg: deps.settings.idTokenAlg } });
  await app.register(revokeRoutes, { ctx: endpoints });
  await app.register(introspectRoutes, { ctx: endpoints });
  await app.register(userinfoRoutes, { ctx: endpoints });
  // issue 43: RFC 8628's device authorization endpoint (the /device page is with the other pages)
  await app.register(deviceAuthorizationRoutes, { ctx: endpoints });
  await app.register(discoveryRoutes, { settings: deps.settings, signing: { db: deps.db, sealKey: deps.keys.signingKey, clock: deps.clock } });
  // issue 39: authorization for AI agents — RFC 9728 / RFC 8414 metadata and RFC 7591 registration
  await app.register(resourceMetadataRoutes, { registration: deps.settings.clientRegistration });
  await app.register(registrationRoutes, { ctx: { db: deps.db, clock: deps.clock, hashKey: deps.keys.tokenHash, registration: deps.settings.clientRegistration } });
  // First-party APIs (session cookie).
  await app.register(taskRoutes, { ctx: tasks, localeOf });
  // docling-serve's conversion API (API keys and OAuth access tokens with scope documents; no cookie).
  await app.register(convertRoutes, { ctx: { tasks, fetchSources: deps.settings.fetchSources, outbound }, localeOf });
  await app.register(unsubscribeRoutes, { ctx: { db: deps.db, clock: deps.clock, unsubscribeKey: deps.keys.unsubscribe }, localeOf });
  const fanout = deps.fanout ?? createFanout({ db: deps.db, database: deps.settings.database, logger: deps.logger });
  app.addHook('onClose', () => fanout.stop());
  await app.register(notificationRoutes, { ctx: { db: deps.db, dialect: deps.dialect, clock: deps.clock }, fanout });
  // issue 39: the Model Context Protocol at /mcp, for AI agents signed in through this server's OAuth.
  await app.register(agentRoutes, { ctx: { db: deps.db, clock: deps.clock, hashKey: deps.keys.tokenHash, tasks }, localeOf, version: VERSION, ...(deps.agentWait ? { wait: deps.agentWait } : {}) });

  return app;
}

/** A hop count trusts that many proxies nearest to us; Fastify takes it as a function. */
function trustProxyOption(value: Settings['trustProxy']): boolean | string[] | ((address: string, hop: number) => boolean) {
  return typeof value === 'number' ? (_address, hop) => hop < value : value;
}

function errorCodeForStatus(status: number): string {
  switch (status) {
    case 400:
      return 'bad_request';
    case 401:
      return 'unauthenticated';
    case 403:
      return 'forbidden';
    case 404:
      return 'not_found';
    case 405:
      return 'method_not_allowed';
    case 409:
      return 'conflict';
    case 413:
      return 'payload_too_large';
    case 415:
      return 'unsupported_media_type';
    case 429:
      return 'too_many_requests';
    default:
      return 'bad_request';
  }
}
