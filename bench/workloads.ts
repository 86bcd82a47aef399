// The workloads: which request each connection sends, and which single-use values each one consumes.
//   userinfo   GET userinfo with one of 1,000 distinct valid access tokens (reusable, read cyclically)
//   refresh    POST token, grant_type=refresh_token: every request a different live refresh token, sent once
//   code       POST token, grant_type=authorization_code with client_secret_post: pre-minted codes
//   code_pkce  POST token, grant_type=authorization_code, public client with code_verifier (S256)
//   mixed      90 % userinfo, 9 % refresh, 1 % code, interleaved evenly in every connection
import type { MintKind } from './signet-minter.ts';
import type { Target } from './targets.ts';

export const WORKLOAD_NAMES = ['userinfo', 'refresh', 'code', 'code_pkce', 'mixed'] as const;
export type WorkloadName = (typeof WORKLOAD_NAMES)[number];

type RequestKind = 'userinfo' | 'refresh' | 'code' | 'code_pkce';

/** A request kind as the load generator reads it (bench/load-generator.mjs). */
export type KindSpec = {
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  header?: string;
  headerPrefix?: string;
  bodyPrefix?: string;
  bodySuffix?: string;
  shared?: boolean;
  lists: string[][];
};

export type LoadJob = { origin: string; connections: number; durationMs: number; kinds: Partial<Record<RequestKind, KindSpec>>; pattern: RequestKind[] };

/** How many distinct access tokens userinfo cycles through. */
export const USERINFO_TOKENS = 1000;

const MINT_KIND: Record<Exclude<RequestKind, 'userinfo'>, MintKind> = { refresh: 'refresh', code: 'code', code_pkce: 'code_pkce' };

/** Each workload's request pattern, and the share of its requests that consume a single-use value of each kind. */
export const WORKLOADS: Record<WorkloadName, { pattern: RequestKind[]; consumes: Partial<Record<Exclude<RequestKind, 'userinfo'>, number>> }> = {
  userinfo: { pattern: ['userinfo'], consumes: {} },
  refresh: { pattern: ['refresh'], consumes: { refresh: 1 } },
  code: { pattern: ['code'], consumes: { code: 1 } },
  code_pkce: { pattern: ['code_pkce'], consumes: { code_pkce: 1 } },
  mixed: { pattern: mixedPattern(), consumes: { refresh: 0.09, code: 0.01 } },
};

/** 100 slots: 9 refreshes and 1 code spread evenly among 90 userinfo calls. */
function mixedPattern(): RequestKind[] {
  const pattern: RequestKind[] = Array.from({ length: 100 }, () => 'userinfo');
  for (let i = 0; i < 9; i++) pattern[5 + Math.round((i * 100) / 9)] = 'refresh';
  pattern[99] = 'code';
  return pattern;
}

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

function form(fields: Record<string, string>, last: string): string {
  return new URLSearchParams(fields).toString() + `&${last}=`;
}

/** The request kinds of one target: where to send them and how, with the values filled in later. */
function kindSpecs(target: Target): Record<RequestKind, Omit<KindSpec, 'lists'>> {
  const c = target.credentials;
  return {
    userinfo: { method: 'GET', path: target.paths.userinfo, headers: {}, header: 'authorization', headerPrefix: 'Bearer ', shared: true },
    refresh: { method: 'POST', path: target.paths.token, headers: FORM, bodyPrefix: form({ grant_type: 'refresh_token', client_id: c.clientId, client_secret: c.clientSecret }, 'refresh_token') },
    code: {
      method: 'POST',
      path: target.paths.token,
      headers: FORM,
      bodyPrefix: form({ grant_type: 'authorization_code', redirect_uri: c.redirectUri, client_id: c.clientId, client_secret: c.clientSecret }, 'code'),
    },
    code_pkce: {
      method: 'POST',
      path: target.paths.token,
      headers: FORM,
      bodyPrefix: form({ grant_type: 'authorization_code', redirect_uri: c.redirectUri, client_id: c.publicClientId, code_verifier: c.verifier }, 'code'),
    },
  };
}

/**
 * Mints what one round needs and builds its job: for every single-use kind, one list per connection,
 * sized for `expectedRps` over the round with `margin` to spare. Lists are never shared or reused.
 */
export async function prepareJob(
  target: Target,
  workload: WorkloadName,
  options: { connections: number; durationMs: number; expectedRps: number; margin: number; userinfoTokens: string[] },
): Promise<{ job: LoadJob; minted: number }> {
  const { pattern, consumes } = WORKLOADS[workload];
  const specs = kindSpecs(target);
  const kinds: LoadJob['kinds'] = {};
  let minted = 0;
  if (pattern.includes('userinfo')) kinds.userinfo = { ...specs.userinfo, lists: [options.userinfoTokens] };
  for (const [kind, share] of Object.entries(consumes) as Array<[Exclude<RequestKind, 'userinfo'>, number]>) {
    const perConnection = Math.ceil((options.expectedRps * (options.durationMs / 1000) * share * options.margin) / options.connections) + 5;
    const values = await target.mint(MINT_KIND[kind], perConnection * options.connections);
    minted += values.length;
    const lists = Array.from({ length: options.connections }, (_, c) => values.slice(c * perConnection, (c + 1) * perConnection));
    kinds[kind] = { ...specs[kind], lists };
  }
  return { job: { origin: target.origin, connections: options.connections, durationMs: options.durationMs, kinds, pattern }, minted };
}
