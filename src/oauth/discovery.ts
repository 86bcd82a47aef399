// GET /.well-known/openid-configuration (spec "Versioning"), and its RFC 8414 sibling for agents (issue 39).
// Default: an accurate document for the host that serves it. SIGNET_COMPAT=legacy: the legacy
// service's document with its documented defects, reproduced on purpose.
import { CLAIMS_BY_SCOPE, KNOWN_SCOPES, SPEC_SCOPES } from './scopes.ts';
import { ALL_GRANT_TYPES, SUPPORTED_GRANT_TYPES } from './token/grants.ts';
import { ACR_VALUES_SUPPORTED, ID_TOKEN_CLAIMS } from './oidc/id-token.ts';
import { SIGNING_ALGS } from './oidc/keys.ts';
import { LOCALES } from '../web/i18n/i18n.ts';
import { mcpResource, REGISTRATION_ENDPOINT_PATH } from './resources.ts';

export type DiscoveryDocument = Record<string, string | string[] | boolean>;

/** spec Versioning 3: "Accurate discovery fields" — the same in both modes. */
function accurateFields(): DiscoveryDocument {
  return {
    scopes_supported: [...SPEC_SCOPES],
    response_types_supported: ['code'],
    grant_types_supported: [...SUPPORTED_GRANT_TYPES],
    token_endpoint_auth_methods_supported: ['client_secret_post'],
    code_challenge_methods_supported: ['plain', 'S256'],
  };
}

/**
 * The accurate document, an OpenID Provider document (OpenID Connect Discovery 1.0 §3; issue 28): issuer
 * and every endpoint on the host that was asked, and each OpenID field true — the JWKS that verifies the
 * id_tokens, both signing algorithms, the end-session endpoint. id_tokens go only to applications
 * registered with --oidc; every other application still gets none (spec "What the service does" 5).
 */
export function accurateDiscovery(servedOrigin: string): DiscoveryDocument {
  return {
    issuer: servedOrigin,
    authorization_endpoint: `${servedOrigin}/oauth/authorize`,
    token_endpoint: `${servedOrigin}/oauth/token`,
    userinfo_endpoint: `${servedOrigin}/oauth/userinfo`,
    revocation_endpoint: `${servedOrigin}/oauth/revoke`,
    ...accurateFields(),
    revocation_endpoint_auth_methods_supported: ['client_secret_post'],
    // issue 43: RFC 7662 token introspection, the caller authenticated as at the token endpoint
    introspection_endpoint: `${servedOrigin}/oauth/introspect`,
    introspection_endpoint_auth_methods_supported: ['client_secret_post'],
    jwks_uri: `${servedOrigin}/oauth/jwks`,
    end_session_endpoint: `${servedOrigin}/oauth/end-session`,
    id_token_signing_alg_values_supported: [...SIGNING_ALGS],
    subject_types_supported: ['public'],
    claims_supported: [...new Set([...ID_TOKEN_CLAIMS, ...KNOWN_SCOPES.flatMap((scope) => CLAIMS_BY_SCOPE[scope])])],
    acr_values_supported: [...ACR_VALUES_SUPPORTED],
    response_modes_supported: ['query'],
    prompt_values_supported: ['none', 'login', 'consent'],
    claims_parameter_supported: true,
    // issue 36: the page languages ui_locales can pick (OpenID Connect Discovery 1.0 §3)
    ui_locales_supported: [...LOCALES],
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
    // RFC 9207: every callback carries `iss` (mix-up defence); clients may then require it.
    authorization_response_iss_parameter_supported: true,
    ...servicesAndDevicesFields(servedOrigin),
  };
}

/**
 * issue 43: the opt-in grants (client_credentials, RFC 8628's device grant) and the device
 * authorization endpoint (RFC 8628 §4), for the accurate document — and so for the RFC 8414 metadata
 * built from it. Applications that did not opt in are refused either grant as the spec refuses any
 * unknown one; the legacy document (SIGNET_COMPAT=legacy) keeps the spec's two.
 */
export function servicesAndDevicesFields(servedOrigin: string): DiscoveryDocument {
  return {
    grant_types_supported: [...ALL_GRANT_TYPES],
    device_authorization_endpoint: `${servedOrigin}/oauth/device_authorization`,
  };
}

/**
 * spec Versioning 2 and 4, reproduced for SIGNET_COMPAT=legacy: `token_endpoint`, `userinfo_endpoint`
 * and `revocation_endpoint` under an `/api/v1` prefix that answers 404; an `issuer` unlike the serving
 * host; `jwks_uri` and `id_token_signing_alg_values_supported: ["RS256"]` although no id_token exists.
 * The issuer is the other configured host (base ↔ alternate); with only one host it is the serving
 * origin with the `/api/v1` prefix, which no client can match against the host either.
 */
export function legacyDiscovery(servedOrigin: string, otherOrigins: readonly string[]): DiscoveryDocument {
  const issuer = otherOrigins.find((o) => o !== servedOrigin) ?? `${servedOrigin}/api/v1`;
  return {
    issuer,
    authorization_endpoint: `${servedOrigin}/oauth/authorize`,
    token_endpoint: `${servedOrigin}/api/v1/oauth/token`,
    userinfo_endpoint: `${servedOrigin}/api/v1/oauth/userinfo`,
    revocation_endpoint: `${servedOrigin}/api/v1/oauth/revoke`,
    jwks_uri: `${servedOrigin}/.well-known/jwks.json`,
    ...accurateFields(),
    id_token_signing_alg_values_supported: ['RS256'],
    subject_types_supported: ['public'],
  };
}

/**
 * RFC 8414 §2: the authorization server metadata — the discovery document's facts (issuer, endpoints,
 * id_token fields) with what agents need besides: the registration endpoint (RFC 7591), S256 only (the
 * MCP authorization spec requires PKCE with S256; `plain` still works for the applications that use it),
 * every known scope including `documents`, and the protected resource it issues RFC 8707 tokens for. `registration` says whether
 * self-registration is open (SIGNET_CLIENT_REGISTRATION).
 */
export function authorizationServerMetadata(origin: string, options: { registration: 'open' | 'closed' }): DiscoveryDocument {
  return {
    ...accurateDiscovery(origin),
    scopes_supported: [...KNOWN_SCOPES],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['client_secret_post', 'none'],
    ...(options.registration === 'open' ? { registration_endpoint: `${origin}${REGISTRATION_ENDPOINT_PATH}` } : {}),
    // issue 39: an https URL as client_id names the client's metadata document (registration/client-id-metadata.ts)
    client_id_metadata_document_supported: options.registration === 'open',
    // RFC 9728 §4: the protected resources this server issues tokens for (RFC 8707 `resource`)
    protected_resources: [mcpResource(origin)],
  };
}
