// The request hook the document APIs share (issue 40): who is calling the `/v1/…` conversion routes
// and the first-party task API. Each route asks for it (`await request.documentCaller(…)`), saying
// whether a session cookie counts there; nothing is decided by URL prefix. In order:
// - `X-Api-Key`: a person's API key (accounts/api-keys/), rate-limited per key;
// - `Authorization: Bearer`: an OAuth access token (oauth/access-tokens.ts verifyAccessToken) with
//   scope `documents` and no RFC 8707 resource — a person's, or a service's (client_credentials) — a token issued for `{base}/mcp` is good at /mcp only;
// - the session cookie, where the route allows it (the task API, as before; never the `/v1` routes,
//   whose callers are programs and which a cross-site form must not reach with a cookie).
// A presented credential that fails is refused; the next kind is never tried in its place. Refusals
// are errors with a statusCode: each route family renders them in its own shape (docling-serve's
// `{"detail"}` on `/v1`, `{"error","message"}` on the first-party API).
import fp from 'fastify-plugin';
import type { FastifyRequest } from 'fastify';
import { verifyApiKey } from '../../accounts/api-keys/api-keys.ts';
import type { Clock } from '../../config/clock.ts';
import type { Db } from '../../db/database.ts';
import { bearerToken, hasScope, verifyAccessToken } from '../../oauth/access-tokens.ts';
import { OAuthError } from '../../oauth/errors.ts';
import { DOCUMENTS_SCOPE } from '../../oauth/resources.ts';

/**
 * A caller of the document APIs: a person, or an application acting as itself (issue 43's
 * client_credentials tokens), whose tasks belong to its service identity `service-account-<client_id>`.
 */
export type DocumentCaller =
  | { kind: 'person'; sub: string; via: 'api_key' | 'oauth' | 'session'; keyId?: string; clientId?: string }
  | { kind: 'service'; sub: string; via: 'oauth'; clientId: string };


declare module 'fastify' {
  interface FastifyRequest {
    /**
     * The caller of a document API, or a thrown refusal (401; 403 for a session without this host's
     * Origin on a state change; 429 past a key's request limit).
     */
    documentCaller(options: { sessions: boolean; stateChanging?: boolean }): Promise<DocumentCaller>;
  }
}

export class CallerRefused extends Error {
  readonly statusCode: number;
  readonly retryAfterSeconds: number | undefined;
  constructor(statusCode: number, message: string, retryAfterSeconds?: number) {
    super(message);
    this.name = 'CallerRefused';
    this.statusCode = statusCode;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

const NO_CREDENTIAL = 'Authenticate with an API key in the X-Api-Key header (create one on your Signet account page) or an OAuth access token with the documents scope (Authorization: Bearer).';

export const documentCallers = fp<{ db: Db; hashKey: Buffer; clock: Clock }>(
  async (app, { db, hashKey, clock }) => {
    app.decorateRequest('documentCaller', async function (this: FastifyRequest, options: { sessions: boolean; stateChanging?: boolean }): Promise<DocumentCaller> {
      const apiKey = this.headers['x-api-key'];
      if (apiKey !== undefined) {
        const presented = (Array.isArray(apiKey) ? apiKey[0] : apiKey)?.trim() ?? '';
        const check = await verifyApiKey(db, clock, hashKey, presented);
        if (check.ok) return { kind: 'person', sub: check.sub, via: 'api_key', keyId: check.id };
        if (check.reason === 'rate_limited') {
          const seconds = Math.max(1, Math.ceil((check.retryAt - clock()) / 1000));
          throw new CallerRefused(429, `This API key made too many requests. Try again in ${seconds} seconds.`, seconds);
        }
        throw new CallerRefused(401, 'The API key is unknown, expired or revoked. Create a new one on your Signet account page.');
      }
      const token = bearerToken(this.headers.authorization);
      if (token !== undefined) {
        let verified;
        try {
          verified = await verifyAccessToken(db, hashKey, clock(), token, { services: true });
        } catch (error) {
          if (error instanceof OAuthError) throw new CallerRefused(401, 'The access token is unknown, expired or revoked. Refresh it, or sign in again.');
          throw error;
        }
        // The rule for bearer tokens at the document APIs: scope `documents` and no RFC 8707 resource.
        if (!hasScope(verified.scope, DOCUMENTS_SCOPE) || verified.resource !== null) {
          throw new CallerRefused(401, `The access token was not issued for the document APIs: ask for the ${DOCUMENTS_SCOPE} scope (and no resource).`);
        }
        if ('service' in verified) return { kind: 'service', sub: verified.service.sub, via: 'oauth', clientId: verified.client.clientId };
        return { kind: 'person', sub: verified.person.sub, via: 'oauth', clientId: verified.client.clientId };
      }
      if (options.sessions) {
        const session = await this.currentSession();
        if (session) {
          // Cross-site request forgery: a state change by cookie must come from a page of this very host.
          if (options.stateChanging && this.headers.origin !== this.servedOrigin.origin) {
            throw new CallerRefused(403, `This request must come from a page of ${this.servedOrigin.origin} (its Origin header did not match).`);
          }
          return { kind: 'person', sub: session.sub, via: 'session' };
        }
        throw new CallerRefused(401, `Sign in first (this API takes the Signet session cookie), or ${NO_CREDENTIAL[0]!.toLowerCase()}${NO_CREDENTIAL.slice(1)}`);
      }
      throw new CallerRefused(401, NO_CREDENTIAL);
    });
  },
  { name: 'signet-document-callers', dependencies: ['signet-sessions'] },
);
