// GET /.well-known/openid-configuration (spec "Versioning"): accurate by default, the legacy document
// with SIGNET_COMPAT=legacy, and the /api/v1 OAuth paths answering 404 in every mode.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TEST_ALT_BASE_URL, TEST_BASE_URL, testApp } from '../helpers/app.ts';
import { forEachDatabase } from '../helpers/databases.ts';

const host = (base: string) => new URL(base).host;
const MODES: Array<Record<string, string>> = [{}, { SIGNET_COMPAT: 'legacy' }];

/** spec Versioning 3: "Accurate discovery fields" */
const ACCURATE_FIELDS = {
  scopes_supported: ['openid', 'profile', 'email', 'phone'],
  response_types_supported: ['code'],
  grant_types_supported: ['authorization_code', 'refresh_token'],
  token_endpoint_auth_methods_supported: ['client_secret_post'],
  code_challenge_methods_supported: ['plain', 'S256'],
};

forEachDatabase('discovery', (open) => {
  test('Versioning 3: the accurate fields — scopes_supported, response_types_supported, grant_types_supported, token_endpoint_auth_methods_supported, code_challenge_methods_supported — in both modes', async () => {
    const database = await open();
    for (const env of MODES) {
      const { app } = await testApp(database, env);
      const res = await app.inject({ url: '/.well-known/openid-configuration', headers: { host: host(TEST_BASE_URL) } });
      assert.equal(res.statusCode, 200);
      assert.match(String(res.headers['content-type']), /^application\/json/);
      const doc = res.json<Record<string, unknown>>();
      for (const [field, value] of Object.entries(ACCURATE_FIELDS)) {
        // issue 43: the accurate document also lists the opt-in grants after the spec's two (only
        // applications registered with --grant can use them); the legacy one keeps the spec's two.
        const expected = field === 'grant_types_supported' && env.SIGNET_COMPAT !== 'legacy' ? [...value, 'client_credentials', 'urn:ietf:params:oauth:grant-type:device_code'] : value;
        assert.deepEqual(doc[field], expected, `${field} (${JSON.stringify(env)})`);
      }
      await app.close();
    }
  });

  test('default (issue 28): an OpenID Provider document — issuer and endpoints of the host that serves it, jwks_uri, both id_token algorithms, end_session_endpoint, acr values', async () => {
    const { app } = await testApp(await open());
    for (const base of [TEST_BASE_URL, TEST_ALT_BASE_URL]) {
      const doc = (await app.inject({ url: '/.well-known/openid-configuration', headers: { host: host(base) } })).json<Record<string, unknown>>();
      assert.equal(doc.issuer, base);
      assert.equal(doc.authorization_endpoint, `${base}/oauth/authorize`);
      assert.equal(doc.token_endpoint, `${base}/oauth/token`);
      assert.equal(doc.userinfo_endpoint, `${base}/oauth/userinfo`);
      assert.equal(doc.revocation_endpoint, `${base}/oauth/revoke`);
      assert.deepEqual(doc.revocation_endpoint_auth_methods_supported, ['client_secret_post']);
      assert.equal(doc.jwks_uri, `${base}/oauth/jwks`);
      assert.equal(doc.end_session_endpoint, `${base}/oauth/end-session`);
      assert.deepEqual(doc.id_token_signing_alg_values_supported, ['ES256', 'RS256']);
      assert.deepEqual(doc.subject_types_supported, ['public']);
      assert.deepEqual(doc.acr_values_supported, ['pwd', 'mfa']);
      assert.deepEqual(doc.claims_supported, ['iss', 'sub', 'aud', 'exp', 'iat', 'auth_time', 'nonce', 'at_hash', 'amr', 'acr', 'sid', 'name', 'picture', 'email', 'email_verified', 'phone_number', 'phone_number_verified']);
      // each one true: the JWKS it names holds a key of every advertised algorithm
      const keys = (await app.inject({ url: '/oauth/jwks', headers: { host: host(base) } })).json<{ keys: Array<{ alg: string; kid: string; d?: string }> }>().keys;
      assert.deepEqual([...new Set(keys.map((k) => k.alg))].sort(), ['ES256', 'RS256']);
      assert.ok(keys.every((k) => k.d === undefined && typeof k.kid === 'string'), 'public keys only, each with its kid');
    }
    await app.close();
  });

  test('SIGNET_COMPAT=legacy: Versioning 2 and 4 — /api/v1 token, userinfo and revocation endpoints, an issuer unlike the serving host, jwks_uri and RS256', async () => {
    const { app } = await testApp(await open(), { SIGNET_COMPAT: 'legacy' });
    for (const [base, other] of [
      [TEST_BASE_URL, TEST_ALT_BASE_URL],
      [TEST_ALT_BASE_URL, TEST_BASE_URL],
    ] as const) {
      const doc = (await app.inject({ url: '/.well-known/openid-configuration', headers: { host: host(base) } })).json<Record<string, unknown>>();
      assert.notEqual(doc.issuer, base, 'spec: "Its issuer differs from the host that serves it"');
      assert.equal(doc.issuer, other);
      assert.equal(doc.token_endpoint, `${base}/api/v1/oauth/token`);
      assert.equal(doc.userinfo_endpoint, `${base}/api/v1/oauth/userinfo`);
      assert.equal(doc.revocation_endpoint, `${base}/api/v1/oauth/revoke`);
      assert.equal(typeof doc.jwks_uri, 'string');
      assert.deepEqual(doc.id_token_signing_alg_values_supported, ['RS256']);
    }
    await app.close();
  });

  test('SIGNET_COMPAT=legacy with a single host: the issuer still differs from the serving origin', async () => {
    const database = await open();
    const { app } = await testApp(database, { SIGNET_COMPAT: 'legacy', SIGNET_ALT_BASE_URL: '' });
    const doc = (await app.inject({ url: '/.well-known/openid-configuration', headers: { host: host(TEST_BASE_URL) } })).json<Record<string, unknown>>();
    assert.notEqual(doc.issuer, TEST_BASE_URL);
    await app.close();
  });

  test('Errors | metadata-advertised endpoints with the `/api/v1` prefix → `404`, in every mode', async () => {
    const database = await open();
    for (const env of MODES) {
      const { app } = await testApp(database, env);
      const doc = (await app.inject({ url: '/.well-known/openid-configuration', headers: { host: host(TEST_BASE_URL) } })).json<Record<string, string>>();
      const paths = ['/api/v1/oauth/token', '/api/v1/oauth/userinfo', '/api/v1/oauth/revoke'];
      if (env.SIGNET_COMPAT === 'legacy') assert.deepEqual([doc.token_endpoint, doc.userinfo_endpoint, doc.revocation_endpoint], paths.map((p) => `${TEST_BASE_URL}${p}`));
      for (const path of paths) {
        for (const method of ['GET', 'POST'] as const) {
          const res = await app.inject({ method, url: path, headers: { host: host(TEST_BASE_URL), 'content-type': 'application/x-www-form-urlencoded' }, payload: method === 'POST' ? 'grant_type=refresh_token' : undefined });
          assert.equal(res.statusCode, 404, `${method} ${path} (${JSON.stringify(env)})`);
        }
      }
      await app.close();
    }
  });
});
