// Real services the tests need. Locally a missing one is skipped with a printed reason;
// with CI=true a missing one is a failure, never a skip.
import { spawnSync } from 'node:child_process';
import pg from 'pg';

export const IN_CI = process.env.CI === 'true' || process.env.CI === '1';

/** The PostgreSQL server tests create their databases on (a maintenance connection URL). */
export const POSTGRES_ADMIN_URL = process.env.SIGNET_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

let postgresProbe: Promise<string | undefined> | undefined;

/**
 * undefined when PostgreSQL is reachable, else the reason it is not. A busy machine (CI runs beside
 * other work) can take seconds to accept a connection, so the probe waits up to 15 s per attempt and
 * tries three times before calling the server unavailable.
 */
export function postgresUnavailableReason(): Promise<string | undefined> {
  postgresProbe ??= (async () => {
    let reason: string | undefined;
    for (let attempt = 1; attempt <= 3; attempt += 1) {
      const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL, connectionTimeoutMillis: 15_000 });
      try {
        await client.connect();
        await client.query('select 1');
        return undefined;
      } catch (error) {
        reason = `PostgreSQL not reachable at ${POSTGRES_ADMIN_URL.replace(/\/\/[^@]*@/, '//')} (${(error as Error).message}; ${attempt} attempts)`;
      } finally {
        await client.end().catch(() => {});
      }
      if (attempt < 3) await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
    return reason;
  })();
  return postgresProbe;
}

/**
 * Returns a value for node:test's `skip` option: false when the service is there; a printed reason when
 * it is missing locally; throws when it is missing in CI.
 */
export function skipUnlessAvailable(service: string, reason: string | undefined): string | false {
  if (reason === undefined) return false;
  if (IN_CI) throw new Error(`${service} is required in CI but unavailable: ${reason}`);
  process.stderr.write(`# skipped ${service} tests: ${reason}\n`);
  return `${service} unavailable: ${reason}`;
}

/** Why Debian's Apertium with its English–Spanish pair cannot translate here (undefined: it can). */
export function apertiumMissing(): string | undefined {
  const listed = spawnSync('apertium', ['-l'], { encoding: 'utf8' });
  if (listed.error || listed.status !== 0) return 'the apertium command is not installed (apt-get install apertium apertium-eng-spa)';
  return /\beng-spa\b/.test(listed.stdout) ? undefined : 'the eng-spa pair is not installed (apt-get install apertium-eng-spa)';
}

/** Creates a fresh PostgreSQL database; returns its URL and a function that drops it. */
export async function createPostgresDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `signet_test_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await admin.connect();
  await admin.query(`create database "${name}"`);
  await admin.end();
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
      await client.connect();
      await client.query(`drop database if exists "${name}" with (force)`);
      await client.end();
    },
  };
}
