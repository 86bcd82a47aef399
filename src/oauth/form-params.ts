// spec: "Every OAuth request body is form-encoded. A JSON body is not read."
// The token and revoke routes live in an encapsulated Fastify context whose only body parsers are:
// application/x-www-form-urlencoded (every value kept, so a parameter sent twice can be refused), and
// a catch-all that drains any other body and yields no parameters at all.
import type { FastifyInstance } from 'fastify';
import { OAuthError } from './errors.ts';

/** A form body as received: every name with every value it was sent with, in order. */
export type FormBody = Map<string, string[]>;

export function parseFormBody(body: string): FormBody {
  const form: FormBody = new Map();
  for (const [name, value] of new URLSearchParams(body)) {
    const values = form.get(name);
    if (values) values.push(value);
    else form.set(name, [value]);
  }
  return form;
}

/** Replaces body parsing in this (encapsulated) context: forms are read, anything else is read as empty. */
export function acceptFormBodiesOnly(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
    done(null, parseFormBody(typeof body === 'string' ? body : body.toString('utf8')));
  });
  // spec (Errors): "token endpoint receives a JSON body → fields come back empty". The body is still
  // read (up to the body limit) so the connection stays usable, then dropped.
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, _body, done) => {
    done(null, new Map());
  });
}

/**
 * The parameters of one OAuth request. A parameter sent twice is `invalid_request` (RFC 6749 §3.2:
 * "Request and response parameters MUST NOT be included more than once"); an empty value counts as absent.
 */
export class OAuthParams {
  private readonly values: ReadonlyMap<string, string>;
  private constructor(values: ReadonlyMap<string, string>) {
    this.values = values;
  }

  /** Reads a parsed body (anything else, e.g. no body, is no parameters). Throws invalid_request on a repeated parameter. */
  static from(body: unknown): OAuthParams {
    const values = new Map<string, string>();
    if (body instanceof Map) {
      for (const [name, all] of body as FormBody) {
        if (all.length > 1) throw new OAuthError('invalid_request', `The parameter ${JSON.stringify(name)} was sent more than once; send each parameter once.`);
        const value = all[0];
        // No parameter needs a NUL character, and PostgreSQL cannot store or compare one.
        if (value?.includes('\u0000')) throw new OAuthError('invalid_request', `The parameter ${JSON.stringify(name)} contains a NUL character (%00); send it without one.`);
        if (value !== undefined && value !== '') values.set(name, value);
      }
    }
    return new OAuthParams(values);
  }

  optional(name: string): string | undefined {
    return this.values.get(name);
  }

  required(name: string): string {
    const value = this.values.get(name);
    if (value === undefined) throw new OAuthError('invalid_request', `The parameter ${name} is required; send it in the form-encoded body.`);
    return value;
  }
}

/**
 * The first client_id of a parsed form body, as sent (undefined for any other body), for the lookups
 * made before the parameters are checked (CORS, the rate limits). One with a NUL character names no
 * application — and PostgreSQL refuses to compare it at all (the request is then invalid_request).
 */
export function clientIdIn(body: unknown): string | undefined {
  if (!(body instanceof Map)) return undefined;
  const clientId = (body as Map<string, string[]>).get('client_id')?.[0];
  return clientId === undefined || clientId === '' || clientId.includes('\u0000') ? undefined : clientId;
}
