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

/** The database could not be reached or is not writable: the request may succeed later (503, not 500). */
export function isDatabaseUnavailable(error: unknown): boolean {
  const code = codeOf(error);
  if (!code) return isConnectionLost(error);
  return (
    ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', '57P01', '57P02', '57P03', '53300', '08000', '08003', '08006', '08001', '08004', '08007'].includes(code) ||
    code.startsWith('SQLITE_BUSY') ||
    code.startsWith('SQLITE_READONLY') ||
    code.startsWith('SQLITE_CANTOPEN') ||
    code.startsWith('SQLITE_IOERR') ||
    code === 'SQLITE_FULL'
  );
}
