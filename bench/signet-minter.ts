// Pre-minting for the Signet targets, through Signet's own service layer on the server's database (no
// SQL here): one account and two applications, then access tokens, refresh tokens and codes as the
// grants would issue them. Keys derive from the same SIGNET_SECRET the server was started with, so the
// server accepts what is minted here.
import { createAccount } from '../src/accounts/accounts.ts';
import { registerClient } from '../src/clients/clients.ts';
import { systemClock } from '../src/config/clock.ts';
import { deriveKeys } from '../src/config/keys.ts';
import type { Settings } from '../src/config/settings.ts';
import { openDatabase, type Db } from '../src/db/database.ts';
import { issueAuthorizationCode } from '../src/oauth/codes.ts';
import { s256Challenge } from '../src/oauth/pkce.ts';
import { issueTokenPair, REFRESH_CHAIN_LIFETIME_MS } from '../src/oauth/token/issue-tokens.ts';

export type MintKind = 'access' | 'refresh' | 'code' | 'code_pkce';

/** What a load generator must send besides the minted values. */
export type Credentials = {
  clientId: string;
  clientSecret: string;
  publicClientId: string;
  redirectUri: string;
  verifier: string;
};

export const BENCH_REDIRECT_URI = 'https://app.example/callback';
export const BENCH_VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r7wW1gFWFOEjXk';
const SCOPE = 'openid profile email';
/** One transaction per this many minted values: one commit (and one fsync) per batch, not per value. */
const BATCH = 500;

export type SignetMinter = {
  credentials: Credentials;
  mint(kind: MintKind, count: number): Promise<string[]>;
  close(): Promise<void>;
};

export async function openSignetMinter(database: Settings['database'], rootSecret: string): Promise<SignetMinter> {
  const handle = openDatabase(database);
  const { db } = handle;
  const keys = deriveKeys(rootSecret);
  const clock = systemClock;
  // The server has migrated the schema before it answered /readyz.
  const person = await createAccount(db, clock, { email: 'ada@example.com', name: 'Ada Lovelace', emailVerified: true, password: 'analytical-engine-bench' });
  const scopes = ['openid', 'profile', 'email'];
  const confidential = await registerClient(db, clock, keys.tokenHash, { name: 'Bench confidential', redirectUris: [BENCH_REDIRECT_URI], scopes });
  const publicClient = await registerClient(db, clock, keys.tokenHash, { name: 'Bench public', redirectUris: [BENCH_REDIRECT_URI], scopes, isPublic: true });
  const challenge = s256Challenge(BENCH_VERIFIER);

  async function mintOne(trx: Db, kind: MintKind): Promise<string> {
    const now = clock();
    if (kind === 'access' || kind === 'refresh') {
      // As the code grant issues them: a new chain per authorization, 30 days from now.
      const pair = await issueTokenPair(trx, keys.tokenHash, now, {
        clientId: confidential.client.clientId,
        sub: person.sub,
        scope: SCOPE,
        expiresAt: now + REFRESH_CHAIN_LIFETIME_MS,
      });
      return kind === 'access' ? pair.access_token : pair.refresh_token;
    }
    const pkce = kind === 'code_pkce';
    return issueAuthorizationCode(trx, keys.tokenHash, clock, {
      clientId: pkce ? publicClient.client.clientId : confidential.client.clientId,
      sub: person.sub,
      redirectUri: BENCH_REDIRECT_URI,
      scope: SCOPE,
      codeChallenge: pkce ? challenge : null,
      codeChallengeMethod: pkce ? 'S256' : null,
    });
  }

  return {
    credentials: {
      clientId: confidential.client.clientId,
      clientSecret: confidential.clientSecret!,
      publicClientId: publicClient.client.clientId,
      redirectUri: BENCH_REDIRECT_URI,
      verifier: BENCH_VERIFIER,
    },
    async mint(kind, count) {
      const values: string[] = [];
      while (values.length < count) {
        const batch = Math.min(BATCH, count - values.length);
        await db.transaction().execute(async (trx) => {
          for (let i = 0; i < batch; i++) values.push(await mintOne(trx, kind));
        });
      }
      return values;
    },
    close: () => handle.close(),
  };
}
