// JSON schemas of the admin API: what the edge accepts and what it answers. Fastify validates
// requests and serializes responses with them, and @fastify/swagger builds /admin/v1/openapi.json
// from the same objects, so the document cannot drift from the code.
import { KNOWN_SCOPES } from '../oauth/scopes.ts';

const nullableString = { type: ['string', 'null'] } as const;
const isoTime = { type: 'string', format: 'date-time' } as const;

/** Shared schemas, referenced as `{ $ref: 'Name#' }`; they become components.schemas in the document. */
export const sharedSchemas = [
  {
    $id: 'Error',
    type: 'object',
    description: 'What went wrong and what to do next.',
    required: ['error', 'message'],
    properties: { error: { type: 'string', description: 'a machine-readable code' }, message: { type: 'string' } },
  },
  {
    $id: 'Account',
    type: 'object',
    description: 'An account (never its password hash).',
    required: ['sub', 'email', 'email_verified', 'phone_number', 'phone_number_verified', 'name', 'picture', 'disabled', 'created_at'],
    properties: {
      sub: { type: 'string', description: 'opaque: a UUID, or a numeric string for accounts older than the UUIDs' },
      email: nullableString,
      email_verified: { type: 'boolean' },
      phone_number: { ...nullableString, description: 'E.164' },
      phone_number_verified: { type: 'boolean' },
      name: nullableString,
      picture: nullableString,
      disabled: { type: 'boolean' },
      created_at: isoTime,
    },
  },
  {
    $id: 'Session',
    type: 'object',
    required: ['id', 'created_at', 'expires_at'],
    properties: { id: { type: 'string', description: 'the public id of the session, for DELETE …/sessions/{id} (never its cookie value or stored hash)' }, created_at: isoTime, expires_at: isoTime },
  },
  {
    $id: 'Factor',
    type: 'object',
    description: 'A second factor (an authenticator app; passkeys when that kind is served). Never its secret.',
    required: ['id', 'kind', 'name', 'created_at', 'last_used_at'],
    properties: {
      id: { type: 'string' },
      kind: { type: 'string', description: '`totp` (an authenticator app), `passkey`' },
      name: { type: 'string' },
      created_at: isoTime,
      last_used_at: { type: ['string', 'null'], format: 'date-time' },
    },
  },
  {
    $id: 'Client',
    type: 'object',
    description: 'An application, shaped as `signet client create` prints it. `client_secret` only in the answer to its creation.',
    required: ['client_id', 'name', 'redirect_uris', 'scopes', 'public', 'enabled', 'allowed_origins', 'created_at', 'updated_at'],
    properties: {
      client_id: { type: 'string' },
      client_secret: { type: 'string', description: 'confidential applications only; shown once, at creation' },
      name: { type: 'string' },
      redirect_uris: { type: 'array', items: { type: 'string' } },
      scopes: { type: 'array', items: { type: 'string', enum: [...KNOWN_SCOPES] } },
      public: { type: 'boolean' },
      enabled: { type: 'boolean' },
      allowed_origins: { type: 'array', items: { type: 'string' } },
      oidc: { type: 'boolean', description: 'OpenID Connect: an id_token when granted openid' },
      post_logout_redirect_uris: { type: 'array', items: { type: 'string' } },
      id_token_signed_response_alg: { type: ['string', 'null'], description: 'ES256 or RS256; null: the deployment default' },
      grants: { type: 'array', items: { type: 'string', enum: ['client_credentials', 'device_code'] }, description: 'issue 43: extra grants beyond authorization_code and refresh_token' },
      dynamic: { type: 'boolean', description: 'issue 39: the application registered itself (POST /oauth/register, RFC 7591); its name is unverified' },
      created_at: isoTime,
      updated_at: isoTime,
    },
  },
  {
    $id: 'IdentityProvider',
    type: 'object',
    description: 'An upstream identity provider (issue 33), shaped as `signet idp add` prints it. Never its client secret.',
    required: ['slug', 'name', 'issuer', 'redirect_uri', 'kind', 'preset', 'client_id', 'scope', 'enabled', 'created_at', 'updated_at'],
    properties: {
      slug: { type: 'string' },
      name: { type: 'string', description: 'shown as "Sign in with NAME"' },
      issuer: { type: 'string' },
      redirect_uri: { type: 'string', description: '{base_url}/signin/idp/SLUG/callback: register it at the upstream' },
      kind: { type: 'string', enum: ['oidc', 'github'] },
      preset: nullableString,
      client_id: { type: 'string' },
      scope: { type: 'string' },
      enabled: { type: 'boolean' },
      created_at: isoTime,
      updated_at: isoTime,
    },
  },
  {
    $id: 'IdentityLink',
    type: 'object',
    description: 'An upstream identity linked to an account, bound by (provider, upstream_sub).',
    required: ['provider', 'upstream_sub', 'email', 'linked_at', 'last_used_at'],
    properties: { provider: { type: 'string' }, upstream_sub: { type: 'string' }, email: nullableString, linked_at: isoTime, last_used_at: { type: ['string', 'null'], format: 'date-time' } },
  },
  {
    $id: 'AuditEvent',
    type: 'object',
    description: 'One audit event: when, about which account and application, from which address, with what outcome.',
    required: ['id', 'type', 'at', 'sub', 'client_id', 'ip', 'outcome'],
    properties: {
      id: { type: 'string' },
      type: { type: 'string', description: 'e.g. signin.failed, consent.withdrawn, token.replay_detected, account.deleted, client.updated' },
      at: isoTime,
      sub: nullableString,
      client_id: nullableString,
      ip: { ...nullableString, description: 'the client address of the request' },
      outcome: { type: 'string', enum: ['success', 'failure', 'refused'] },
      actor: { ...nullableString, description: '"cli", "admin_key:<id>", or null when the person acted themselves' },
      detail: { type: ['object', 'null'], additionalProperties: true, description: 'whitelisted keys only (field names, counts, reasons), never a secret' },
    },
  },
] as const;

