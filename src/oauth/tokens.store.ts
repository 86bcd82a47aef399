// The only place with queries on authorization codes, access tokens and refresh tokens.
// Rules that must hold under concurrency are single conditional statements here.
import { CompiledQuery, sql } from 'kysely';
import { isPostgres, type Db } from '../db/database.ts';
import { runAtomicStatement, withTransientRetry, type TransientRetryOptions } from '../db/transient.ts';
import { batchedByTurn, batchPositions } from '../db/batched-statements.ts';
import { compiledOnce, executeCompiled, executeSql } from '../db/compiled-query.ts';
import type { AccessTokensTable, AuthorizationCodesTable, Flag, RefreshTokensTable, TokenChainsTable, UsersTable } from '../db/schema.ts';
import { isChainId } from './token-format.ts';

export type CodeRow = AuthorizationCodesTable;
export type AccessTokenRow = AccessTokensTable;
export type RefreshTokenRow = RefreshTokensTable;

/**
 * Runs `work` in one database transaction (both dialects): consuming a code or a refresh token and
 * inserting the tokens that replace it commit together or not at all. A transient PostgreSQL failure
 * (serialization failure, deadlock, a connection lost before COMMIT) runs the whole transaction again;
 * its conditional UPDATE decides afresh, so a retry can never issue twice.
 */
export function inTransaction<T>(db: Db, work: (trx: Db) => Promise<T>): Promise<T> {
  return withTransientRetry(db, work);
}

export async function insertCode(db: Db, row: CodeRow): Promise<void> {
  await db.insertInto('authorization_codes').values(row).execute();
}

const findCodeStatement = compiledOnce(['codeHash'], (db, p) => db.selectFrom('authorization_codes').selectAll().where('code_hash', '=', p.codeHash));

export async function findCode(db: Db, codeHash: string): Promise<CodeRow | undefined> {
  return (await findCodeStatement(db, { codeHash })).rows[0];
}

/** The code grant's read: the code and whether its person can still be issued tokens (false when the account is gone or disabled), one statement. */
const findCodeWithPersonStatement = compiledOnce(['codeHash'], (db, p) =>
  db
    .selectFrom('authorization_codes as c')
    .selectAll('c')
    .select((eb) => eb.selectFrom('users as u').whereRef('u.sub', '=', 'c.sub').select('u.disabled').as('person_disabled'))
    .where('c.code_hash', '=', p.codeHash),
);

/** A row read with its person's `disabled` flag (null when the person is gone), split: the row, and whether its person can still be issued tokens. */
function withPerson<Row>(read: (Row & { person_disabled: Flag | null }) | undefined): { row: Row; personActive: boolean } | undefined {
  if (!read) return undefined;
  const { person_disabled: personDisabled, ...row } = read;
  return { row: row as Row, personActive: personDisabled === 0 };
}

export async function findCodeWithPerson(db: Db, codeHash: string): Promise<{ code: CodeRow; personActive: boolean } | undefined> {
  const found = withPerson<CodeRow>((await findCodeWithPersonStatement(db, { codeHash })).rows[0]);
  return found && { code: found.row, personActive: found.personActive };
}

/** Marks a code redeemed if, and only if, nobody redeemed it before. Returns whether this call won. */
const redeemCodeStatement = compiledOnce(['codeHash', 'now'], (db, p) =>
  db.updateTable('authorization_codes').set({ redeemed_at: p.now }).where('code_hash', '=', p.codeHash).where('redeemed_at', 'is', null).where('expires_at', '>', p.now),
);

export async function redeemCode(db: Db, codeHash: string, now: number): Promise<boolean> {
  const result = await redeemCodeStatement(db, { codeHash, now });
  return result.numAffectedRows === 1n;
}

const ACCESS_TOKEN_COLUMNS = ['token_hash', 'client_id', 'sub', 'scope', 'chain_id', 'created_at', 'expires_at', 'revoked_at'] as const satisfies readonly (keyof AccessTokenRow)[];
const REFRESH_TOKEN_COLUMNS = ['token_hash', 'client_id', 'sub', 'scope', 'chain_id', 'created_at', 'chain_expires_at', 'rotated_at', 'revoked_at'] as const satisfies readonly (keyof RefreshTokenRow)[];

const insertAccessTokenStatement = compiledOnce(ACCESS_TOKEN_COLUMNS, (db, row) => db.insertInto('access_tokens').values(row));
const insertRefreshTokenStatement = compiledOnce(REFRESH_TOKEN_COLUMNS, (db, row) => db.insertInto('refresh_tokens').values(row));

export async function insertAccessToken(db: Db, row: AccessTokenRow): Promise<void> {
  await insertAccessTokenStatement(db, row);
}

export async function insertRefreshToken(db: Db, row: RefreshTokenRow): Promise<void> {
  await insertRefreshTokenStatement(db, row);
}

/** What userinfo reads of the person an access token names: the profile columns (never the password hash). */
export type TokenPersonRow = Omit<UsersTable, 'password_hash' | 'updated_at'>;

/** An access token with its person (undefined when that row is gone). The application comes from the client cache. */
export type AccessTokenWithPerson = { token: AccessTokenRow; person: TokenPersonRow | undefined };

