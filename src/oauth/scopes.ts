// spec "Scopes": the four known scopes and the claims each releases; issue 39 adds `documents` (read,
// parse and translate the person's documents — for AI agents at /mcp), which releases no claim.

export const KNOWN_SCOPES = ['openid', 'profile', 'email', 'phone', 'documents'] as const;
export type Scope = (typeof KNOWN_SCOPES)[number];

/**
 * spec Versioning 3: the discovery document's `scopes_supported` names exactly these four; `documents`
 * is advertised in the RFC 8414 and RFC 9728 documents (resources.ts), where agents look for it.
 */
export const SPEC_SCOPES: readonly Scope[] = ['openid', 'profile', 'email', 'phone'];

/** spec: "The default scope when none is sent is `openid profile`." */
export const DEFAULT_SCOPE: readonly Scope[] = ['openid', 'profile'];

export const CLAIMS_BY_SCOPE: Record<Scope, readonly string[]> = {
  openid: [],
  profile: ['name', 'picture'],
  email: ['email', 'email_verified'],
  phone: ['phone_number', 'phone_number_verified'],
  // issue 39: access to the person's documents (the MCP tools), no userinfo or id_token claim
  documents: [],
};

export function isKnownScope(value: string): value is Scope {
  return (KNOWN_SCOPES as readonly string[]).includes(value);
}

/** Splits a space-separated scope parameter; empty parts from repeated spaces are dropped. Order of first appearance is kept, duplicates removed. */
export function parseScopeParameter(value: string): string[] {
  return [...new Set(value.split(' ').filter((part) => part.length > 0))];
}

/** Canonical form for storage and responses: known scopes in the spec's order, space-separated. */
export function formatScope(scopes: Iterable<string>): string {
  const set = new Set(scopes);
  return KNOWN_SCOPES.filter((s) => set.has(s)).join(' ');
}

export function scopeList(value: string): Scope[] {
  return parseScopeParameter(value).filter(isKnownScope);
}
