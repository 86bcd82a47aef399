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

/** The database could not be reached or is not writable: the request may succeed later (503, not 500). */
export function isDatabaseUnavailable(error: unknown): boolean {
  const code = codeOf(error);
  if (!code) return false;
  return (
    ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', '57P01', '57P02', '57P03', '53300', '08000', '08003', '08006', '08001', '08004'].includes(code) ||
    code.startsWith('SQLITE_BUSY') ||
    code.startsWith('SQLITE_READONLY') ||
    code.startsWith('SQLITE_CANTOPEN') ||
    code.startsWith('SQLITE_IOERR') ||
    code === 'SQLITE_FULL'
  );
}
