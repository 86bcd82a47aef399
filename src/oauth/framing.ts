// spec: "Every response carries `X-Frame-Options: DENY` and a frame-blocking content security policy,
// so the flow cannot run in a hidden frame." Those headers stop a frame from *showing* a page, but the
// browser still sends the request and follows its redirects: a hidden frame could have
// /oauth/authorize?prompt=none mint a code, or post a consent form, before any page is blocked. Fetch
// Metadata says where a response will land; a navigation into a frame is refused before anything is
// minted. (Browsers without Fetch Metadata send no such header and are served as before.)
import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** `Sec-Fetch-Dest` values of a navigation that lands inside another page. */
const FRAME_DESTINATIONS = new Set(['iframe', 'frame', 'embed', 'object', 'fencedframe']);

/** Whether this request is a navigation into a frame (iframe, frame, embed, object). */
export function isFramedNavigation(headers: IncomingHttpHeaders): boolean {
  const dest = headers['sec-fetch-dest'];
  return typeof dest === 'string' && FRAME_DESTINATIONS.has(dest.trim().toLowerCase());
}

export const FRAMED_DESCRIPTION = 'The sign-in flow cannot run inside a frame. Open the authorization URL in the top-level window (a full-page redirect or a new window).';

/**
 * An onRequest hook for the flow's pages (sign-in, consent): a framed navigation gets a bare 403. The
 * frame would not show a page anyway (X-Frame-Options), so the answer holds no text for a person.
 */
export async function refuseFramedNavigation(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
  if (!isFramedNavigation(request.headers)) return undefined;
  request.log.warn({ event: 'framed_navigation_refused', dest: request.headers['sec-fetch-dest'] }, 'a flow page was requested into a frame');
  return reply.code(403).header('cache-control', 'no-store').type('text/plain; charset=utf-8').send(FRAMED_DESCRIPTION);
}