export const ref = (id: (typeof sharedSchemas)[number]['$id']) => ({ $ref: `${id}#` }) as const;

/** The answers every authenticated route may give besides its own. */
export const errorResponses = {
  400: { ...ref('Error'), description: 'the request does not fit the schema or the rules' },
  401: { ...ref('Error'), description: 'no operator key, or not a live one' },
} as const;

export const subParams = { type: 'object', required: ['sub'], properties: { sub: { type: 'string', minLength: 1, maxLength: 200 } } } as const;
export const sessionParams = {
  type: 'object',
  required: ['sub', 'id'],
  properties: { sub: { type: 'string', minLength: 1, maxLength: 200 }, id: { type: 'string', minLength: 1, maxLength: 64, description: 'a session id from GET …/sessions' } },
} as const;
export const clientIdParams = { type: 'object', required: ['client_id'], properties: { client_id: { type: 'string', minLength: 1, maxLength: 200 } } } as const;

/** Query strings are text; whole numbers are matched as such and converted in the route. */
export const limitParam = { type: 'string', pattern: '^[1-9][0-9]{0,3}$', description: 'page size' } as const;
export const cursorParam = { type: 'string', maxLength: 400, description: 'next_cursor of the previous page' } as const;

export const accountsQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    email: { type: 'string', maxLength: 320, description: 'the account with this e-mail address (exact, as sign-in compares it)' },
    phone: { type: 'string', maxLength: 40, description: 'the account with this phone number (any notation with its country code)' },
    cursor: cursorParam,
    limit: limitParam,
  },
} as const;

export const accountPage = {
  type: 'object',
  description: 'A page of accounts; next_cursor is null on the last page.',
  required: ['accounts', 'next_cursor'],
  properties: { accounts: { type: 'array', items: ref('Account') }, next_cursor: nullableString },
} as const;

const profileFields = {
  name: { type: 'string', maxLength: 200, description: 'empty clears it' },
  email: { type: 'string', maxLength: 320, description: 'empty clears it (an account keeps an e-mail or a phone number)' },
  phone_number: { type: 'string', maxLength: 40, description: 'with its country code; empty clears it' },
  picture: { type: 'string', maxLength: 2000, description: 'an https URL; empty clears it' },
} as const;

export const accountPatchBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  description: 'The `signet user update` fields and `disabled`; a field left out stays as it is.',
  properties: {
    ...profileFields,
    email_verified: { type: 'boolean', description: 'a changed e-mail is unverified unless this says otherwise' },
    phone_number_verified: { type: 'boolean', description: 'a changed phone number is unverified unless this says otherwise' },
    disabled: { type: 'boolean', description: 'true stops sign-in and ends every session' },
  },
} as const;

