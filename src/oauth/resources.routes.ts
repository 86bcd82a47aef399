// GET /.well-known/oauth-protected-resource[/mcp] (RFC 9728) and /.well-known/oauth-authorization-server
// (RFC 8414) — HTTP in and out only; the documents are built in resources.ts.
import type { FastifyInstance, FastifyReply } from 'fastify';
import { authorizationServerMetadata } from './discovery.ts';
import { AUTHORIZATION_SERVER_METADATA_PATH, MCP_RESOURCE_METADATA_PATH, PROTECTED_RESOURCE_METADATA_PATH, protectedResourceMetadata } from './resources.ts';

/** Public documents, fetched by agents (some from a browser): cacheable briefly, readable from any origin. */
function sendMetadata(reply: FastifyReply, document: unknown): FastifyReply {
  return reply.header('cache-control', 'public, max-age=300').header('vary', 'Host').header('access-control-allow-origin', '*').type('application/json; charset=utf-8').send(document);
}

export async function resourceMetadataRoutes(app: FastifyInstance, { registration }: { registration: 'open' | 'closed' }): Promise<void> {
  // RFC 9728 §3.1: the resource `{origin}/mcp` has its metadata at the well-known path with `/mcp`
  // appended; the root variant answers the same for clients that look there first.
  for (const path of [MCP_RESOURCE_METADATA_PATH, PROTECTED_RESOURCE_METADATA_PATH]) {
    app.get(path, async (request, reply) => sendMetadata(reply, protectedResourceMetadata(request.servedOrigin.origin)));
  }
  app.get(AUTHORIZATION_SERVER_METADATA_PATH, async (request, reply) => sendMetadata(reply, authorizationServerMetadata(request.servedOrigin.origin, { registration })));
}
