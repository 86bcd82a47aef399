// Hardening 11, "Mix-up defence (RFC 9207)": by default every callback carries `iss` — the issuer,
// i.e. the served origin that received /oauth/authorize — and discovery advertises
// `authorization_response_iss_parameter_supported: true`; SIGNET_COMPAT=legacy stays byte-identical.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as oauth from 'oauth4webapi';
import { TEST_ALT_BASE_URL, TEST_BASE_URL } from '../helpers/app.ts';
import { forEachDatabase } from '../helpers/databases.ts';
import { flowSetup, TinyBrowser, type Flow } from '../oauth/authorize-support.ts';

/** Every callback outcome the flow produces, in one browser: code, access_denied, and prompt=none's three. */
async function everyCallback(flow: Flow, host?: string): Promise<URL[]> {
  const browser = new TinyBrowser(flow, host);
  const urls: URL[] = [];
  const silent = async (state: string) => new URL(String((await browser.get(flow.authorizePath({ prompt: 'none', state }))).headers.location));
  urls.push(await silent('login'));
  const denied = await browser.authorize({ state: 'deny' });
  await browser.signIn(denied);
  urls.push(new URL(String((await browser.consent(denied, 'deny')).headers.location)));
  urls.push(await silent('consent'));
  const allowed = await browser.authorize({ state: 'code' });
  urls.push(new URL(String((await browser.consent(allowed, 'allow')).headers.location)));
  urls.push(await silent('silent-code'));
  return urls;
}

forEachDatabase('mix-up defence', (open) => {
  test('RFC 9207: "add `iss` to every callback in the default mode" — code and every error, naming the issuer of the host that was asked', async () => {
    const database = await open();
    const flow = await flowSetup(database);
    for (const [host, issuer] of [[undefined, TEST_BASE_URL], ['alt.signet.test', TEST_ALT_BASE_URL]] as const) {
      await database.db.deleteFrom('grants').execute();
      const urls = await everyCallback(flow, host);
      assert.deepEqual(
        urls.map((u) => u.searchParams.get('code') ? 'code' : u.searchParams.get('error')),
        ['login_required', 'access_denied', 'consent_required', 'code', 'code'],
      );
      for (const url of urls) {
        assert.equal(url.searchParams.get('iss'), issuer, url.href);
        assert.equal([...url.searchParams.keys()].at(-1), 'iss', 'after code/error and state');
      }
    }
  });

  test('RFC 9207: discovery advertises authorization_response_iss_parameter_supported, and its issuer is the `iss` of the callbacks', async () => {
    const flow = await flowSetup(await open());
    const doc = (await flow.app.inject({ url: '/.well-known/openid-configuration', headers: { host: flow.host } })).json<Record<string, unknown>>();
    assert.equal(doc.authorization_response_iss_parameter_supported, true);
    const [callback] = await everyCallback(flow);
    assert.equal(callback!.searchParams.get('iss'), doc.issuer);
  });

  test('RFC 9207 as a client checks it: oauth4webapi accepts the callback for this issuer and refuses it for another (a mix-up)', async () => {
    const flow = await flowSetup(await open());
    const state = oauth.generateRandomState();
    const callback = await new TinyBrowser(flow).fullFlow({ state });
    const client: oauth.Client = { client_id: flow.clientId };
    const ours: oauth.AuthorizationServer = { issuer: TEST_BASE_URL, authorization_response_iss_parameter_supported: true };
    assert.ok(oauth.validateAuthResponse(ours, client, callback, state).get('code'));
    const other: oauth.AuthorizationServer = { issuer: 'https://other-provider.example', authorization_response_iss_parameter_supported: true };
    assert.throws(() => oauth.validateAuthResponse(other, client, callback, state), /iss/);
  });

  test('SIGNET_COMPAT=legacy stays byte-identical: no `iss` in any callback, and discovery does not advertise it', async () => {
    const flow = await flowSetup(await open(), { SIGNET_COMPAT: 'legacy' });
    for (const url of await everyCallback(flow)) assert.equal(url.searchParams.get('iss'), null, url.href);
    const doc = (await flow.app.inject({ url: '/.well-known/openid-configuration', headers: { host: flow.host } })).json<Record<string, unknown>>();
    assert.equal('authorization_response_iss_parameter_supported' in doc, false);
  });
});
