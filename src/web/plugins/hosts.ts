// Two hosts: the service answers for SIGNET_BASE_URL and SIGNET_ALT_BASE_URL. Every absolute URL it
// builds uses the base URL of the host that was asked; a request for any other Host is refused (421)
// and never used to build a URL.
//
// A new route needs nothing to be covered: the check runs for every route of the app, added before or
// after this plugin. A path probed by address rather than by name (a load balancer's health check)
// builds no URL and goes in HOST_EXEMPT. The lookup is precomputed (issue 44): the Host header as
// clients send it — the served host exactly — is one Map probe; only another spelling is lower-cased.
import fp from 'fastify-plugin';
import type { FastifyRequest } from 'fastify';
import { errorPayload } from './error-shape.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The served base URL (origin) whose host this request named. */
    servedOrigin: URL;
  }
}

/** Paths that build no URL and are probed by load balancers by address: no Host check. */
const HOST_EXEMPT = new Set(['/healthz', '/readyz']);

export function originFor(request: FastifyRequest): string {
  return request.servedOrigin.origin;
}

export const hosts = fp<{ origins: URL[] }>(
  async (app, { origins }) => {
    const byHost = new Map(origins.map((origin) => [origin.host.toLowerCase(), origin]));
    app.decorateRequest('servedOrigin', null as unknown as URL);
    // Callback style, not async: the hook runs on every request and needs no promise.
    app.addHook('onRequest', (request, reply, done) => {
      const host = request.headers.host ?? '';
      const origin = byHost.get(host) ?? byHost.get(host.toLowerCase());
      if (origin) {
        request.servedOrigin = origin;
        return done();
      }
      const path = request.url.split('?', 1)[0]!;
      if (HOST_EXEMPT.has(path)) {
        request.servedOrigin = origins[0]!;
        return done();
      }
      // RFC 9112 §3.2: "A server MUST respond with a 400 (Bad Request) status code to any HTTP/1.1
      // request message that lacks a Host header field" — Node leaves that to us (requireHostHeader
      // off, so the answer carries the security headers).
      if (request.headers.host === undefined && request.raw.httpVersion === '1.1') {
        reply.code(400).type('application/json; charset=utf-8').send(errorPayload(request.url, 'bad_request', 'The request has no Host header; HTTP/1.1 requires one.'));
        return;
      }
      // In the shape of the path: an OAuth client reads `error_description`. Answered here, so no done().
      reply
        .code(421)
        .type('application/json; charset=utf-8')
        .send(errorPayload(request.url, 'misdirected_request', `This server answers only for ${[...byHost.keys()].join(' and ')}; check the address you used.`));
    });
  },
  { name: 'signet-hosts' },
);
