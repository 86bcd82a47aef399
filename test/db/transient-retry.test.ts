// Transient PostgreSQL failures in the token endpoint's transactions (scale-out issue, item 3): a
// serialization failure (40001), a deadlock (40P01) or a lost connection before COMMIT is retried in a
// new transaction; a connection lost during COMMIT is not; and a retry never issues twice, because the
// conditional UPDATE that consumes the code or the refresh token decides again.
// On PostgreSQL the failures are real: a trigger raises them (or terminates its own backend) once.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { createAccount } from '../../src/accounts/accounts.ts';
import { registerClient } from '../../src/clients/clients.ts';
import { systemClock } from '../../src/config/clock.ts';
import { deriveKeys } from '../../src/config/keys.ts';
import type { Db } from '../../src/db/database.ts';
import { isDatabaseUnavailable } from '../../src/db/errors.ts';
import { CommitOutcomeUnknownError, TRANSIENT_ATTEMPTS, withTransientRetry } from '../../src/db/transient.ts';
import { issueAuthorizationCode } from '../../src/oauth/codes.ts';
import { keyedHash } from '../../src/oauth/secrets.ts';
import { issueTokenPair } from '../../src/oauth/token/issue-tokens.ts';
import * as tokens from '../../src/oauth/tokens.store.ts';
import { postgresDatabase, type TestDatabase } from '../helpers/databases.ts';
import { postgresUnavailableReason, skipUnlessAvailable } from '../helpers/services.ts';

const pgError = (code: string) => Object.assign(new Error(`injected ${code}`), { code });
const noWait = { backoffMs: () => 0 };

/**
 * A stand-in for Kysely's transaction: runs the work, then "commits" — throwing `atCommit[n]` on attempt
 * n — and, like Kysely on a dead connection, replaces the error with the failed ROLLBACK's when asked.
 */
function fakeDb(options: { atCommit?: unknown[]; rollbackLost?: boolean } = {}): { db: Db; attempts: () => number } {
  let attempts = 0;
  const db = {
    transaction: () => ({
      execute: async <T>(work: (trx: Db) => Promise<T>): Promise<T> => {
        const commitError = options.atCommit?.[attempts];
        attempts++;
        try {
          const result = await work(db as unknown as Db);
          if (commitError) throw commitError;
          return result;
        } catch (error) {
          if (options.rollbackLost) throw new Error('Client was closed and is not queryable');
          throw error;
        }
      },
    }),
  };
  return { db: db as unknown as Db, attempts: () => attempts };
}

describe('withTransientRetry: what is retried', () => {
  for (const code of ['40001', '40P01']) {
    test(`${code} raised inside the transaction: retried in a new one, and its result returned`, async () => {
      const { db, attempts } = fakeDb();
      let calls = 0;
      const result = await withTransientRetry(db, async () => {
        if (++calls === 1) throw pgError(code);
        return 'issued';
      }, noWait);
      assert.equal(result, 'issued');
      assert.equal(attempts(), 2);
    });

    test(`${code} raised by COMMIT: retried (PostgreSQL rolled the transaction back)`, async () => {
      const { db, attempts } = fakeDb({ atCommit: [pgError(code)] });
      assert.equal(await withTransientRetry(db, async () => 'issued', noWait), 'issued');
      assert.equal(attempts(), 2);
    });
  }

  for (const lost of [pgError('ECONNRESET'), pgError('57P01'), new Error('Connection terminated unexpectedly')]) {
    test(`a connection lost before COMMIT (${(lost as { code?: string }).code ?? lost.message}) is retried, even when the failed ROLLBACK's error replaces it`, async () => {
      const { db, attempts } = fakeDb({ rollbackLost: true });
      let calls = 0;
      const result = await withTransientRetry(db, async () => {
        if (++calls === 1) throw lost;
        return 'issued';
      }, noWait);
      assert.equal(result, 'issued');
      assert.equal(attempts(), 2);
    });
  }

  test('fails because the connection was lost during COMMIT: not retried (it may have committed); answered as unavailable (08007)', async () => {
    const { db, attempts } = fakeDb({ atCommit: [new Error('Connection terminated unexpectedly')], rollbackLost: true });
    await assert.rejects(
      withTransientRetry(db, async () => 'issued', noWait),
      (error: unknown) => error instanceof CommitOutcomeUnknownError && isDatabaseUnavailable(error),
    );
    assert.equal(attempts(), 1);
  });

  test(`fails because every one of the ${TRANSIENT_ATTEMPTS} attempts failed: the last cause is thrown`, async () => {
    const { db, attempts } = fakeDb();
    await assert.rejects(
      withTransientRetry(db, async () => {
        throw pgError('40P01');
      }, noWait),
      { code: '40P01' },
    );
    assert.equal(attempts(), TRANSIENT_ATTEMPTS);
  });

  test('fails because the error is not transient (a unique violation, a refusal): thrown at once', async () => {
    for (const error of [pgError('23505'), new Error('invalid_grant')]) {
      const { db, attempts } = fakeDb();
      await assert.rejects(
        withTransientRetry(db, async () => {
          throw error;
        }, noWait),
        error,
      );
      assert.equal(attempts(), 1);
    }
  });
});

