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
import { decodeCode, newChainId } from '../../src/oauth/token-format.ts';
import { newChainRow } from '../../src/oauth/token/issue-tokens.ts';
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
  async function failOnce(table: 'authorization_codes' | 'token_chains', fault: Fault, atCommit = false): Promise<() => Promise<void>> {
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

  /** A code as the authorize step issues it: its chain's generation 0 (src/oauth/codes.ts). */
  async function newCode(): Promise<string> {
    const code = await issueAuthorizationCode(database.db, keys.tokenHash, systemClock, { clientId, sub, redirectUri: 'https://app.example/cb', scope: 'openid', codeChallenge: null, codeChallengeMethod: null });
    return decodeCode(keys.tokenHash, code)!;
  }

  /** A code of the format before migration 0010 (its own row), as an upgraded database may still hold for ten minutes. */
  async function newLegacyCode(): Promise<tokens.CodeRow> {
    const now = Date.now();
    const row: tokens.CodeRow = { code_hash: `legacy-${++faults}-${now}`, client_id: clientId, sub, redirect_uri: 'https://app.example/cb', scope: 'openid', code_challenge: null, code_challenge_method: null, chain_id: newChainId(), created_at: now, expires_at: now + 600_000, redeemed_at: null };
    await tokens.insertCode(database.db, row);
    return row;
  }
  const chainFor = (code: tokens.CodeRow) => newChainRow(Date.now(), { clientId, sub, scope: code.scope, expiresAt: Date.now() + 86_400_000, id: code.chain_id });

  /** The authorization_code grant as PostgreSQL runs it: one conditional UPDATE of the chain (src/oauth/token/authorization-code.ts). */
  const redeem = async (id: string, options: Parameters<typeof withTransientRetry>[2] = {}) =>
    (await tokens.redeemChainCode(database.db, { id, now: Date.now(), issuance: `redeem-${++faults}`, chainExpiresAt: Date.now() + 86_400_000 }, options)) !== undefined;

  /** A code of the earlier format redeemed in a transaction (the form SQLite runs): redeem, then start the chain. */
  const redeemInTransaction = (code: tokens.CodeRow, options: Parameters<typeof withTransientRetry>[2] = {}) =>
    withTransientRetry(database.db, async (trx) => {
      if (!(await tokens.redeemCode(trx, code.code_hash, Date.now()))) return false;
      await tokens.insertChain(trx, chainFor(code));
      return true;
    }, options);

  const generationOf = async (id: string) => (await tokens.findChain(database.db, id))?.generation;
  const chainCount = async (chainId: string) =>
    Number((await database.db.selectFrom('token_chains').select((eb) => eb.fn.countAll().as('n')).where('id', '=', chainId).executeTakeFirstOrThrow()).n);

  for (const fault of ['serialization_failure', 'deadlock_detected', 'terminate'] as const) {
    const what = fault === 'terminate' ? 'a terminated connection' : fault;
    // A terminated backend can cost a second attempt: the pool may hand out a connection before it has
    // noticed that connection died too. Either way within the attempts, and issued once.
    const assertRetries = (n: number) => (fault === 'terminate' ? assert.ok(n >= 1 && n < TRANSIENT_ATTEMPTS, `${n} retries`) : assert.equal(n, 1));

    test(`code redemption (one statement) hit by ${what} is sent again and redeems once`, async () => {
      const id = await newCode();
      const remove = await failOnce('token_chains', fault);
      const retries: unknown[] = [];
      try {
        assert.equal(await redeem(id, { onRetry: (error) => void retries.push(error) }), true, 'redeemed by the retry');
      } finally {
        await remove();
      }
      assertRetries(retries.length);
      assert.equal(await generationOf(id), 1, 'generation 1: redeemed once');
    });

    test(`a code of the earlier format redeemed in a transaction hit by ${what} is retried once and starts one chain`, async () => {
      const code = await newLegacyCode();
      const remove = await failOnce('authorization_codes', fault);
      let retries = 0;
      try {
        assert.equal(await redeemInTransaction(code, { onRetry: () => void retries++ }), true);
      } finally {
        await remove();
      }
      assert.equal(retries, 1);
      assert.equal(await chainCount(code.chain_id), 1);
    });

    test(`a code of the earlier format redeemed in one statement hit by ${what} is sent again and starts one chain`, async () => {
      const code = await newLegacyCode();
      const remove = await failOnce('authorization_codes', fault);
      let retries = 0;
      try {
        assert.equal(await tokens.redeemCodeWithChain(database.db, code.code_hash, Date.now(), chainFor(code), { onRetry: () => void retries++ }), true);
      } finally {
        await remove();
      }
      assertRetries(retries);
      assert.equal(await chainCount(code.chain_id), 1);
    });

    test(`refresh rotation hit by ${what} is sent again: the chain moves on one generation, "only the most recently issued one" is live`, async () => {
      const id = await newCode();
      assert.equal(await redeem(id), true);
      const remove = await failOnce('token_chains', fault);
      let retries = 0;
      let rotated: tokens.ChainRow | undefined;
      try {
        rotated = await tokens.rotateChain(database.db, { id, generation: 1, clientId, now: Date.now(), issuance: `rotation-${++faults}` }, { onRetry: () => void retries++ });
      } finally {
        await remove();
      }
      assertRetries(retries);
      assert.equal(rotated?.generation, 2, 'rotated once');
      assert.equal(await generationOf(id), 2, 'not twice');
    });
  }

  test('"a retry after a rollback cannot issue twice": another request redeems the code between the failed attempt and the retry → the retry issues nothing', async () => {
    const id = await newCode();
    const remove = await failOnce('token_chains', 'deadlock_detected');
    let winner: unknown;
    try {
      const retried = await redeem(id, { onRetry: async () => void (winner = await redeem(id)) });
      assert.equal(retried, false, 'the retry lost the conditional UPDATE: no tokens');
    } finally {
      await remove();
    }
    assert.equal(winner, true, 'the other request got the tokens');
    assert.equal(await generationOf(id), 1);
  });

  test('a connection that dies at COMMIT under the one statement: sent again, the condition decides afresh (nothing was committed), issued once', async () => {
    const id = await newCode();
    const remove = await failOnce('token_chains', 'terminate', true);
    let retries = 0;
    try {
      assert.equal(await redeem(id, { onRetry: () => void retries++ }), true);
    } finally {
      await remove();
    }
    assert.ok(retries >= 1 && retries < TRANSIENT_ATTEMPTS, `${retries} retries`);
    assert.equal(await generationOf(id), 1);
    assert.equal(await redeem(id), false, 'and never again');
  });

  test('fails because the connection dies during COMMIT of a transaction: not retried, answered as unavailable; nothing committed, so the client\'s next try is issued once', async () => {
    const code = await newLegacyCode();
    const remove = await failOnce('authorization_codes', 'terminate', true);
    let retries = 0;
    try {
      await assert.rejects(redeemInTransaction(code, { onRetry: () => void retries++ }), (error: unknown) => error instanceof CommitOutcomeUnknownError && isDatabaseUnavailable(error));
    } finally {
      await remove();
    }
    assert.equal(retries, 0);
    assert.equal((await tokens.findCode(database.db, code.code_hash))?.redeemed_at, null, 'PostgreSQL did not commit');
    assert.equal(await redeemInTransaction(code), true);
    assert.equal(await chainCount(code.chain_id), 1);
  });
});