const TOKEN_COLUMNS = ['t.token_hash', 't.client_id', 't.sub', 't.scope', 't.chain_id', 't.created_at', 't.expires_at', 't.revoked_at'] as const;
const PERSON_COLUMNS = ['sub', 'email', 'email_verified', 'phone_number', 'phone_number_verified', 'name', 'picture', 'disabled', 'created_at'] as const;

/**
 * Userinfo's statement on SQLite: the access token, with its person's columns as scalar subqueries on
 * the primary key; the one parameter is the token hash. Not a LEFT JOIN: on the bundled SQLite (built
 * with STAT4) a join with a bound parameter is planned again on every run, about 25 µs per joined
 * table, more than the separate lookups cost; scalar subqueries are not.
 */
function userinfoQuerySqlite(db: Db) {
  return db
    .selectFrom('access_tokens as t')
    .select(TOKEN_COLUMNS)
    .select((eb) => {
      const person = () => eb.selectFrom('users as u').whereRef('u.sub', '=', 't.sub');
      return [
        person().select('u.sub').as('u_sub'),
        person().select('u.email').as('u_email'),
        person().select('u.email_verified').as('u_email_verified'),
        person().select('u.phone_number').as('u_phone_number'),
        person().select('u.phone_number_verified').as('u_phone_number_verified'),
        person().select('u.name').as('u_name'),
        person().select('u.picture').as('u_picture'),
        person().select('u.disabled').as('u_disabled'),
        person().select('u.created_at').as('u_created_at'),
      ];
    })
    .where('t.token_hash', '=', '');
}

/**
 * The same on PostgreSQL, as a LEFT JOIN: each scalar subquery is a subplan with an index probe of
 * its own (nine probes of one row), where the join probes the person once. The statement is prepared
 * by name per connection (src/db/database.ts), so it is not planned again either.
 */
function userinfoQueryPostgres(db: Db) {
  return db
    .selectFrom('access_tokens as t')
    .leftJoin('users as u', 'u.sub', 't.sub')
    .select(TOKEN_COLUMNS)
    .select(PERSON_COLUMNS.map((c) => `u.${c} as u_${c}` as const))
    .where('t.token_hash', '=', '');
}

/** The person's columns as the userinfo statements return them (null when the person is gone). */
type PersonColumns = {
  u_sub: string | null;
  u_email: string | null;
  u_email_verified: Flag | null;
  u_phone_number: string | null;
  u_phone_number_verified: Flag | null;
  u_name: string | null;
  u_picture: string | null;
  u_disabled: Flag | null;
  u_created_at: number | null;
};

type UserinfoRow = AccessTokenRow & PersonColumns;

/** The person of a userinfo row; undefined when that row is gone (its primary key is null; its NOT NULL columns are set otherwise). */
function personOf(row: PersonColumns): TokenPersonRow | undefined {
  if (row.u_sub === null) return undefined;
  return {
    sub: row.u_sub,
    email: row.u_email,
    email_verified: row.u_email_verified!,
    phone_number: row.u_phone_number,
    phone_number_verified: row.u_phone_number_verified!,
    name: row.u_name,
    picture: row.u_picture,
    disabled: row.u_disabled!,
    created_at: row.u_created_at!,
  };
}

/**
 * Compiled once per database handle (the SQL differs by dialect): building this statement with Kysely
 * takes longer than running it.
 */
const userinfoStatements = new WeakMap<object, CompiledQuery<UserinfoRow>>();

function userinfoStatement(db: Db): CompiledQuery<UserinfoRow> {
  const adapter = db.getExecutor().adapter;
  let statement = userinfoStatements.get(adapter);
  if (statement === undefined) {
    statement = (isPostgres(db) ? userinfoQueryPostgres(db) : userinfoQuerySqlite(db)).compile() as CompiledQuery<UserinfoRow>;
    if (statement.parameters.length !== 1) throw new Error('the userinfo statement must have exactly one parameter, the token hash');
    userinfoStatements.set(adapter, statement);
  }
  return statement;
}

/**
 * Userinfo's read: the access token and its person in one statement (primary-key probes), one round
 * trip on PostgreSQL. A token whose person is gone is still found, with the person undefined, so it is
 * refused for that reason.
 */
export async function findAccessTokenWithPerson(db: Db, tokenHash: string): Promise<AccessTokenWithPerson | undefined> {
  const statement = userinfoStatement(db);
  const [row] = (await executeCompiled<UserinfoRow>(db, { ...statement, parameters: [tokenHash] })).rows;
  if (!row) return undefined;
  const token: AccessTokenRow = {
    token_hash: row.token_hash,
    client_id: row.client_id,
    sub: row.sub,
    scope: row.scope,
    chain_id: row.chain_id,
    created_at: row.created_at,
    expires_at: row.expires_at,
    revoked_at: row.revoked_at,
  };
  const person = personOf(row);
  return { token, person };
}

const findRefreshTokenStatement = compiledOnce(['tokenHash'], (db, p) => db.selectFrom('refresh_tokens').selectAll().where('token_hash', '=', p.tokenHash));

export async function findRefreshToken(db: Db, tokenHash: string): Promise<RefreshTokenRow | undefined> {
  return (await findRefreshTokenStatement(db, { tokenHash })).rows[0];
}

