// The only place with queries on authorization codes, access tokens and refresh tokens.
// Rules that must hold under concurrency are single conditional statements here.
import { CompiledQuery } from 'kysely';
import { isPostgres, type Db } from '../db/database.ts';
import { runAtomicStatement, withTransientRetry } from '../db/transient.ts';
import { compiledOnce } from './compiled-query.ts';
import type { AccessTokensTable, AuthorizationCodesTable, Flag, RefreshTokensTable, UsersTable } from '../db/schema.ts';

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

export async function findCodeWithPerson(db: Db, codeHash: string): Promise<{ code: CodeRow; personActive: boolean } | undefined> {
  const [row] = (await findCodeWithPersonStatement(db, { codeHash })).rows;
  if (!row) return undefined;
  const { person_disabled: personDisabled, ...code } = row;
  return { code, personActive: personDisabled === 0 };
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

const findAccessTokenStatement = compiledOnce(['tokenHash'], (db, p) => db.selectFrom('access_tokens').selectAll().where('token_hash', '=', p.tokenHash));

export async function findAccessToken(db: Db, tokenHash: string): Promise<AccessTokenRow | undefined> {
  return (await findAccessTokenStatement(db, { tokenHash })).rows[0];
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

type UserinfoRow = AccessTokenRow & {
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
  const [row] = (await db.executeQuery<UserinfoRow>({ ...statement, parameters: [tokenHash] })).rows;
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
  // The person is there when its primary key is; its NOT NULL columns are then set.
  const person: TokenPersonRow | undefined =
    row.u_sub === null
      ? undefined
      : {
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
  const [row] = (await findRefreshTokenWithPersonStatement(db, { tokenHash })).rows;
  if (!row) return undefined;
  const { person_disabled: personDisabled, ...token } = row;
  return { token, personActive: personDisabled === 0 };
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

/** The pair that replaces a consumed code or refresh token, as stored: keyed hashes only. */
export type NewPairRows = {
  clientId: string;
  now: number;
  accessHash: string;
  accessScope: string;
  accessExpiresAt: number;
  refreshHash: string;
};

/** What a rotation took over from the refresh token it consumed. */
export type RotatedChain = Pick<RefreshTokenRow, 'sub' | 'scope' | 'chain_id' | 'chain_expires_at'>;

/**
 * PostgreSQL: rotation and the new pair in one statement. The conditional UPDATE is the same as
 * rotateRefreshToken's (of concurrent rotations exactly one gets the row: the others block on its row
 * lock, then find it rotated); the INSERTs take their person, chain and expiry from the row it
 * returned, and insert nothing when it returned none. One statement in autocommit is one transaction:
 * the pair commits with the rotation or not at all, so a loser that then revokes everything also
 * revokes the winner's pair — and there are no BEGIN / COMMIT round trips.
 */
const ROTATE_WITH_PAIR_POSTGRES = `with rotated as (
  update refresh_tokens set rotated_at = $3, revoked_at = $3
  where token_hash = $1 and client_id = $2 and rotated_at is null and revoked_at is null and chain_expires_at > $3
  returning sub, scope, chain_id, chain_expires_at
), new_access as (
  insert into access_tokens (token_hash, client_id, sub, scope, chain_id, created_at, expires_at)
  select $4::text, $2::text, sub, $5::text, chain_id, $3::bigint, $6::bigint from rotated
), new_refresh as (
  insert into refresh_tokens (token_hash, client_id, sub, scope, chain_id, created_at, chain_expires_at)
  select $7::text, $2::text, sub, scope, chain_id, $3::bigint, chain_expires_at from rotated
)
select sub, scope, chain_id, chain_expires_at from rotated`;

/**
 * Rotates the refresh token and stores the pair that replaces it, atomically; undefined when the token
 * was not the live latest one of its chain (another request rotated it first, or it was revoked or
 * expired meanwhile). PostgreSQL: one statement, one round trip. SQLite: one transaction (in process,
 * no round trips to save).
 */
export async function rotateRefreshTokenWithPair(db: Db, tokenHash: string, pair: NewPairRows): Promise<RotatedChain | undefined> {
  const { clientId, now } = pair;
  if (isPostgres(db)) {
    const parameters = [tokenHash, clientId, now, pair.accessHash, pair.accessScope, pair.accessExpiresAt, pair.refreshHash];
    const run = async () => (await db.executeQuery<RotatedChain>(CompiledQuery.raw(ROTATE_WITH_PAIR_POSTGRES, parameters))).rows[0];
    const { value, lostConnection } = await runAtomicStatement(run, { idempotent: true });
    return value ?? (lostConnection ? storedPair(db, pair) : undefined);
  }
  return inTransaction(db, async (trx) => {
    const rotated = await rotateRefreshToken(trx, tokenHash, clientId, now);
    if (!rotated) return undefined;
    await insertPair(trx, pair, rotated);
    return rotated;
  });
}

/** PostgreSQL: redemption and the new pair in one statement (see ROTATE_WITH_PAIR_POSTGRES). */
const REDEEM_WITH_PAIR_POSTGRES = `with redeemed as (
  update authorization_codes set redeemed_at = $2
  where code_hash = $1 and redeemed_at is null and expires_at > $2
  returning code_hash
), new_access as (
  insert into access_tokens (token_hash, client_id, sub, scope, chain_id, created_at, expires_at)
  select $3::text, $4::text, $5::text, $6::text, $7::text, $2::bigint, $8::bigint from redeemed
), new_refresh as (
  insert into refresh_tokens (token_hash, client_id, sub, scope, chain_id, created_at, chain_expires_at)
  select $9::text, $4::text, $5::text, $10::text, $7::text, $2::bigint, $11::bigint from redeemed
)
select code_hash from redeemed`;

/**
 * Redeems the code (single use: one conditional UPDATE) and stores the pair issued for it, atomically.
 * Returns whether this call redeemed it. PostgreSQL: one statement; SQLite: one transaction.
 */
export async function redeemCodeWithPair(db: Db, codeHash: string, pair: NewPairRows, chain: RotatedChain): Promise<boolean> {
  const { now } = pair;
  if (isPostgres(db)) {
    const parameters = [codeHash, now, pair.accessHash, pair.clientId, chain.sub, pair.accessScope, chain.chain_id, pair.accessExpiresAt, pair.refreshHash, chain.scope, chain.chain_expires_at];
    const run = async () => (await db.executeQuery(CompiledQuery.raw(REDEEM_WITH_PAIR_POSTGRES, parameters))).rows.length === 1;
    const { value, lostConnection } = await runAtomicStatement(run, { idempotent: true });
    return value || (lostConnection && (await storedPair(db, pair)) !== undefined);
  }
  return inTransaction(db, async (trx) => {
    if (!(await redeemCode(trx, codeHash, now))) return false;
    await insertPair(trx, pair, chain);
    return true;
  });
}

/**
 * After a connection was lost under an attempt and the retry changed nothing: did the lost attempt
 * commit? Its pair is then stored under this call's hashes (no other request has them), and this call
 * is the one that rotated or redeemed — issued once, as the spec asks, and answered with that pair.
 */
async function storedPair(db: Db, pair: NewPairRows): Promise<RotatedChain | undefined> {
  const row = await findRefreshToken(db, pair.refreshHash);
  return row && { sub: row.sub, scope: row.scope, chain_id: row.chain_id, chain_expires_at: row.chain_expires_at };
}

async function insertPair(db: Db, pair: NewPairRows, chain: RotatedChain): Promise<void> {
  await insertAccessToken(db, {
    token_hash: pair.accessHash,
    client_id: pair.clientId,
    sub: chain.sub,
    scope: pair.accessScope,
    chain_id: chain.chain_id,
    created_at: pair.now,
    expires_at: pair.accessExpiresAt,
    revoked_at: null,
  });
  await insertRefreshToken(db, {
    token_hash: pair.refreshHash,
    client_id: pair.clientId,
    sub: chain.sub,
    scope: chain.scope,
    chain_id: chain.chain_id,
    created_at: pair.now,
    chain_expires_at: chain.chain_expires_at,
    rotated_at: null,
    revoked_at: null,
  });
}

const TOKEN_TABLES = ['access_tokens', 'refresh_tokens'] as const;
export type TokenKind = 'access' | 'refresh';

/** How many tokens of each kind a mass revocation revoked (those already revoked are not counted). */
export type RevokedCounts = { access: number; refresh: number };

/** Revokes every access and refresh token of one person for one application. */
export async function revokeAllForUserAndClient(db: Db, sub: string, clientId: string, now: number): Promise<RevokedCounts> {
  const counts = { access: 0, refresh: 0 };
  for (const table of TOKEN_TABLES) {
    const result = await db.updateTable(table).set({ revoked_at: now }).where('sub', '=', sub).where('client_id', '=', clientId).where('revoked_at', 'is', null).executeTakeFirst();
    counts[table === 'access_tokens' ? 'access' : 'refresh'] = Number(result.numUpdatedRows);
  }
  return counts;
}

/** Revokes every token issued from one code (the chain that code started). */
export async function revokeChain(db: Db, chainId: string, now: number): Promise<RevokedCounts> {
  const counts = { access: 0, refresh: 0 };
  for (const table of TOKEN_TABLES) {
    const result = await db.updateTable(table).set({ revoked_at: now }).where('chain_id', '=', chainId).where('revoked_at', 'is', null).executeTakeFirst();
    counts[table === 'access_tokens' ? 'access' : 'refresh'] = Number(result.numUpdatedRows);
  }
  return counts;
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
 * their expiry, refresh tokens whose chain has ended (a rotated one is kept until then, so a replay
 * is still recognised). Returns how many rows went.
 */
export async function deleteExpired(db: Db, codesBefore: number, accessTokensBefore: number, chainsBefore: number): Promise<number> {
  const codes = await db.deleteFrom('authorization_codes').where('expires_at', '<', codesBefore).executeTakeFirst();
  const access = await db.deleteFrom('access_tokens').where('expires_at', '<', accessTokensBefore).executeTakeFirst();
  const refresh = await db.deleteFrom('refresh_tokens').where('chain_expires_at', '<', chainsBefore).executeTakeFirst();
  return Number(codes.numDeletedRows + access.numDeletedRows + refresh.numDeletedRows);
}
