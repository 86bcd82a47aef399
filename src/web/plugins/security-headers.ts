// Every response carries frame-blocking and hardening headers — pages, JSON, errors, 404s alike.
// spec: "Every response carries `X-Frame-Options: DENY` and a frame-blocking content security policy".
import fp from 'fastify-plugin';
import type { FastifyReply } from 'fastify';

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

export const securityHeaders = fp(
  async (app) => {
    app.addHook('onSend', async (_request, reply, payload) => {
      reply.header('X-Frame-Options', 'DENY');
      reply.header('Content-Security-Policy', contentSecurityPolicy(reply.formActionTargets));
      reply.header('X-Content-Type-Options', 'nosniff');
      reply.header('Referrer-Policy', 'no-referrer');
      return payload;
    });
  },
  { name: 'signet-security-headers' },
);
