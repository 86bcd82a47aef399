// The reference: node-oidc-provider 9, configured as close as it allows to Signet's job, in its best
// case. Opaque access tokens (its default format), refresh-token rotation, client_secret_post, one
// public client for PKCE, and an unbounded in-memory adapter (a Map; the bundled adapter is an LRU of
// 1,000 entries that would evict the tokens under test, and it recomputes every grant's expiry on
// each save). No id_token where Signet issues none: codes and refresh tokens carry `profile email`
// without `openid`, so neither grant signs a JWT; userinfo tokens carry `openid`, which its userinfo
// endpoint requires.
//
// Run by the harness through fork(). IPC: → {type:'ready', port, clients}; ← {type:'mint', id, kind,
// count} → {type:'minted', id, tokens}; kind is access | refresh | code | code_pkce.
import { generateKeyPairSync } from 'node:crypto';
import http from 'node:http';
import Provider from 'oidc-provider';

const ACCOUNT_ID = '0f8fad5b-d9cb-469f-a165-70867728950e';
const PROFILE = { sub: ACCOUNT_ID, name: 'Ada Lovelace', picture: '', email: 'ada@example.com', email_verified: true };
const CONFIDENTIAL = { client_id: 'bench-confidential', client_secret: 'bench-confidential-secret-0123456789abcdef' };
const PUBLIC_ID = 'bench-public';
const REDIRECT_URI = 'https://app.example/callback';
const [verifier, challenge] = process.argv.slice(2);

/** Every model in one Map, plus grant membership for revokeByGrantId. Nothing is evicted. */
const storage = new Map();
const grantMembers = new Map();

class UnboundedMemoryAdapter {
  constructor(model) {
    this.model = model;
  }
  key(id) {
    return `${this.model}:${id}`;
  }
  async upsert(id, payload) {
    const key = this.key(id);
    storage.set(key, payload);
    if (payload.grantId) {
      let members = grantMembers.get(payload.grantId);
      if (!members) grantMembers.set(payload.grantId, (members = new Set()));
      members.add(key);
    }
  }
  async find(id) {
    return storage.get(this.key(id));
  }
  async findByUid(uid) {
    for (const [key, payload] of storage) if (key.startsWith(`${this.model}:`) && payload.uid === uid) return payload;
    return undefined;
  }
  async findByUserCode() {
    return undefined;
  }
  async consume(id) {
    const payload = storage.get(this.key(id));
    if (payload) payload.consumed = Math.floor(Date.now() / 1000);
  }
  async destroy(id) {
    const key = this.key(id);
    const payload = storage.get(key);
    storage.delete(key);
    if (payload?.grantId) grantMembers.get(payload.grantId)?.delete(key);
  }
  async revokeByGrantId(grantId) {
    for (const key of grantMembers.get(grantId) ?? []) storage.delete(key);
    grantMembers.delete(grantId);
  }
}

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const server = http.createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const { port } = server.address();

const provider = new Provider(`http://127.0.0.1:${port}`, {
  adapter: UnboundedMemoryAdapter,
  clients: [
    {
      ...CONFIDENTIAL,
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      redirect_uris: [REDIRECT_URI],
      token_endpoint_auth_method: 'client_secret_post',
    },
    { client_id: PUBLIC_ID, grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: 'none' },
  ],
  clientAuthMethods: ['client_secret_post', 'none'],
  findAccount: async (_ctx, id) => (id === ACCOUNT_ID ? { accountId: id, claims: async () => PROFILE } : undefined),
  claims: { openid: ['sub'], profile: ['name', 'picture'], email: ['email', 'email_verified'] },
  features: { devInteractions: { enabled: false }, userinfo: { enabled: true }, revocation: { enabled: true } },
  // Signet's code workload redeems codes without PKCE with client_secret_post; oidc-provider allows that
  // for confidential clients once PKCE is not required (public clients still need it).
  pkce: { required: (_ctx, client) => client.clientAuthMethod === 'none' },
  rotateRefreshToken: true,
  issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
  expiresWithSession: async () => false,
  ttl: { AccessToken: 7200, AuthorizationCode: 600, RefreshToken: 30 * 24 * 3600, Grant: 30 * 24 * 3600, IdToken: 3600, Interaction: 3600, Session: 3600 },
  jwks: { keys: [{ ...privateKey.export({ format: 'jwk' }), alg: 'RS256', use: 'sig', kid: 'bench' }] },
  cookies: { keys: ['bench-cookie-key-0123456789abcdef'] },
});
provider.on('server_error', (_ctx, error) => process.stderr.write(`oidc-provider server_error: ${error.stack}\n`));
server.on('request', provider.callback());
server.keepAliveTimeout = 60_000;

const confidential = await provider.Client.find(CONFIDENTIAL.client_id);
const publicClient = await provider.Client.find(PUBLIC_ID);
const grants = new Map();
/** One grant per (account, client), as after one consent; every token shares it. */
async function grantFor(client) {
  let grantId = grants.get(client.clientId);
  if (!grantId) {
    const grant = new provider.Grant({ accountId: ACCOUNT_ID, clientId: client.clientId });
    grant.addOIDCScope('openid profile email');
    grantId = await grant.save();
    grants.set(client.clientId, grantId);
  }
  return grantId;
}

async function mintOne(kind) {
  const client = kind === 'code_pkce' ? publicClient : confidential;
  const common = { accountId: ACCOUNT_ID, client, grantId: await grantFor(client), expiresWithSession: false };
  switch (kind) {
    case 'access':
      return new provider.AccessToken({ ...common, gty: 'authorization_code', scope: 'openid profile email' }).save();
    case 'refresh':
      return new provider.RefreshToken({ ...common, gty: 'authorization_code', scope: 'profile email', rotations: 0, authTime: Math.floor(Date.now() / 1000) }).save();
    case 'code':
      return new provider.AuthorizationCode({ ...common, scope: 'profile email', redirectUri: REDIRECT_URI, authTime: Math.floor(Date.now() / 1000) }).save();
    case 'code_pkce':
      return new provider.AuthorizationCode({
        ...common,
        scope: 'profile email',
        redirectUri: REDIRECT_URI,
        codeChallenge: challenge,
        codeChallengeMethod: 'S256',
        authTime: Math.floor(Date.now() / 1000),
      }).save();
    default:
      throw new Error(`unknown kind ${kind}`);
  }
}

process.on('message', async (message) => {
  if (message.type !== 'mint') return;
  try {
    const tokens = [];
    for (let i = 0; i < message.count; i++) tokens.push(await mintOne(message.kind));
    process.send({ type: 'minted', id: message.id, tokens });
  } catch (error) {
    process.send({ type: 'minted', id: message.id, error: String(error?.stack ?? error) });
  }
});
process.on('disconnect', () => process.exit(0));

if (!verifier || !challenge) throw new Error('usage: oidc-provider-server.mjs VERIFIER CHALLENGE');
process.send({
  type: 'ready',
  port,
  clients: { confidential: CONFIDENTIAL, publicClientId: PUBLIC_ID, redirectUri: REDIRECT_URI },
});
