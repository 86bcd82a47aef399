// Every response carries frame-blocking and hardening headers — pages, JSON, errors, 404s alike.
// spec: "Every response carries `X-Frame-Options: DENY` and a frame-blocking content security policy".
//
// A new route needs nothing to be covered: the onSend hook below is the app's, so it runs for every
// route (added before or after it) and for Fastify's own answers (404, 400 on a broken URL, a client
// error on the raw socket: answerFrameworkError, answerClientError, answerExpectation). A page whose form
// ends in a redirect to another origin names it with allowFormRedirectTo. A route that builds a header
// from request input under a new name adds that name to HEADERS_FROM_INPUT. The constant set is built
// once, with the lower-case names Fastify stores (issue 44: nothing is built or lower-cased per answer).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import fp from 'fastify-plugin';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { errorPayload } from './error-shape.ts';

// Not `import … from 'node:http'`: as an ES module namespace it loads Node's fetch stack, TLS and
// HTTP/2 with it (~12 MB resident; src/web/metrics.ts).
const { STATUS_CODES, validateHeaderValue } = process.getBuiltinModule('node:http');

declare module 'fastify' {
  interface FastifyReply {
    /** Extra targets for CSP form-action on this response (a form that ends in a redirect to a client's callback). */
    formActionTargets?: string[];
  }
}

/**
 * Chromium applies form-action to the redirects that follow a form submission, so a page whose form
 * ends in a redirect to an application's callback must name that callback's origin (or scheme).
 */
export function allowFormRedirectTo(reply: FastifyReply, redirectUri: string): void {
  let source: string;
  try {
    const url = new URL(redirectUri);
    source = url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : url.protocol;
  } catch {
    return;
  }
  // A CSP source must not carry characters that would end the directive.
  if (/[\s;,']/.test(source)) return;
  reply.formActionTargets = [...(reply.formActionTargets ?? []), source];
}

export function contentSecurityPolicy(formActionTargets: readonly string[] = []): string {
  return [
    "default-src 'none'",
    "style-src 'self'",
    "img-src 'self' data: https:",
    "script-src 'self'",
    "connect-src 'self'",
    `form-action 'self'${formActionTargets.map((t) => ` ${t}`).join('')}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
}

/** The headers every answer carries when nothing varies, built once (for answers written outside Fastify). */
const DEFAULT_SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'X-Frame-Options': 'DENY',
  'Content-Security-Policy': contentSecurityPolicy(),
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
});

/** The same, with the lower-case names Fastify keeps (reply.header lower-cases every name it is given). */
const DEFAULT_SECURITY_HEADERS_LOWER: Readonly<Record<string, string>> = Object.freeze(
  Object.fromEntries(Object.entries(DEFAULT_SECURITY_HEADERS).map(([name, value]) => [name.toLowerCase(), value])),
);

/** The headers every answer carries. Only the CSP varies (with form-action targets); without them, the prebuilt set. */
export function securityHeaderValues(formActionTargets: readonly string[] = []): Readonly<Record<string, string>> {
  if (formActionTargets.length === 0) return DEFAULT_SECURITY_HEADERS;
  return { ...DEFAULT_SECURITY_HEADERS, 'Content-Security-Policy': contentSecurityPolicy(formActionTargets) };
}

/**
 * The response headers whose values can be built from what a request sent (a redirect target, a file
 * name, an echoed Origin, a cookie value). Every other header Signet sets is a constant or a number,
 * so only these are checked before sending.
 */
const HEADERS_FROM_INPUT = ['location', 'content-disposition', 'access-control-allow-origin', 'set-cookie'] as const;

/** Names of headers whose value Node would refuse to send (a control or non-Latin-1 character). */
function unsendableHeaders(reply: FastifyReply): string[] {
  const unsendable: string[] = [];
  for (const name of HEADERS_FROM_INPUT) {
    const value = reply.getHeader(name);
    if (value === undefined) continue;
    const bad = [value].flat().some((one) => {
      try {
        validateHeaderValue(name, String(one));
        return false;
      } catch {
        return true;
      }
    });
    if (bad) unsendable.push(name);
  }
  return unsendable;
}

/** A JSON error body in the shape of the path: OAuth's `{error, error_description}` under /oauth/, else `{error, message}`. */
function errorBody(url: string | undefined, error: string, message: string): string {
  return JSON.stringify(errorPayload(url, error, message));
}

export const securityHeaders = fp(
  async (app) => {
    // Callback style, not async: the hook runs on every answer and needs no promise.
    app.addHook('onSend', (request, reply, payload, done) => {
      // A header Node cannot send (say a Location built from a value with a control character) would
      // make it answer a bare 500 without these headers. Answer that 500 here, with them.
      const unsendable = unsendableHeaders(reply);
      if (unsendable.length > 0) {
        for (const name of unsendable) reply.removeHeader(name);
        request.log.error({ headers: unsendable }, 'a response header held characters HTTP cannot carry; answered 500 instead');
        reply.code(500).header('content-type', 'application/json; charset=utf-8').header('cache-control', 'no-store');
        payload = errorBody(request.url, 'server_error', 'The server could not complete the request. Try again later.');
      }
      const targets = reply.formActionTargets;
      reply.headers(targets === undefined || targets.length === 0 ? DEFAULT_SECURITY_HEADERS_LOWER : securityHeaderValues(targets));
      done(null, payload);
    });
  },
  { name: 'signet-security-headers' },
);

/**
 * Fastify's `frameworkErrors`: a request whose URL cannot be decoded (and the like) is answered before
 * any route or hook runs, so the headers are set here.
 */
export function answerFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const status = error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 400;
  const oauth = request.url.startsWith('/oauth/');
  reply
    .code(status)
    .headers(securityHeaderValues())
    .header('content-type', 'application/json; charset=utf-8')
    .header('cache-control', 'no-store')
    .send(errorBody(request.url, oauth ? 'invalid_request' : 'bad_request', 'The address of this request is not valid (a broken %-escape?). Check the link and try again.'));
}

const CLIENT_ERRORS: Record<string, [number, string]> = {
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'The request took too long to arrive. Try again.'],
  HPE_HEADER_OVERFLOW: [431, 'The request headers are too large. Clear this site\'s cookies and try again.'],
};

/**
 * Fastify's `clientErrorHandler`: a request Node's HTTP parser refuses (a malformed request line,
 * headers too large, headers or body too slow) is answered on the raw socket — with the same headers.
 */
export function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, message] = CLIENT_ERRORS[error.code ?? ''] ?? [400, 'The request could not be read. Check what sent it.'];
  const body = JSON.stringify({ error: status === 400 ? 'bad_request' : status === 408 ? 'request_timeout' : 'request_header_fields_too_large', message });
  const headers = {
    ...securityHeaderValues(),
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(body)),
    'Cache-Control': 'no-store',
    Connection: 'close',
  };
  if (socket.writable) {
    socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('')}\r\n${body}`);
  }
  socket.destroy(error);
}

/**
 * Node's `checkExpectation` event: a request whose Expect header is not 100-continue gets 417 —
 * with the same headers as every other answer, and the connection closed (its body is unread).
 */
export function answerExpectation(_request: IncomingMessage, response: ServerResponse): void {
  const body = JSON.stringify({ error: 'expectation_failed', message: 'The Expect header of this request cannot be met; send the request without it.' });
  response.writeHead(417, {
    ...securityHeaderValues(),
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(body)),
    'Cache-Control': 'no-store',
    Connection: 'close',
  });
  response.end(body);
}
