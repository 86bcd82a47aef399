// PKCE (RFC 7636) as the spec states it.
import { createHash } from 'node:crypto';
import { constantTimeEqual } from './secrets.ts';
import type { CodeChallengeMethod } from './codes.ts';

/** spec: "only the exact string `S256` selects SHA-256; any other value, including `s256`, is treated as `plain`" */
export function normalizeChallengeMethod(method: string | undefined): CodeChallengeMethod {
  return method === 'S256' ? 'S256' : 'plain';
}

/** spec: "the SHA-256 digest of the verifier, base64url-encoded without padding" */
export function s256Challenge(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

/** spec: "With `plain`, the verifier is compared to the challenge literally." */
export function verifierMatches(verifier: string, challenge: string, method: CodeChallengeMethod): boolean {
  return constantTimeEqual(method === 'S256' ? s256Challenge(verifier) : verifier, challenge);
}

/**
 * A method that the spec reads as `plain` although the application meant something else (`s256`,
 * `SHA256` …): its challenge will then only match a verifier equal to it, so its token requests fail
 * with "code_verifier 验证失败". Returns that method, for a warning naming the application.
 */
export function methodReadAsPlainAgainstIntent(method: string | undefined): string | undefined {
  return method !== undefined && method !== 'S256' && method !== 'plain' ? method : undefined;
}
