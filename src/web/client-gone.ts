// A client that closes its connection while its request body is still arriving: Node fails the body
// read with `aborted` (code ECONNRESET). That is the client's doing, not an outage — without this
// check the ECONNRESET would be read as a lost database connection and logged as an error.
import type { FastifyReply, FastifyRequest } from 'fastify';

export function clientWentAway(request: FastifyRequest, error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'ECONNRESET' && (error as Error).message === 'aborted' && request.raw.destroyed;
}

/** Notes it at info level and ends the reply (nobody is left to read it). */
export function answerGoneClient(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  request.log.info({ event: 'client_gone' }, 'the client closed the connection before its request was read');
  return reply.code(400).send();
}