const pgSkip = skipUnlessAvailable('PostgreSQL', await postgresUnavailableReason());

describe('withTransientRetry on PostgreSQL: the token endpoint\'s transactions, with real failures', { skip: pgSkip }, () => {
  let database: TestDatabase & { dispose(): Promise<void> };
  const keys = deriveKeys('transient-retry-test-secret-0123456789abcdef');
  let sub: string;
  let clientId: string;
  let faults = 0;

  before(async () => {
    database = await postgresDatabase();
    sub = (await createAccount(database.db, systemClock, { email: 'ada@example.com', password: 'analytical-engine' })).sub;
    clientId = (await registerClient(database.db, systemClock, keys.tokenHash, { name: 'Retry App', redirectUris: ['https://app.example/cb'], scopes: ['openid'] })).client.clientId;
  });
  after(async () => {
    await database?.dispose();
  });

  type Fault = 'serialization_failure' | 'deadlock_detected' | 'terminate';
  /**
   * Makes the next UPDATE of `table` fail once — before the row is written, or (`atCommit`) when the
   * transaction commits. A sequence counts, because nextval survives the rollback. Returns the remover.
   */
  async function failOnce(table: 'authorization_codes' | 'refresh_tokens', fault: Fault, atCommit = false): Promise<() => Promise<void>> {
    const name = `signet_fault_${++faults}`;
    const action = fault === 'terminate' ? 'perform pg_terminate_backend(pg_backend_pid())' : `raise exception 'injected ${fault}' using errcode = '${fault}'`;
    await sql.raw(`create sequence ${name}`).execute(database.db);
    await sql.raw(`create function ${name}() returns trigger language plpgsql as $$ begin if nextval('${name}') = 1 then ${action}; end if; return new; end $$`).execute(database.db);
    await sql
      .raw(atCommit
        ? `create constraint trigger ${name} after update on ${table} deferrable initially deferred for each row execute function ${name}()`
        : `create trigger ${name} before update on ${table} for each row execute function ${name}()`)
      .execute(database.db);
    return async () => {
      await sql.raw(`drop trigger ${name} on ${table}`).execute(database.db);
      await sql.raw(`drop function ${name}(); drop sequence ${name}`).execute(database.db);
    };
  }

  async function newCode() {
    const code = await issueAuthorizationCode(database.db, keys.tokenHash, systemClock, { clientId, sub, redirectUri: 'https://app.example/cb', scope: 'openid', codeChallenge: null, codeChallengeMethod: null });
    return (await tokens.findCode(database.db, keyedHash(keys.tokenHash, code)))!;
  }

  /** The authorization_code grant's transaction, as src/oauth/token/authorization-code.ts runs it. */
  const redeem = (code: tokens.CodeRow, options: Parameters<typeof withTransientRetry>[2] = {}) =>
    withTransientRetry(database.db, async (trx) => {
      if (!(await tokens.redeemCode(trx, code.code_hash, Date.now()))) return undefined;
      return issueTokenPair(trx, keys.tokenHash, Date.now(), { clientId, sub, accessScope: code.scope, refreshScope: code.scope, chainId: code.chain_id, refreshChainExpiresAt: Date.now() + 86_400_000 });
    }, options);

  /** The refresh_token grant's transaction, as src/oauth/token/refresh-token.ts runs it. */
  const rotate = (refreshToken: string, options: Parameters<typeof withTransientRetry>[2] = {}) =>
    withTransientRetry(database.db, async (trx) => {
      const rotated = await tokens.rotateRefreshToken(trx, keyedHash(keys.tokenHash, refreshToken), clientId, Date.now());
      if (!rotated) return undefined;
      return issueTokenPair(trx, keys.tokenHash, Date.now(), { clientId, sub, accessScope: rotated.scope, refreshScope: rotated.scope, chainId: rotated.chain_id, refreshChainExpiresAt: rotated.chain_expires_at });
    }, options);

  const countIn = async (table: 'access_tokens' | 'refresh_tokens', chainId: string) =>
    Number((await database.db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).where('chain_id', '=', chainId).executeTakeFirstOrThrow()).n);

  for (const fault of ['serialization_failure', 'deadlock_detected', 'terminate'] as const) {
    test(`code redemption hit by ${fault === 'terminate' ? 'a terminated connection' : fault} is retried once and issues one token pair`, async () => {
      const code = await newCode();
      const remove = await failOnce('authorization_codes', fault);
      const retries: unknown[] = [];
      try {
        const issued = await redeem(code, { onRetry: (error) => void retries.push(error) });
        assert.ok(issued?.access_token, 'tokens issued by the retry');
      } finally {
        await remove();
      }
      assert.equal(retries.length, 1);
      assert.equal(await countIn('access_tokens', code.chain_id), 1, 'one access token: the failed attempt left nothing');
      assert.equal(await countIn('refresh_tokens', code.chain_id), 1);
    });

    test(`refresh rotation hit by ${fault === 'terminate' ? 'a terminated connection' : fault} is retried once: the old token rotated once, one new pair`, async () => {
      const code = await newCode();
      const first = (await redeem(code))!;
      const remove = await failOnce('refresh_tokens', fault);
      let retries = 0;
      try {
        assert.ok((await rotate(first.refresh_token, { onRetry: () => void retries++ }))?.refresh_token);
      } finally {
        await remove();
      }
      assert.equal(retries, 1);
      assert.equal(await countIn('refresh_tokens', code.chain_id), 2);
      assert.equal(await countIn('access_tokens', code.chain_id), 2);
      const live = await database.db.selectFrom('refresh_tokens').select('token_hash').where('chain_id', '=', code.chain_id).where('rotated_at', 'is', null).execute();
      assert.equal(live.length, 1, 'only the newest refresh token is live');
    });
  }

  test('"a retry after a rollback cannot issue twice": another request redeems the code between the failed attempt and the retry → the retry issues nothing', async () => {
    const code = await newCode();
    const remove = await failOnce('authorization_codes', 'deadlock_detected');
    let winner: unknown;
    try {
      const retried = await redeem(code, { onRetry: async () => void (winner = await redeem(code)) });
      assert.equal(retried, undefined, 'the retry lost the conditional UPDATE: no tokens');
    } finally {
      await remove();
    }
    assert.ok(winner, 'the other request got the tokens');
    assert.equal(await countIn('access_tokens', code.chain_id), 1);
  });

  test('fails because the connection dies during COMMIT: not retried, answered as unavailable; nothing committed, so the client\'s next try is issued once', async () => {
    const code = await newCode();
    const remove = await failOnce('authorization_codes', 'terminate', true);
    let retries = 0;
    try {
      await assert.rejects(redeem(code, { onRetry: () => void retries++ }), (error: unknown) => error instanceof CommitOutcomeUnknownError && isDatabaseUnavailable(error));
    } finally {
      await remove();
    }
    assert.equal(retries, 0);
    assert.equal((await tokens.findCode(database.db, code.code_hash))?.redeemed_at, null, 'PostgreSQL did not commit');
    assert.ok((await redeem(code))?.access_token);
    assert.equal(await countIn('access_tokens', code.chain_id), 1);
  });
});