/** A refresh token with whether its person can still be issued tokens (false when the account is gone or disabled). */
export type RefreshTokenWithPerson = { token: RefreshTokenRow; personActive: boolean };

/** The refresh grant's read: the token and its person's `disabled` flag (a scalar subquery on the primary key; null when the person is gone). */
const findRefreshTokenWithPersonStatement = compiledOnce(['tokenHash'], (db, p) =>
  db
    .selectFrom('refresh_tokens as t')
    .selectAll('t')
    .select((eb) => eb.selectFrom('users as u').whereRef('u.sub', '=', 't.sub').select('u.disabled').as('person_disabled'))
    .where('t.token_hash', '=', p.tokenHash),
);

export async function findRefreshTokenWithPerson(db: Db, tokenHash: string): Promise<RefreshTokenWithPerson | undefined> {
  const found = withPerson<RefreshTokenRow>((await findRefreshTokenWithPersonStatement(db, { tokenHash })).rows[0]);
  return found && { token: found.row, personActive: found.personActive };
}

/**
 * Rotation: marks the refresh token rotated (and so revoked: spec "the previous one is revoked at once")
 * if, and only if, it is the live latest one of its chain for this client and the chain has not expired.
 * One conditional UPDATE … RETURNING: of two concurrent calls, exactly one gets the row back; on
 * PostgreSQL the other blocks on the row lock until the winner commits, then sees the rotated row.
 */
