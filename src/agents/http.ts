// POST /mcp — the Model Context Protocol over Streamable HTTP (operator contract "Agents and document
// APIs"). HTTP in and out only: the bearer check, then one stateless SDK server and transport per
// request, bound to the person's tasks (task-backend.ts). Stateless, so any node behind a round-robin
// proxy answers any request: no session is kept between requests; what they share is the database and storage.
// The SDK is imported on the first request, so a server that no agent uses never loads it.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../config/clock.ts';
import type { Db } from '../db/database.ts';
import { isDatabaseUnavailable } from '../db/errors.ts';
import { bearerToken, hasScope, verifyAccessToken, type VerifiedAccessToken } from '../oauth/access-tokens.ts';
import { DETAIL_UNKNOWN_TOKEN, OAuthError } from '../oauth/errors.ts';
import { failureLimits, type FailureLimit } from '../oauth/rate-limits.ts';
import { MINUTE } from '../config/clock.ts';
import { DOCUMENTS_SCOPE, isForMcp, MCP_RESOURCE_PATH, mcpChallenge, mcpResource } from '../oauth/resources.ts';
import type { TaskContext } from '../tasks/tasks.ts';
import { createTaskBackend } from './task-backend.ts';

export type AgentRoutesOptions = {
  ctx: { db: Db; clock: Clock; hashKey: Buffer; tasks: TaskContext };
  localeOf: (request: FastifyRequest) => string;
  /** version reported to clients in initialize */
  version: string;
  /** how often a waiting tool reads its task, and how long it waits (tests shorten them) */
  wait?: { pollMs: number; maxWaitMs: number };
};

const INSTRUCTIONS = [
  'Signet parses and translates PDF documents for the signed-in person.',
  'parse_pdf returns a PDF\'s Markdown; translate_pdf returns translated PDFs as resource links (read them with resources/read).',
  'Every call makes a task in the person\'s task list; list_tasks and get_task show them.',
].join(' ');

declare module 'fastify' {
  interface FastifyRequest {
    /** the verified bearer token of an /mcp request */
    agentToken?: VerifiedAccessToken;
  }
}

/**
 * Requests at /mcp from one address with a token Signet never issued (as at userinfo). No token at all
 * does not count (every agent's first request has none: that is how it discovers the server), nor
 * does an expired or revoked one (agents present them in normal use and refresh on the 401).
 */
export const MCP_FAILURES_PER_ADDRESS: FailureLimit = { name: 'mcp-failures:address', max: 1000, windowMs: 10 * MINUTE };

const TRANSPORT_HEADERS = ['accept', 'content-type', 'mcp-protocol-version', 'mcp-session-id', 'last-event-id'] as const;


