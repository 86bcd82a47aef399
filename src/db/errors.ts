// Recognising database errors the same way on both dialects.

function codeOf(error: unknown): string | undefined {
  if (typeof error === 'object' && error !== null && 'code' in error) {
    const code = (error as { code: unknown }).code;
    return typeof code === 'string' ? code : undefined;
  }
  return undefined;
}

/** A UNIQUE or PRIMARY KEY constraint refused the write. */
export function isUniqueViolation(error: unknown): boolean {
  const code = codeOf(error);
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/**
 * A serialization failure (40001) or a deadlock (40P01): PostgreSQL rolled the whole transaction back,
 * whichever statement (COMMIT included) raised it, so running it again is safe.
 */
export function isRolledBackByServer(error: unknown): boolean {
  const code = codeOf(error);
  return code === '40001' || code === '40P01';
}

/** PostgreSQL connection errors pg raises without a code: the connection ended under a query. */
const CONNECTION_LOST_MESSAGES = [/^Connection terminated/, /is not queryable/];

/**
 * The connection went away under a query — a reset, a terminated backend, a server shutting down:
 * whatever had not committed is gone with it.
 */
export function isConnectionLost(error: unknown): boolean {
  const code = codeOf(error);
  if (code !== undefined) return ['ECONNRESET', 'EPIPE', 'ECONNREFUSED', '57P01', '57P02', '57P03', '08000', '08001', '08003', '08004', '08006'].includes(code);
  const message = error instanceof Error ? error.message : '';
  return CONNECTION_LOST_MESSAGES.some((pattern) => pattern.test(message));
}

/**
 * Messages of the PostgreSQL driver's own failures, raised without a code: no connection within the
 * pool's connect timeout, a connection that ended under a query.
 */
const UNAVAILABLE_MESSAGES = [/^timeout exceeded when trying to connect/, /^Connection terminated due to connection timeout/, /^timeout expired/];

/**
 * SQLSTATEs and system error codes that mean "the database cannot do this now": not reachable
 * (refused, reset, timed out, shut down, starting up), refusing connections (55000: a database with
 * ALLOW_CONNECTIONS false; 53300: too many connections), out of resources (class 53), a statement
 * cancelled by statement_timeout (57014), a read-only standby (25006), commit outcome unknown (08007).
 */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  '57P01',
  '57P02',
  '57P03',
  '57014',
  '55000',
  '25006',
  '53000',
  '53100',
  '53200',
  '53300',
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  '08007',
]);

/** The database could not be reached or is not writable: the request may succeed later (503, not 500). */
export function isDatabaseUnavailable(error: unknown): boolean {
  const code = codeOf(error);
  if (!code) {
    const message = error instanceof Error ? error.message : '';
    return isConnectionLost(error) || UNAVAILABLE_MESSAGES.some((pattern) => pattern.test(message));
  }
  return (
    UNAVAILABLE_CODES.has(code) ||
    code.startsWith('SQLITE_BUSY') ||
    code.startsWith('SQLITE_LOCKED') ||
    code.startsWith('SQLITE_READONLY') ||
    code.startsWith('SQLITE_CANTOPEN') ||
    code.startsWith('SQLITE_IOERR') ||
    code === 'SQLITE_FULL' ||
    code === 'SQLITE_NOMEM' ||
    code === 'SQLITE_PROTOCOL'
  );
}

/** SQLite could not take a lock another connection holds (another process writing). */
export function isSqliteBusy(error: unknown): boolean {
  const code = codeOf(error);
  return code !== undefined && code.startsWith('SQLITE_BUSY');
}
