// pino logger for the service. Request logs carry method, path (never the query string, which can hold
// codes or states), status and timing — never headers, bodies, cookies, passwords, secrets, codes or tokens.
import pino, { type DestinationStream, type Logger } from 'pino';
import type { Settings } from '../config/settings.ts';

/** Field names whose values are replaced wherever they appear in a logged object. */
export const REDACTED_FIELDS = [
  'password',
  'client_secret',
  'code',
  'code_verifier',
  'access_token',
  'refresh_token',
  'id_token',
  'id_token_hint',
  'private_key_enc',
  'token',
  'authorization',
  'cookie',
  'set-cookie',
  'secret',
];

/**
 * What a redacted field is replaced with. One exception: `code` is also the name of an error's code
 * (`err.code`: SQLITE_FULL, ECONNREFUSED, a PostgreSQL SQLSTATE like 23505, errno numbers), which an
 * operator needs. Those are upper-case identifiers, digits and underscores, or numbers — a shape no
 * authorization code has (32 random bytes in mixed-case base64url, ending in `=`) — and are kept.
 */
export function censor(value: unknown, path: string[]): unknown {
  if (path.at(-1) === 'code' && (typeof value === 'number' || (typeof value === 'string' && /^[A-Z0-9_]{1,64}$/.test(value)))) return value;
  return '[redacted]';
}

export function createLogger(level: Settings['logLevel'], destination?: DestinationStream): Logger {
  const paths = REDACTED_FIELDS.flatMap((f) => [f, `*.${f}`, `*.*.${f}`, `req.headers.${f}`, `res.headers["${f}"]`]);
  return pino(
    {
      level,
      base: { service: 'signet' },
      redact: { paths, censor },
      serializers: {
        req(request: { method?: string; url?: string; hostname?: string; ip?: string; id?: string }) {
          const url = request.url ?? '';
          const query = url.indexOf('?');
          return {
            id: request.id,
            method: request.method,
            path: query === -1 ? url : url.slice(0, query),
            host: request.hostname,
            remoteAddress: request.ip,
          };
        },
        res(reply: { statusCode?: number }) {
          return { statusCode: reply.statusCode };
        },
      },
    },
    destination,
  );
}
