// spec "Scopes": the four known scopes and the claims each releases.

export const KNOWN_SCOPES = ['openid', 'profile', 'email', 'phone'] as const;
export type Scope = (typeof KNOWN_SCOPES)[number];

/** spec: "The default scope when none is sent is `openid profile`." */
export const DEFAULT_SCOPE: readonly Scope[] = ['openid', 'profile'];

export const CLAIMS_BY_SCOPE: Record<Scope, readonly string[]> = {
  openid: [],
  profile: ['name', 'picture'],
  email: ['email', 'email_verified'],
  phone: ['phone_number', 'phone_number_verified'],
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
