// One place that turns what went wrong into the admin API's answer: `{"error","message"}` with a
// fitting status. Domain errors keep their message (it says what to do); anything unexpected is a
// plain 500 whose details go to the log only.
import { ApiKeyError } from '../accounts/api-keys/api-keys.ts';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AccountCursorError } from '../accounts/account-admin.ts';
import { AccountError } from '../accounts/accounts.ts';
import { AuditQueryError } from '../audit/audit.ts';
import { ClientError } from '../clients/clients.ts';
import { isDatabaseUnavailable } from '../db/errors.ts';
import { answerGoneClient, clientWentAway } from '../web/client-gone.ts';
import { StorageUnavailableError } from '../storage/object-store.ts';
import { ImportFileError } from '../portability/records.ts';

/** A 404 for a read; changes get theirs from the domain (a not_found error). */
export class AdminNotFound extends Error {
  override name = 'AdminNotFound';
}

const CONFLICTS = new Set(['email_taken', 'phone_taken']);

function statusOf(error: unknown): { status: number; code: string } | undefined {
  if (error instanceof AdminNotFound) return { status: 404, code: 'not_found' };
  if (error instanceof AccountError || error instanceof ClientError) {
    if (error.code === 'not_found') return { status: 404, code: 'not_found' };
    return { status: CONFLICTS.has(error.code) ? 409 : 400, code: error.code };
  }
  if (error instanceof ApiKeyError) return { status: error.code === 'not_found' ? 404 : 400, code: error.code };
  if (error instanceof AccountCursorError || error instanceof AuditQueryError) return { status: 400, code: error.code };
  if (error instanceof ImportFileError) return { status: 400, code: 'bad_request' };
  return undefined;
}

export function adminErrorHandler(error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  reply.header('cache-control', 'no-store');
  if (clientWentAway(request, error)) return answerGoneClient(request, reply);
  const known = statusOf(error);
  if (known) return reply.code(known.status).send({ error: known.code, message: error.message });
  if (error instanceof StorageUnavailableError) {
    request.log.error({ err: error }, 'object storage unavailable');
    return reply.code(503).header('retry-after', '5').send({ error: 'unavailable', message: 'Object storage cannot be reached; nothing was changed. Try again in a moment.' });
  }
  if (isDatabaseUnavailable(error)) {
    request.log.error({ err: error }, 'database unavailable');
    return reply.code(503).header('retry-after', '5').send({ error: 'unavailable', message: 'The database cannot be reached. Try again in a moment.' });
  }
  const status = 'statusCode' in error && typeof error.statusCode === 'number' ? error.statusCode : 500;
  if (status >= 400 && status < 500) {
    // Schema validation and body parsing: Fastify's message names the field ("body/email must be string").
    const code = status === 400 ? 'bad_request' : status === 413 ? 'payload_too_large' : status === 415 ? 'unsupported_media_type' : 'bad_request';
    return reply.code(status).send({ error: code, message: error.message });
  }
  request.log.error({ err: error }, 'unexpected error');
  return reply.code(500).send({ error: 'server_error', message: 'The server could not complete the request. Try again later; the log has the details.' });
}
