// Builds the real app (no listening) on a test database with a movable clock and captured logs.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { manualClock } from '../../src/config/clock.ts';
import { deriveKeys } from '../../src/config/keys.ts';
import { parseSettings, type Settings } from '../../src/config/settings.ts';
import type { ObjectStore } from '../../src/storage/object-store.ts';
import { openObjectStore, parseStorageUrl } from '../../src/storage/open.ts';
import type { Translator } from '../../src/documents/translate/translator.ts';
import { buildApp, type AppDeps } from '../../src/web/app.ts';
import { createLogger } from '../../src/web/logging.ts';
import type { TestDatabase } from './databases.ts';

export type TestApp = {
  app: FastifyInstance;
  deps: AppDeps;
  clock: ReturnType<typeof manualClock>;
  /** every log line written so far, raw */
  logs: string[];
};

export const TEST_BASE_URL = 'http://signet.test';
export const TEST_ALT_BASE_URL = 'http://alt.signet.test';

export async function testApp(
  database: TestDatabase,
  env: Record<string, string> = {},
  extend?: (app: FastifyInstance) => void,
  parts: { objects?: ObjectStore; translator?: Translator } = {},
): Promise<TestApp> {
  const settings: Settings = {
    ...parseSettings({
      SIGNET_BASE_URL: TEST_BASE_URL,
      SIGNET_ALT_BASE_URL: TEST_ALT_BASE_URL,
      SIGNET_LOG_LEVEL: 'debug',
      SIGNET_METRICS_ADDR: 'off',
      SIGNET_DATA_DIR: '/nonexistent-data-dir',
      ...env,
    }),
    database: database.settings,
  };
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logs.push(chunk.toString('utf8'));
      done();
    },
  });
  const clock = manualClock(Date.now());
  const deps: AppDeps = {
    settings,
    db: database.db,
    dialect: database.dialect,
    keys: deriveKeys('test-root-secret-test-root-secret-0123456789'),
    clock,
    logger: createLogger(settings.logLevel, sink),
    // Task files in a fresh folder unless the test brings its own store (e.g. S3 on loopback).
    objects: parts.objects ?? openObjectStore(parseStorageUrl(`file:${mkdtempSync(path.join(tmpdir(), 'signet-objects-'))}`)),
    translator: parts.translator,
  };
  const app = await buildApp(deps);
  extend?.(app);
  await app.ready();
  return { app, deps, clock, logs };
}
