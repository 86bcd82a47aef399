// The only place with queries on authorization codes, access tokens and refresh tokens.
// Rules that must hold under concurrency are single conditional statements here.
import type { CompiledQuery } from 'kysely';
import type { Db } from '../db/database.ts';
import { withTransientRetry } from '../db/transient.ts';
import { compiledOnce } from './compiled-query.ts';
import type { AccessTokensTable, AuthorizationCodesTable, ClientsTable, RefreshTokensTable, UsersTable } from '../db/schema.ts';

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

/** An access token with its application and its person (each undefined when that row is gone). */
export type AccessTokenWithOwners = { token: AccessTokenRow; client: ClientsTable | undefined; person: TokenPersonRow | undefined };

/**
 * Userinfo's statement: the access token, with its application's and its person's columns as scalar
 * subqueries on their primary keys; the one parameter is the token hash. Not LEFT JOINs: on the
 * bundled SQLite (built with STAT4) a join with a bound parameter is planned again on every run,
 * about 25 µs per joined table, more than the separate lookups cost; scalar subqueries are not.
 */
function userinfoQuery(db: Db) {
  return db
    .selectFrom('access_tokens as t')
    .select(['t.token_hash', 't.client_id', 't.sub', 't.scope', 't.chain_id', 't.created_at', 't.expires_at', 't.revoked_at'])
    .select((eb) => {
      const client = () => eb.selectFrom('clients as c').whereRef('c.client_id', '=', 't.client_id');
      const person = () => eb.selectFrom('users as u').whereRef('u.sub', '=', 't.sub');
      return [
        client().select('c.client_id').as('c_client_id'),
        client().select('c.name').as('c_name'),
        client().select('c.secret_hash').as('c_secret_hash'),
        client().select('c.redirect_uris').as('c_redirect_uris'),
        client().select('c.scopes').as('c_scopes'),
        client().select('c.is_public').as('c_is_public'),
        client().select('c.enabled').as('c_enabled'),
        client().select('c.allowed_origins').as('c_allowed_origins'),
        client().select('c.created_at').as('c_created_at'),
        client().select('c.updated_at').as('c_updated_at'),
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

type UserinfoStatement = ReturnType<ReturnType<typeof userinfoQuery>['compile']>;
type UserinfoRow = UserinfoStatement extends CompiledQuery<infer Row> ? Row : never;

/**
 * Compiled once per database handle (the SQL differs by dialect): building this statement with Kysely
 * takes longer than running it (about 80 µs a call for 27 aliased columns).
 */
const userinfoStatements = new WeakMap<Db, UserinfoStatement>();

function userinfoStatement(db: Db): UserinfoStatement {
  let statement = userinfoStatements.get(db);
  if (statement === undefined) {
    statement = userinfoQuery(db).compile();
    if (statement.parameters.length !== 1) throw new Error('the userinfo statement must have exactly one parameter, the token hash');
    userinfoStatements.set(db, statement);
  }
  return statement;
}

/**
 * Userinfo's read: the access token, its application and its person in one statement (primary-key
 * probes) instead of three round trips. A token whose application or person is gone is still found,
 * with that part undefined, so it is refused for that reason.
 */
export async function findAccessTokenWithOwners(db: Db, tokenHash: string): Promise<AccessTokenWithOwners | undefined> {
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
  // The application (person) is there when its primary key is; its NOT NULL columns are then set.
  const client: ClientsTable | undefined =
    row.c_client_id === null
      ? undefined
      : {
          client_id: row.c_client_id,
          name: row.c_name!,
          secret_hash: row.c_secret_hash,
          redirect_uris: row.c_redirect_uris!,
          scopes: row.c_scopes!,
          is_public: row.c_is_public!,
          enabled: row.c_enabled!,
          allowed_origins: row.c_allowed_origins!,
          created_at: row.c_created_at!,
          updated_at: row.c_updated_at!,
        };
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
  return { token, client, person };
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
