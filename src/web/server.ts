// Starting the service for real: settings → keys → database (migrated) → app → listeners.
import type { FastifyInstance } from 'fastify';
import cluster from 'node:cluster';
import type http from 'node:http';
import type { DestinationStream } from 'pino';
import { registerAuditCounters } from '../audit/audit-metrics.ts';
import { startAuditRetention } from '../audit/retention.ts';
import { systemClock } from '../config/clock.ts';
import { deriveKeys, loadRootSecret } from '../config/keys.ts';
import { servedOrigins, type Settings } from '../config/settings.ts';
import { migrate, openDatabase } from '../db/database.ts';
import { ensureSigningKeys } from '../oauth/oidc/keys.ts';
import { openObjectStore, parseStorageUrl } from '../storage/open.ts';
import { createFanout } from '../notifications/fanout.ts';
import { buildApp, capConnections, CONNECTION_LIMITS } from './app.ts';
import { startHousekeeping } from './housekeeping.ts';
import { createLogger } from './logging.ts';
import { answerClusterPrimary, createMetrics, startMetricsServer } from './metrics.ts';

export type RunningServer = { app: FastifyInstance; metricsServer: http.Server | undefined; adminApp: FastifyInstance | undefined; close(): Promise<void> };

/** `logDestination`: where log lines go instead of stdout (tests read them). */
export async function startServer(settings: Settings, logDestination?: DestinationStream): Promise<RunningServer> {
  const logger = createLogger(settings.logLevel, logDestination);
  const keys = deriveKeys(loadRootSecret(settings));
  const database = openDatabase(settings.database);
  await migrate(database.db);
  // issue 28: the id_token signing keys, generated at first start (kept in the database, so every node signs alike).
  await ensureSigningKeys(database.db, keys.signingKey, systemClock);
  const metrics = settings.metrics === 'off' ? undefined : createMetrics();
  if (metrics) registerAuditCounters(metrics.registry);
  // In a `serve --processes` worker the metrics listener is the primary's (cluster.ts): it asks every
  // process for its registry and sums them; a listener per worker on the shared port would not.
  if (metrics && cluster.isWorker) answerClusterPrimary(metrics.registry);
  const objects = openObjectStore(parseStorageUrl(settings.storageUrl));
  // The translation engines' code is loaded only when one is configured (the web process asks it for its language pairs).
  const translator = settings.translate.engine ? (await import('../documents/translate/create.ts')).createTranslator(settings.translate) : undefined;
  // Live notifications: LISTEN (PostgreSQL) or a short poll (SQLite), so streams on this process
  // receive what any process records — another server, or `signet worker`.
  const fanout = createFanout({ db: database.db, database: settings.database, logger });
  await fanout.start();
  const app = await buildApp({ settings, db: database.db, dialect: database.dialect, keys, clock: systemClock, logger, metrics, objects, translator, fanout });
  // The timeouts are Fastify options (app.ts); the connection caps are set on the http.Server.
  capConnections(app.server, { maxConnections: CONNECTION_LIMITS.maxConnections, perAddress: settings.trustProxy === false ? CONNECTION_LIMITS.perAddress : undefined }, logger);
  // Fastify's own line would read "Server listening at http://127.0.0.1:8080", an address that answers
  // 421 when the base URL names another host: say where it listens and which address to open.
  const served = settings.baseUrl.origin;
  await app.listen({ host: settings.host, port: settings.port, listenTextResolver: (address) => `listening on ${address.replace(/^https?:\/\//, '')}; open ${served}` });
  const metricsServer = metrics && settings.metrics !== 'off' && !cluster.isWorker ? await startMetricsServer(metrics.registry, settings.metrics.host, settings.metrics.port) : undefined;
  // The admin API on its own listener, never the public port (SIGNET_ADMIN_ADDR; off: none).
  // Loaded only when it is on: the admin app and its OpenAPI (swagger) plugin are otherwise dead weight.
  const adminApp = settings.admin === 'off' ? undefined : await (await import('../admin/app.ts')).startAdminServer({ db: database.db, clock: systemClock, keys, objects, logger, trustProxy: settings.trustProxy, productName: settings.brand.productName, baseUrl: settings.baseUrl.origin, passkeyHosts: servedOrigins(settings).map((u) => u.hostname) }, settings.admin);
  const stopHousekeeping = startHousekeeping(database.db, systemClock, logger);
  const stopAuditRetention = startAuditRetention(database.db, systemClock, settings.auditRetentionDays, logger);
  logger.info({ baseUrl: settings.baseUrl.origin, altBaseUrl: settings.altBaseUrl?.origin, database: database.dialect }, 'signet is serving');

  let closing: Promise<void> | undefined;
  return {
    app,
    metricsServer,
    adminApp,
    close() {
      closing ??= (async () => {
        stopHousekeeping();
        stopAuditRetention();
        await adminApp?.close();
        await app.close();
        await fanout.stop();
        await new Promise<void>((resolve) => (metricsServer ? metricsServer.close(() => resolve()) : resolve()));
        await objects.close();
        await database.close();
      })();
      return closing;
    },
  };
}
