// Starting the service for real: settings → keys → database (migrated) → app → listeners.
import type { FastifyInstance } from 'fastify';
import type http from 'node:http';
import { systemClock } from '../config/clock.ts';
import { deriveKeys, loadRootSecret } from '../config/keys.ts';
import type { Settings } from '../config/settings.ts';
import { migrate, openDatabase } from '../db/database.ts';
import { openObjectStore, parseStorageUrl } from '../storage/open.ts';
import { createTranslator } from '../tasks/engines/translate/create.ts';
import { buildApp, CONNECTION_LIMITS } from './app.ts';
import { startHousekeeping } from './housekeeping.ts';
import { createLogger } from './logging.ts';
import { createMetrics, startMetricsServer } from './metrics.ts';

export type RunningServer = { app: FastifyInstance; metricsServer: http.Server | undefined; close(): Promise<void> };

export async function startServer(settings: Settings): Promise<RunningServer> {
  const logger = createLogger(settings.logLevel);
  const keys = deriveKeys(loadRootSecret(settings));
  const database = openDatabase(settings.database);
  await migrate(database.db);
  const metrics = settings.metrics === 'off' ? undefined : createMetrics();
  const objects = openObjectStore(parseStorageUrl(settings.storageUrl));
  const translator = settings.translate.engine ? createTranslator(settings.translate) : undefined;
  const app = await buildApp({ settings, db: database.db, dialect: database.dialect, keys, clock: systemClock, logger, metrics, objects, translator });
  // The timeouts are Fastify options (app.ts); the connection cap is only a property of http.Server.
  app.server.maxConnections = CONNECTION_LIMITS.maxConnections;
  await app.listen({ host: settings.host, port: settings.port });
  const metricsServer = metrics && settings.metrics !== 'off' ? await startMetricsServer(metrics, settings.metrics.host, settings.metrics.port) : undefined;
  const stopHousekeeping = startHousekeeping(database.db, systemClock, logger);
  logger.info({ baseUrl: settings.baseUrl.origin, altBaseUrl: settings.altBaseUrl?.origin, database: database.dialect }, 'signet is serving');

  let closing: Promise<void> | undefined;
  return {
    app,
    metricsServer,
    close() {
      closing ??= (async () => {
        stopHousekeeping();
        await app.close();
        await new Promise<void>((resolve) => (metricsServer ? metricsServer.close(() => resolve()) : resolve()));
        await objects.close();
        await database.close();
      })();
      return closing;
    },
  };
}
