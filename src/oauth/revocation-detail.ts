// How a mass revocation is told in the audit record: the chains it ended (each with its access tokens
// and its refresh token), and the rows of tokens from before migration 0010 where there were any.
import type { RevokedCounts } from './tokens.store.ts';

export function revokedDetail(revoked: RevokedCounts): { revoked_chains: number; revoked_access_tokens?: number; revoked_refresh_tokens?: number } {
  return {
    revoked_chains: revoked.chains,
    ...(revoked.access > 0 ? { revoked_access_tokens: revoked.access } : {}),
    ...(revoked.refresh > 0 ? { revoked_refresh_tokens: revoked.refresh } : {}),
  };
}