export const accountCreateBody = {
  type: 'object',
  additionalProperties: false,
  required: ['password'],
  properties: {
    ...profileFields,
    email_verified: { type: 'boolean' },
    phone_number_verified: { type: 'boolean' },
    password: { type: 'string', minLength: 1, maxLength: 1024, description: 'never stored or logged in clear (argon2id)' },
    legacy_numeric_id: { type: 'boolean', description: 'a numeric sub instead of a UUID' },
  },
} as const;

export const sessionList = {
  type: 'object',
  description: "The person's live sessions, newest first.",
  required: ['sessions'],
  properties: { sessions: { type: 'array', items: ref('Session') } },
} as const;

export const factorList = {
  type: 'object',
  description: "The person's second factors, oldest first, and how many unused recovery codes they hold.",
  required: ['factors', 'recovery_codes_left'],
  properties: { factors: { type: 'array', items: ref('Factor') }, recovery_codes_left: { type: 'integer' } },
} as const;

export const sessionsEnded = {
  type: 'object',
  description: 'Every session ended.',
  required: ['ended'],
  properties: { ended: { type: 'integer', description: 'how many sessions ended' } },
} as const;

const stringList = (description: string) => ({ type: 'array', items: { type: 'string', maxLength: 2000 }, maxItems: 50, description }) as const;

export const clientCreateBody = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'redirect_uris'],
  properties: {
    name: { type: 'string', maxLength: 200 },
    redirect_uris: stringList('registered callbacks, compared byte for byte; at least one unless `grants` is given'),
    scopes: { type: 'array', items: { type: 'string', enum: [...KNOWN_SCOPES] }, description: 'default: openid profile' },
    public: { type: 'boolean', description: 'a public client (PKCE, no secret)' },
    allowed_origins: stringList('browser origins allowed to call the token endpoint'),
    oidc: { type: 'boolean', description: 'OpenID Connect (issue 28): an id_token when the application is granted openid; false: none, ever' },
    post_logout_redirect_uris: stringList('RP-initiated logout callbacks, compared byte for byte'),
    id_token_signed_response_alg: { type: ['string', 'null'], enum: ['ES256', 'RS256', null], description: 'null: SIGNET_ID_TOKEN_ALG' },
    grants: { type: 'array', items: { type: 'string', enum: ['client_credentials', 'device_code'] }, maxItems: 2, description: 'issue 43: extra grants (client_credentials needs a confidential application)' },
  },
} as const;

export const clientPatchBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  description: 'A list given replaces the whole list.',
  properties: {
    name: { type: 'string', maxLength: 200 },
    redirect_uris: { ...stringList('registered callbacks'), minItems: 1 },
    scopes: { type: 'array', items: { type: 'string', enum: [...KNOWN_SCOPES] } },
    allowed_origins: stringList('browser origins allowed to call the token endpoint'),
    enabled: { type: 'boolean', description: 'false: no new tokens, its access tokens stop working' },
    oidc: { type: 'boolean', description: 'OpenID Connect (issue 28): an id_token when the application is granted openid; false: none, ever' },
    post_logout_redirect_uris: stringList('RP-initiated logout callbacks, compared byte for byte'),
    id_token_signed_response_alg: { type: ['string', 'null'], enum: ['ES256', 'RS256', null], description: 'null: SIGNET_ID_TOKEN_ALG' },
    grants: { type: 'array', items: { type: 'string', enum: ['client_credentials', 'device_code'] }, maxItems: 2, description: 'issue 43: extra grants (client_credentials needs a confidential application)' },
  },
} as const;

export const clientList = {
  type: 'object',
  description: 'Every application, oldest first (never a secret).',
  required: ['clients'],
  properties: { clients: { type: 'array', items: ref('Client') } },
} as const;

export const auditQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    sub: { type: 'string', maxLength: 200 },
    client_id: { type: 'string', maxLength: 200 },
    type: { type: 'string', pattern: '^[a-z_]+(\\.[a-z_]+){0,2}\\.([a-z_]+|\\*)$', description: 'an event type (idp.signin.failed), or a family such as account.* or idp.*' },
    cursor: cursorParam,
    limit: limitParam,
  },
} as const;

export const auditPage = {
  type: 'object',
  description: 'A page of audit events, newest first; next_cursor is null on the last page.',
  required: ['events', 'next_cursor'],
  properties: { events: { type: 'array', items: ref('AuditEvent') }, next_cursor: nullableString },
} as const;
