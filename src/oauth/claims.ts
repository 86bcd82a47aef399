// The claims a person's profile releases for a granted scope (spec "Scopes", "User profile (userinfo
// response)") and what the `claims` request parameter may name (OpenID Connect Core §5.5). Below both
// userinfo.ts and oidc/id-token.ts, which use it: neither reaches into the other for its claims.
import type { Profile } from '../accounts/accounts.ts';
import { CLAIMS_BY_SCOPE, KNOWN_SCOPES, scopeList, type Scope } from './scopes.ts';

/** spec "User profile (userinfo response)". */
export type UserinfoClaims = {
  sub: string;
  name?: string;
  picture?: string;
  email?: string;
  email_verified?: boolean;
  phone_number?: string;
  phone_number_verified?: boolean;
};

/** What the claims are made from: a Profile, or the same fields read with the token. */
export type ClaimsSource = Pick<Profile, 'sub' | 'name' | 'picture' | 'email' | 'email_verified' | 'phone_number' | 'phone_number_verified'>;

/**
 * The parsed scopes of a stored scope string. Stored scopes are canonical (formatScope: known scopes in
 * the spec's order), so there are only a few distinct strings; each is parsed once instead of on every
 * userinfo request. Bounded anyway, in case a store ever holds other spellings.
 */
const parsedScopes = new Map<string, ReadonlySet<string>>();
const PARSED_SCOPES_MAX = 64;

function scopeSet(scope: string): ReadonlySet<string> {
  let scopes = parsedScopes.get(scope);
  if (scopes === undefined) {
    scopes = new Set(scopeList(scope));
    if (parsedScopes.size >= PARSED_SCOPES_MAX) parsedScopes.clear();
    parsedScopes.set(scope, scopes);
  }
  return scopes;
}

/**
 * spec: "The claim `sub` is always returned"; "Every claim other than `sub` also depends on the user
 * having set the value" — except `picture`, which is an "Empty string if unset"; `email` and
 * `phone_number` are "Omitted entirely if the account has no e-mail / phone", and so are their
 * `_verified` companions, which describe a value that is not there.
 */
export function claimsFor(profile: ClaimsSource, scope: string): UserinfoClaims {
  const scopes = scopeSet(scope);
  const claims: UserinfoClaims = { sub: profile.sub };
  if (scopes.has('profile')) {
    if (profile.name !== null && profile.name !== '') claims.name = profile.name;
    claims.picture = profile.picture ?? '';
  }
  if (scopes.has('email') && profile.email !== null) {
    claims.email = profile.email;
    claims.email_verified = profile.email_verified;
  }
  if (scopes.has('phone') && profile.phone_number !== null) {
    claims.phone_number = profile.phone_number;
    claims.phone_number_verified = profile.phone_number_verified;
  }
  return claims;
}

/** The claims the `claims` parameter may name (Core §5.5); each is released only with its scope. */
export const REQUESTABLE_CLAIMS = ['name', 'picture', 'email', 'email_verified', 'phone_number', 'phone_number_verified'] as const;

/** The scopes that release the named claims (spec "Scopes"), e.g. ["email"] for email_verified. */
export function scopesReleasing(claims: readonly string[]): Scope[] {
  return KNOWN_SCOPES.filter((scope) => CLAIMS_BY_SCOPE[scope].some((claim) => claims.includes(claim)));
}