const rotateRefreshTokenStatement = compiledOnce(['tokenHash', 'clientId', 'now'], (db, p) =>
  db
    .updateTable('refresh_tokens')
    .set({ rotated_at: p.now, revoked_at: p.now })
    .where('token_hash', '=', p.tokenHash)
    .where('client_id', '=', p.clientId)
    .where('rotated_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('chain_expires_at', '>', p.now)
    .returningAll(),
);

export async function rotateRefreshToken(db: Db, tokenHash: string, clientId: string, now: number): Promise<RefreshTokenRow | undefined> {
  return (await rotateRefreshTokenStatement(db, { tokenHash, clientId, now })).rows[0];
}

// ——— Refresh chains (migration 0010): one row per chain; tokens name it (token-format.ts) ———

export type ChainRow = TokenChainsTable;

const CHAIN_COLUMNS = [
  'id',
  'client_id',
  'sub',
  'scope',
  'generation',
  'created_at',
  'expires_at',
  'rotated_at',
  'issuance',
  'refresh_revoked_at',
  'revoked_at',
  'legacy_chain_id',
  'code_expires_at',
  'redirect_uri',
  'code_challenge',
  'code_challenge_method',
] as const satisfies readonly (keyof ChainRow)[];

const insertChainStatement = compiledOnce(CHAIN_COLUMNS, (db, row) => db.insertInto('token_chains').values(row));
/** issue 28: a code of an OpenID request also stores what its id_tokens will say (the statement above stays as it was for every other). */
const insertChainWithIdTokenContextStatement = compiledOnce([...CHAIN_COLUMNS, 'id_token_context'], (db, row) => db.insertInto('token_chains').values(row));
/** issue 39: a code issued for an RFC 8707 resource stores it too (with or without an id_token context). */
const insertChainWithResourceStatement = compiledOnce([...CHAIN_COLUMNS, 'resource'], (db, row) => db.insertInto('token_chains').values(row));
const insertChainWithIdTokenContextAndResourceStatement = compiledOnce([...CHAIN_COLUMNS, 'id_token_context', 'resource'], (db, row) => db.insertInto('token_chains').values(row));

export async function insertChain(db: Db, row: ChainRow): Promise<void> {
  if (row.resource) {
    if (row.id_token_context) await insertChainWithIdTokenContextAndResourceStatement(db, { ...row, id_token_context: row.id_token_context, resource: row.resource });
    else await insertChainWithResourceStatement(db, { ...row, resource: row.resource });
  } else if (row.id_token_context) await insertChainWithIdTokenContextStatement(db, { ...row, id_token_context: row.id_token_context });
  else await insertChainStatement(db, row);
}

const findChainStatement = compiledOnce(['id'], (db, p) => db.selectFrom('token_chains').selectAll().where('id', '=', p.id));

export async function findChain(db: Db, id: string): Promise<ChainRow | undefined> {
  return (await findChainStatement(db, { id })).rows[0];
}

/** The refresh grant's read: the chain and its person's `disabled` flag (a scalar subquery on the primary key; null when the person is gone). */
const findChainWithPersonStatement = compiledOnce(['id'], (db, p) =>
  db
    .selectFrom('token_chains as c')
    .selectAll('c')
    .select((eb) => eb.selectFrom('users as u').whereRef('u.sub', '=', 'c.sub').select('u.disabled').as('person_disabled'))
    .where('c.id', '=', p.id),
);

export async function findChainWithPerson(db: Db, id: string): Promise<{ chain: ChainRow; personActive: boolean } | undefined> {
  const found = withPerson<ChainRow>((await findChainWithPersonStatement(db, { id })).rows[0]);
  return found && { chain: found.row, personActive: found.personActive };
}

/**
 * Rotation: moves the chain from `generation` to the next if, and only if, that generation is the
 * live one, of this client, neither the chain nor its refresh token is revoked or expired, and its
 * person exists and is not disabled — every rule of a refresh that the database knows. One
 * conditional UPDATE … RETURNING of one row by its primary key: of concurrent rotations exactly one
 * gets the row back (on PostgreSQL the others block on its row lock, then find the generation moved).
 * `issuance` marks this call's win, so after a lost connection it can tell whether it committed.
 */
const rotateChainStatement = compiledOnce(['id', 'generation', 'clientId', 'now', 'issuance'], (db, p) =>
  db
    .updateTable('token_chains')
    .set({ generation: sql<number>`generation + 1`, rotated_at: p.now, issuance: p.issuance })
    .where('id', '=', p.id)
    .where('generation', '=', p.generation)
    .where('client_id', '=', p.clientId)
    .where('revoked_at', 'is', null)
    .where('refresh_revoked_at', 'is', null)
    .where('expires_at', '>', p.now)
    // the person can still be issued tokens (a refresh on the fast path has not read the person)
    .where(sql<boolean>`exists (select 1 from users u where u.sub = token_chains.sub and u.disabled = 0)`)
    .returningAll(),
);

export type Rotation = { id: string; generation: number; clientId: string; now: number; issuance: string };

/**
 * rotateChainStatement for several rotations at once on PostgreSQL (batched-statements.ts): the same
 * conditions, each rotation against its own row; parameters five arrays paired by position, `n` the
 * position (from 1). Two rotations of one row in a batch (one refresh token presented twice at once):
 * PostgreSQL updates a row once per statement, with one of them, and returns it for that one alone — the
 * other gets no row, as when it loses to a concurrent statement. The plan walks the arrays in order
 * (a nested loop over them, probing the primary key), so that is the order the rows are locked in.
 */
const ROTATE_CHAINS_POSTGRES = `update token_chains c
set generation = c.generation + 1, rotated_at = q.now, issuance = q.issuance
from unnest($1::text[], $2::bigint[], $3::text[], $4::bigint[], $5::text[]) with ordinality as q(id, generation, client_id, now, issuance, n)
where ${batchPositions('q.n')} and c.id = q.id and c.generation = q.generation and c.client_id = q.client_id
  and c.revoked_at is null and c.refresh_revoked_at is null and c.expires_at > q.now
  and exists (select 1 from users u where u.sub = c.sub and u.disabled = 0)
returning q.n, c.*`;

/** PostgreSQL: the rotations of refreshes that arrive together go as one statement, one commit (batched-statements.ts). */
const rotateChainPostgres = batchedByTurn<Rotation, ChainRow>({
  one: (db, rotation) => issuingStatement(db, rotation, async () => (await rotateChainStatement(db, rotation)).rows[0]),
  async many(db, rotations) {
    // Sent in the order of their chain ids, so two batches (two processes) lock the rows they share in
    // the same order and cannot deadlock each other.
    const order = rotations.map((_, index) => index).sort((a, b) => (rotations[a]!.id < rotations[b]!.id ? -1 : rotations[a]!.id > rotations[b]!.id ? 1 : a - b));
    const sorted = order.map((index) => rotations[index]!);
    const columns = [sorted.map((r) => r.id), sorted.map((r) => r.generation), sorted.map((r) => r.clientId), sorted.map((r) => r.now), sorted.map((r) => r.issuance)];
    const { value: rows, lostConnection } = await runAtomicStatement(async () => (await executeSql<ChainRow & { n: number }>(db, ROTATE_CHAINS_POSTGRES, columns)).rows, { idempotent: true });
    const rotated = new Map<number, ChainRow>(rows.map(({ n, ...chain }) => [order[n - 1]!, chain]));
    // As issuingStatement: after a lost connection whose retry changed nothing, a rotation the lost attempt committed carries its issuance mark.
    if (lostConnection) {
      for (const [index, rotation] of rotations.entries()) {
        if (rotated.has(index)) continue;
        const won = await wonLostIssuance(db, rotation.id, rotation.issuance);
        if (won) rotated.set(index, won);
      }
    }
    return rotated;
  },
});

/** Rotates the chain (see rotateChainStatement); the chain as it is after this call's rotation, or undefined when another request rotated it first or it was revoked or expired. */
export async function rotateChain(db: Db, rotation: Rotation, retry: TransientRetryOptions = {}): Promise<ChainRow | undefined> {
  // A caller with its own retry options (tests of the retries) gets its own statement.
  if (isPostgres(db) && Object.keys(retry).length === 0) return rotateChainPostgres(db, rotation);
  return issuingStatement(db, rotation, async () => (await rotateChainStatement(db, rotation)).rows[0], retry);
}

/**
 * Runs a statement that issues (a rotation, a redemption) and returns the chain it issued on, or
 * undefined when its condition refused. SQLite: as it is. PostgreSQL: one statement in autocommit, so
 * safe to send again after a transient failure (its condition decides afresh); after a lost connection
 * whose retry changed nothing, the chain carrying this call's `issuance` mark says the lost attempt
 * committed (wonLostIssuance).
 */
async function issuingStatement(db: Db, mark: { id: string; issuance: string }, run: () => Promise<ChainRow | undefined>, retry: TransientRetryOptions = {}): Promise<ChainRow | undefined> {
  if (!isPostgres(db)) return run();
  const { value, lostConnection } = await runAtomicStatement(run, { ...retry, idempotent: true });
  return value ?? (lostConnection ? wonLostIssuance(db, mark.id, mark.issuance) : undefined);
}

/**
 * After a connection was lost under an attempt and the retry changed nothing: did the lost attempt
 * commit? Its issuance value is then the chain's (no other request has it), and this call is the one
 * that rotated or redeemed — issued once, as the spec asks.
 */
async function wonLostIssuance(db: Db, id: string, issuance: string): Promise<ChainRow | undefined> {
  const chain = await findChain(db, id);
  return chain?.issuance === issuance ? chain : undefined;
}

/**
 * Redeeming a code of the chain format: generation 0 → 1, if and only if the code is unredeemed,
 * unexpired and not revoked (the person withdrew the application meanwhile). The chain's end becomes
 * what the spec says — 30 days from the authorization (`chainExpiresAt`); until now it was the code's.
 * One conditional UPDATE … RETURNING by primary key: of concurrent redemptions exactly one gets the
 * row; the others find generation 1 and are the second presentation.
 */
const redeemChainCodeStatement = compiledOnce(['id', 'now', 'issuance', 'chainExpiresAt'], (db, p) =>
  db
    .updateTable('token_chains')
    .set({ generation: sql<number>`1`, rotated_at: p.now, issuance: p.issuance, expires_at: p.chainExpiresAt })
    .where('id', '=', p.id)
    .where(sql<boolean>`generation = 0`)
    .where('revoked_at', 'is', null)
    .where('code_expires_at', '>', p.now)
    .returningAll(),
);

export type CodeRedemption = { id: string; now: number; issuance: string; chainExpiresAt: number };

/**
 * The code grant in one statement, for the common case: the redemption's conditional UPDATE also
 * holds every rule the code's row decides — its application, its redirect URI, its credential, its
 * person still active. `credential` is what the request proved: a client secret that checked and no
 * verifier (the code must then have no challenge), or a verifier (the code's challenge must be its
 * S256 digest, or under any other method the verifier itself). Undefined when any rule fails: nothing
 * is consumed, and the caller reads the code to say which.
 */
// spec: the chain ends 30 days after the person first authorized — the code's issue, the row's created_at.
const CHECKED_REDEMPTION_SET = (p: Record<'now' | 'issuance' | 'chainLifetimeMs', never>) => ({
  generation: sql<number>`1`,
  rotated_at: p.now,
  issuance: p.issuance,
  expires_at: sql<number>`created_at + ${p.chainLifetimeMs}`,
});
const redeemWithSecretStatement = compiledOnce(['id', 'now', 'issuance', 'chainLifetimeMs', 'clientId', 'redirectUri'], (db, p) =>
  db
    .updateTable('token_chains')
    .set(CHECKED_REDEMPTION_SET(p))
    .where('id', '=', p.id)
    .where(sql<boolean>`generation = 0`)
    .where('revoked_at', 'is', null)
    .where('code_expires_at', '>', p.now)
    .where('client_id', '=', p.clientId)
    .where('redirect_uri', '=', p.redirectUri)
    .where('code_challenge', 'is', null)
    .where(sql<boolean>`exists (select 1 from users u where u.sub = token_chains.sub and u.disabled = 0)`)
    .returningAll(),
);
const redeemWithVerifierStatement = compiledOnce(['id', 'now', 'issuance', 'chainLifetimeMs', 'clientId', 'redirectUri', 's256', 'plain'], (db, p) =>
  db
    .updateTable('token_chains')
    .set(CHECKED_REDEMPTION_SET(p))
    .where('id', '=', p.id)
    .where(sql<boolean>`generation = 0`)
    .where('revoked_at', 'is', null)
    .where('code_expires_at', '>', p.now)
    .where('client_id', '=', p.clientId)
    .where('redirect_uri', '=', p.redirectUri)
    .where(sql<boolean>`code_challenge = case when code_challenge_method = 'S256' then ${p.s256} else ${p.plain} end`)
    .where(sql<boolean>`exists (select 1 from users u where u.sub = token_chains.sub and u.disabled = 0)`)
    .returningAll(),
);

export type CheckedCodeRedemption = Omit<CodeRedemption, 'chainExpiresAt'> & { chainLifetimeMs: number; clientId: string; redirectUri: string; credential: { secretChecked: true } | { verifierS256: string; verifier: string } };

export async function redeemChainCodeChecked(db: Db, r: CheckedCodeRedemption): Promise<ChainRow | undefined> {
  const base = { id: r.id, now: r.now, issuance: r.issuance, chainLifetimeMs: r.chainLifetimeMs, clientId: r.clientId, redirectUri: r.redirectUri };
  const run = async () =>
    ('secretChecked' in r.credential ? await redeemWithSecretStatement(db, base) : await redeemWithVerifierStatement(db, { ...base, s256: r.credential.verifierS256, plain: r.credential.verifier })).rows[0];
  return issuingStatement(db, r, run);
}

export async function redeemChainCode(db: Db, redemption: CodeRedemption, retry: TransientRetryOptions = {}): Promise<ChainRow | undefined> {
  return issuingStatement(db, redemption, async () => (await redeemChainCodeStatement(db, redemption)).rows[0], retry);
}

/**
 * PostgreSQL: the code's redemption and its chain in one statement. The conditional UPDATE makes the
 * code single use; the chain is inserted only when it returned the code. One statement in autocommit
 * is one transaction, so a concurrent second redemption that loses (and revokes the chain) finds it.
 */
const REDEEM_WITH_CHAIN_POSTGRES = `with redeemed as (
  update authorization_codes set redeemed_at = $2
  where code_hash = $1 and redeemed_at is null and expires_at > $2
  returning code_hash
), new_chain as (
  insert into token_chains (id, client_id, sub, scope, generation, created_at, expires_at, issuance, legacy_chain_id)
  select $3::text, $4::text, $5::text, $6::text, $7::bigint, $2::bigint, $8::bigint, $9::text, $10::text from redeemed
)
select code_hash from redeemed`;

/**
 * Redeems the code (single use: one conditional UPDATE) and starts its chain, atomically. Returns
 * whether this call redeemed it. PostgreSQL: one statement, one round trip; SQLite: one transaction.
 */
export async function redeemCodeWithChain(db: Db, codeHash: string, now: number, chain: ChainRow, retry: TransientRetryOptions = {}): Promise<boolean> {
  if (isPostgres(db)) {
    const parameters = [codeHash, now, chain.id, chain.client_id, chain.sub, chain.scope, chain.generation, chain.expires_at, chain.issuance, chain.legacy_chain_id];
    const run = async () => ((await db.executeQuery(CompiledQuery.raw(REDEEM_WITH_CHAIN_POSTGRES, parameters))).rows.length === 1 ? chain : undefined);
    return (await issuingStatement(db, chain, run, retry)) !== undefined;
  }
  return inTransaction(db, async (trx) => {
    if (!(await redeemCode(trx, codeHash, now))) return false;
    await insertChain(trx, chain);
    return true;
  });
}

/** PostgreSQL: a refresh token of the earlier format rotated into a new chain, in one statement (see REDEEM_WITH_CHAIN_POSTGRES). */
const ROTATE_LEGACY_INTO_CHAIN_POSTGRES = `with rotated as (
  update refresh_tokens set rotated_at = $3, revoked_at = $3
  where token_hash = $1 and client_id = $2 and rotated_at is null and revoked_at is null and chain_expires_at > $3
  returning sub, scope, chain_id, chain_expires_at
), new_chain as (
  insert into token_chains (id, client_id, sub, scope, generation, created_at, expires_at, issuance, legacy_chain_id)
  select $4::text, $2::text, sub, scope, 1, $3::bigint, chain_expires_at, $5::text, chain_id from rotated
)
select sub, scope, chain_id, chain_expires_at from rotated`;

/**
 * A refresh token from before migration 0010, rotated: the old row is marked rotated (so presenting
 * it again is the replay it always was) and its chain continues as a chain row of generation 1, with
 * the same person, scope and end. Returns the new chain, or undefined when the token was not the live
 * latest one. PostgreSQL: one statement; SQLite: one transaction.
 */
export async function rotateLegacyIntoChain(db: Db, tokenHash: string, clientId: string, now: number, next: { id: string; issuance: string }): Promise<ChainRow | undefined> {
  const chainOf = (old: Pick<RefreshTokenRow, 'sub' | 'scope' | 'chain_id' | 'chain_expires_at'>): ChainRow => ({
    id: next.id,
    client_id: clientId,
    sub: old.sub,
    scope: old.scope,
    generation: 1,
    created_at: now,
    expires_at: old.chain_expires_at,
    rotated_at: null,
    issuance: next.issuance,
    refresh_revoked_at: null,
    revoked_at: null,
    legacy_chain_id: old.chain_id,
    code_expires_at: null,
    redirect_uri: null,
    code_challenge: null,
    code_challenge_method: null,
  });
  if (isPostgres(db)) {
    type Old = Pick<RefreshTokenRow, 'sub' | 'scope' | 'chain_id' | 'chain_expires_at'>;
    const run = async () => {
      const [old] = (await db.executeQuery<Old>(CompiledQuery.raw(ROTATE_LEGACY_INTO_CHAIN_POSTGRES, [tokenHash, clientId, now, next.id, next.issuance]))).rows;
      return old && chainOf(old);
    };
    return issuingStatement(db, next, run);
  }
  return inTransaction(db, async (trx) => {
    const rotated = await rotateRefreshToken(trx, tokenHash, clientId, now);
    if (!rotated) return undefined;
    const chain = chainOf(rotated);
    await insertChain(trx, chain);
    return chain;
  });
}

/** What userinfo reads for an access token of the chain format. */
export type ChainAccessRow = {
  chain: Pick<ChainRow, 'client_id' | 'sub' | 'generation' | 'created_at' | 'revoked_at'> & { resource: string | null };
  /** this access token alone was revoked (the deny list) */
  denied: boolean;
  person: TokenPersonRow | undefined;
};

/**
 * Userinfo's statement for a chain-format token: the chain, whether the token is on the deny list,
 * and the person — primary-key probes, one statement (one round trip on PostgreSQL). SQLite: scalar
 * subqueries (see userinfoQuerySqlite); PostgreSQL: a join. Parameters: the deny-list id, the chain id.
 * On SQLite the person's columns come as one JSON array from one probe of `users` (issue 44: nine
 * scalar subqueries were nine probes, ~30 % more time in SQLite than the array and its JSON.parse).
 */
const CHAIN_USERINFO_SQLITE = `select c.client_id, c.sub, c.generation, c.created_at, c.revoked_at, c.resource,
  exists (select 1 from revoked_access_tokens d where d.id = ?) as denied,
  (select json_array(${PERSON_COLUMNS.map((column) => `u.${column}`).join(', ')}) from users u where u.sub = c.sub) as person
from token_chains c where c.id = ?`;
const CHAIN_USERINFO_POSTGRES = `select c.client_id, c.sub, c.generation, c.created_at, c.revoked_at, c.resource,
  exists (select 1 from revoked_access_tokens d where d.id = $1) as denied,
  ${PERSON_COLUMNS.map((column) => `u.${column} as u_${column}`).join(', ')}
from token_chains c left join users u on u.sub = c.sub where c.id = $2`;

type ChainUserinfoRow = ChainAccessRow['chain'] & PersonColumns & { denied: boolean | number };

type ChainUserinfoRowSqlite = ChainAccessRow['chain'] & { denied: number; person: string | null };

/** The person of CHAIN_USERINFO_SQLITE's JSON array (PERSON_COLUMNS in order); undefined when the row is gone. */
function personOfJson(json: string | null): TokenPersonRow | undefined {
  if (json === null) return undefined;
  const [sub, email, emailVerified, phoneNumber, phoneNumberVerified, name, picture, disabled, createdAt] = JSON.parse(json) as unknown[];
  return {
    sub: sub as string,
    email: email as string | null,
    email_verified: emailVerified as Flag,
    phone_number: phoneNumber as string | null,
    phone_number_verified: phoneNumberVerified as Flag,
    name: name as string | null,
    picture: picture as string | null,
    disabled: disabled as Flag,
    created_at: createdAt as number,
  };
}

/**
 * CHAIN_USERINFO_POSTGRES for several tokens at once (batched-statements.ts): parameters the deny-list ids
 * and the chain ids as two arrays, paired by position; `n` is the pair's position (from 1).
 */
const CHAIN_USERINFO_POSTGRES_MANY = `select q.n, c.client_id, c.sub, c.generation, c.created_at, c.revoked_at, c.resource,
  exists (select 1 from revoked_access_tokens d where d.id = q.deny_id) as denied,
  ${PERSON_COLUMNS.map((column) => `u.${column} as u_${column}`).join(', ')}
from unnest($1::text[], $2::text[]) with ordinality as q(deny_id, chain_id, n)
join token_chains c on c.id = q.chain_id left join users u on u.sub = c.sub
where ${batchPositions('q.n')}`;

const chainOfRow = (row: ChainAccessRow['chain']) => ({ client_id: row.client_id, sub: row.sub, generation: row.generation, created_at: row.created_at, revoked_at: row.revoked_at, resource: row.resource ?? null });
const chainAccessOfPostgres = (row: ChainUserinfoRow): ChainAccessRow => ({ chain: chainOfRow(row), denied: row.denied === true || row.denied === 1, person: personOf(row) });

/** PostgreSQL: the userinfo reads of requests that arrive together go as one statement (batched-statements.ts). */
const findChainForAccessTokenPostgres = batchedByTurn<{ chainId: string; accessTokenId: string }, ChainAccessRow>({
  async one(db, { chainId, accessTokenId }) {
    const [row] = (await executeSql<ChainUserinfoRow>(db, CHAIN_USERINFO_POSTGRES, [accessTokenId, chainId])).rows;
    return row && chainAccessOfPostgres(row);
  },
  async many(db, keys) {
    const { rows } = await executeSql<ChainUserinfoRow & { n: number }>(db, CHAIN_USERINFO_POSTGRES_MANY, [keys.map((key) => key.accessTokenId), keys.map((key) => key.chainId)]);
    return new Map(rows.map((row) => [row.n - 1, chainAccessOfPostgres(row)]));
  },
});

export async function findChainForAccessToken(db: Db, chainId: string, accessTokenId: string): Promise<ChainAccessRow | undefined> {
  if (isPostgres(db)) return findChainForAccessTokenPostgres(db, { chainId, accessTokenId });
  const chainOf = chainOfRow;
  const [row] = (await executeSql<ChainUserinfoRowSqlite>(db, CHAIN_USERINFO_SQLITE, [accessTokenId, chainId])).rows;
  return row && { chain: chainOf(row), denied: row.denied === 1, person: personOfJson(row.person) };
}

/**
 * The revoke endpoint with `token_type_hint=refresh_token`, for a chain-format token: revokes the
 * refresh token if it is the chain's live one and belongs to the client (the access tokens stay, as
 * before). Returns whether something was revoked.
 */
export async function revokeChainRefresh(db: Db, chainId: string, generation: number, clientId: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('token_chains')
    .set({ refresh_revoked_at: now })
    .where('id', '=', chainId)
    .where('generation', '=', generation)
    .where('client_id', '=', clientId)
    .where('refresh_revoked_at', 'is', null)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * The revoke endpoint without hint, for a chain-format access token: puts it on the deny list if it is
 * still valid and belongs to the client (chain of this client, not revoked, not expired), one
 * statement. The entry is forgotten once the token would have expired. Returns whether it was revoked
 * now (false when not found, another client's, already revoked or expired).
 */
export async function denyAccessToken(db: Db, token: { id: string; chainId: string; generation: number; issuedOffset: number }, clientId: string, now: number, lifetimeMs: number): Promise<boolean> {
  const untilAfterStart = token.issuedOffset + lifetimeMs;
  const result = await sql`insert into revoked_access_tokens (id, expires_at)
    select cast(${token.id} as text), c.created_at + cast(${untilAfterStart} as bigint) from token_chains c
    where c.id = ${token.chainId} and c.client_id = ${clientId} and c.generation >= ${token.generation} and c.revoked_at is null
      and c.created_at + cast(${untilAfterStart} as bigint) > ${now}
    on conflict (id) do nothing`.execute(db);
  return Number(result.numAffectedRows ?? 0n) > 0;
}

const TOKEN_TABLES = ['access_tokens', 'refresh_tokens'] as const;
export type TokenKind = 'access' | 'refresh';

/**
 * What a mass revocation revoked (those revoked already are not counted): chains (each takes its
 * access tokens and its refresh token with it), and rows of tokens from before migration 0010.
 */
export type RevokedCounts = { chains: number; access: number; refresh: number };

/** Revokes every access and refresh token of one person for one application. */
export async function revokeAllForUserAndClient(db: Db, sub: string, clientId: string, now: number): Promise<RevokedCounts> {
  const chains = await db.updateTable('token_chains').set({ revoked_at: now }).where('sub', '=', sub).where('client_id', '=', clientId).where('revoked_at', 'is', null).executeTakeFirst();
  return { chains: Number(chains.numUpdatedRows), ...(await revokeEarlierFormat(db, now, [['sub', sub], ['client_id', clientId]])) };
}

/** Revokes the rows of tokens from before migration 0010 that match every column = value of `where`; how many of each kind. */
async function revokeEarlierFormat(db: Db, now: number, where: Array<['sub' | 'client_id' | 'chain_id', string]>): Promise<Omit<RevokedCounts, 'chains'>> {
  const counts = { access: 0, refresh: 0 };
  for (const table of TOKEN_TABLES) {
    let update = db.updateTable(table).set({ revoked_at: now }).where('revoked_at', 'is', null);
    for (const [column, value] of where) update = update.where(column, '=', value);
    counts[table === 'access_tokens' ? 'access' : 'refresh'] = Number((await update.executeTakeFirst()).numUpdatedRows);
  }
  return counts;
}

/** Revokes every token issued from one code (the chain that code started, in either format). */
export async function revokeChain(db: Db, chainId: string, now: number): Promise<RevokedCounts> {
  // A code from before migration 0010 carries a UUID: its chain may have continued as a chain row.
  const column = isChainId(chainId) ? 'id' : 'legacy_chain_id';
  const chains = await db.updateTable('token_chains').set({ revoked_at: now }).where(column, '=', chainId).where('revoked_at', 'is', null).executeTakeFirst();
  if (column === 'id') return { chains: Number(chains.numUpdatedRows), access: 0, refresh: 0 };
  return { chains: Number(chains.numUpdatedRows), ...(await revokeEarlierFormat(db, now, [['chain_id', chainId]])) };
}

/** Revokes one access or refresh token if it belongs to the client. Returns whether something was revoked. */
export async function revokeToken(db: Db, kind: TokenKind, tokenHash: string, clientId: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable(kind === 'access' ? 'access_tokens' : 'refresh_tokens')
    .set({ revoked_at: now })
    .where('token_hash', '=', tokenHash)
    .where('client_id', '=', clientId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Deletes what can no longer be used: codes past their lifetime (plus a margin), access tokens past
 * their expiry (and their deny-list entries), chains and refresh tokens whose chain has ended (a
 * rotated one is kept until then, so a replay is still recognised; the cutoffs lie a day back, longer
 * than an access token issued at a chain's end lives). Returns how many rows went.
 */
export async function deleteExpired(db: Db, codesBefore: number, accessTokensBefore: number, chainsBefore: number): Promise<number> {
  const codes = await db.deleteFrom('authorization_codes').where('expires_at', '<', codesBefore).executeTakeFirst();
  const denied = await db.deleteFrom('revoked_access_tokens').where('expires_at', '<', accessTokensBefore).executeTakeFirst();
  const chains = await db.deleteFrom('token_chains').where('expires_at', '<', chainsBefore).executeTakeFirst();
  const access = await db.deleteFrom('access_tokens').where('expires_at', '<', accessTokensBefore).executeTakeFirst();
  const refresh = await db.deleteFrom('refresh_tokens').where('chain_expires_at', '<', chainsBefore).executeTakeFirst();
  return Number(codes.numDeletedRows + denied.numDeletedRows + chains.numDeletedRows + access.numDeletedRows + refresh.numDeletedRows);
}