export async function agentRoutes(app: FastifyInstance, options: AgentRoutesOptions): Promise<void> {
  const { ctx } = options;
  const wait = options.wait ?? { pollMs: 1000, maxWaitMs: 10 * 60_000 };
  // A base64 PDF at the upload limit, plus the JSON-RPC around it.
  const bodyLimit = Math.ceil((ctx.tasks.uploadMaxBytes * 4) / 3) + 1024 * 1024;

  /**
   * RFC 6750 §3 and the MCP authorization spec: no token → 401 naming the resource metadata (no error
   * code); a token that is not live, or not issued for this resource → 401 `invalid_token`; a live
   * token for /mcp without the scope `documents` → 403 `insufficient_scope`.
   */
  const challenge = (reply: FastifyReply, origin: string, status: 401 | 403, refusal?: { error: 'invalid_token' | 'insufficient_scope'; description: string }) =>
    reply
      .code(status)
      .header('www-authenticate', mcpChallenge(origin, refusal))
      .header('cache-control', 'no-store')
      // The body in the shape of every non-OAuth path, {error, message}; clients act on the header.
      .send({ error: refusal?.error ?? 'invalid_token', message: refusal?.description ?? 'An access token is required: sign in through this server\'s OAuth (its metadata is named in WWW-Authenticate).' });

  /** 429 in the same shape, with Retry-After and without a Bearer challenge (the token may be fine). */
  const tooMany = (reply: FastifyReply, error: OAuthError) =>
    reply
      .code(429)
      .header('retry-after', String(error.retryAfterSeconds ?? 60))
      .header('cache-control', 'no-store')
      .send({ error: 'too_many_requests', message: error.description });

  const limits = failureLimits({ db: ctx.db, clock: ctx.clock, perAddress: MCP_FAILURES_PER_ADDRESS, countsAsFailure: (error) => error.error === 'invalid_token' && error.detail === DETAIL_UNKNOWN_TOKEN });

  const authenticate = async (request: FastifyRequest, reply: FastifyReply) => {
    const origin = request.servedOrigin.origin;
    const token = bearerToken(request.headers.authorization);
    if (token === undefined) return challenge(reply, origin, 401);
    let verified: VerifiedAccessToken;
    try {
      // An address past its limit gets 429 before any database work.
      limits.refuseBlockedAddress(request.ip);
      verified = await verifyAccessToken(ctx.db, ctx.hashKey, ctx.clock(), token);
    } catch (error) {
      if (error instanceof OAuthError && error.status === 429) return tooMany(reply, error);
      if (error instanceof OAuthError && error.error === 'invalid_token') {
        const answer = await limits.afterRefusal(error, { address: request.ip });
        if (answer instanceof OAuthError && answer.status === 429) return tooMany(reply, answer);
        request.log.info({ detail: error.detail }, 'mcp: access token refused');
        return challenge(reply, origin, 401, { error: 'invalid_token', description: 'The access token is unknown, expired or revoked' });
      }
      throw error;
    }
    // RFC 8707 / MCP: a token is good here only when issued for this resource; a token of an ordinary
    // application (no resource) or for another audience is refused, so tokens are never replayed across.
    if (!isForMcp(verified, origin)) {
      request.log.info({ clientId: verified.client.clientId }, 'mcp: access token not issued for /mcp');
      return challenge(reply, origin, 401, { error: 'invalid_token', description: `The access token was not issued for ${mcpResource(origin)}; ask for it with resource=${mcpResource(origin)}` });
    }
    if (!hasScope(verified.scope, DOCUMENTS_SCOPE)) {
      return challenge(reply, origin, 403, { error: 'insufficient_scope', description: `The access token lacks the scope ${DOCUMENTS_SCOPE}` });
    }
    request.agentToken = verified;
    return undefined;
  };

  // A shutdown does not wait for tool calls that wait for their tasks: they answer with the task as
  // it is (the agent asks again, on whichever node is up), and the task runs on in the workers.
  const stopping = new AbortController();
  app.addHook('preClose', async () => stopping.abort());

  let sdk: Promise<[typeof import('./registry.ts'), typeof import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js')]> | undefined;
  const loadSdk = () => {
    sdk ??= Promise.all([import('./registry.ts'), import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js')]);
    return sdk;
  };

  app.post(MCP_RESOURCE_PATH, { bodyLimit, onRequest: authenticate }, async (request, reply) => {
    const token = request.agentToken!;
    const [{ createAgentServer }, { WebStandardStreamableHTTPServerTransport }] = await loadSdk();
    const backend = createTaskBackend({ ctx: ctx.tasks, sub: token.person.sub, locale: options.localeOf(request), ...wait, stopping: stopping.signal });
    const server = createAgentServer(backend, {
      name: 'signet',
      version: options.version,
      instructions: INSTRUCTIONS,
      unexpected: (error) => {
        if (isDatabaseUnavailable(error)) {
          request.log.error({ err: error }, 'mcp: database unavailable');
          return 'The service is temporarily unavailable. Try again in a moment.';
        }
        request.log.error({ err: error }, 'mcp: unexpected error in a tool');
        return 'The server could not complete the call. Try again later.';
      },
    });
    // Stateless (no session id): each request brings its own server and transport, gone with it.
    // Keep-alive comments every 10 s keep a long tool call's stream under the idle timeout.
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, keepAliveMs: 10_000 });
    await server.connect(transport);
    reply.raw.once('close', () => {
      // The answer was sent, or the agent went away: either way the request's work ends here.
      server.close().catch(() => {});
    });
    // The headers the transport reads; the body is Fastify's, already parsed within bodyLimit.
    const headers = new Headers();
    for (const name of TRANSPORT_HEADERS) {
      const value = request.headers[name];
      if (typeof value === 'string') headers.set(name, value);
    }
    const webRequest = new Request(`${request.servedOrigin.origin}${MCP_RESOURCE_PATH}`, { method: 'POST', headers });
    const response = await transport.handleRequest(webRequest, {
      parsedBody: request.body,
      authInfo: { token: '', clientId: token.client.clientId, scopes: token.scope.split(' '), extra: { sub: token.person.sub } },
    });
    return reply.header('cache-control', 'no-store').send(response);
  });

  // Stateless: no stream of server-initiated messages to open (GET) and no session to end (DELETE).
  const notAllowed = async (_request: FastifyRequest, reply: FastifyReply) =>
    reply.code(405).header('allow', 'POST').header('cache-control', 'no-store').send({ error: 'method_not_allowed', message: 'This MCP server is stateless: send JSON-RPC messages with POST.' });
  app.get(MCP_RESOURCE_PATH, { onRequest: authenticate }, notAllowed);
  app.delete(MCP_RESOURCE_PATH, { onRequest: authenticate }, notAllowed);
}
