// The consent decision and remembered grants as plain rules, and the callback URL builder.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { manualClock, DAY } from '../../src/config/clock.ts';
import * as accounts from '../../src/accounts/accounts.ts';
import * as clients from '../../src/clients/clients.ts';
import { grantedScope } from '../../src/consent/decision.ts';
import { covers, findGrant, listAuthorizedApplications, recordConsent, withdrawApplication } from '../../src/consent/grants.ts';
import { callbackUrl } from '../../src/oauth/callback.ts';
import { forEachDatabase } from '../helpers/databases.ts';

test('"Grant covers request iff every requested scope is in the granted scope"', () => {
  assert.equal(covers(['openid', 'profile', 'email'], ['openid', 'email']), true);
  assert.equal(covers(['openid', 'profile'], ['openid', 'profile']), true);
  assert.equal(covers(['openid'], ['openid', 'profile']), false);
  assert.equal(covers([], ['openid']), false);
});

test('consent: "`openid` is fixed, the others can be unticked" — the granted scope is what was ticked, plus openid, never more than requested', () => {
  assert.deepEqual(grantedScope(['openid', 'profile', 'email'], ['profile', 'email']), ['openid', 'profile', 'email']);
  assert.deepEqual(grantedScope(['openid', 'profile', 'email'], []), ['openid']);
  assert.deepEqual(grantedScope(['openid', 'profile'], ['profile', 'phone', 'admin']), ['openid', 'profile']);
  assert.deepEqual(grantedScope(['profile'], []), []);
});

test('callback: `code` then `state`, then `iss` (RFC 9207) by default; `state` raw and no `iss` with SIGNET_COMPAT=legacy, form-encoded otherwise; omitted when not sent; `&` when the URI has a query', () => {
  const code = 'abc-_DEF=';
  const iss = 'https://signet.example';
  const opts = (state: string | null, compat: 'legacy' | undefined) => ({ state, compat, issuer: iss });
  assert.equal(callbackUrl('https://a.example/cb', { code }, opts('xyz', undefined)), 'https://a.example/cb?code=abc-_DEF%3D&state=xyz&iss=https%3A%2F%2Fsignet.example');
  assert.equal(callbackUrl('https://a.example/cb', { code }, opts('xyz', 'legacy')), 'https://a.example/cb?code=abc-_DEF%3D&state=xyz');
  assert.equal(callbackUrl('https://a.example/cb', { code }, opts('a b&c#d', 'legacy')), 'https://a.example/cb?code=abc-_DEF%3D&state=a b&c#d');
  assert.equal(callbackUrl('https://a.example/cb', { code }, opts('a b&c#d', undefined)), 'https://a.example/cb?code=abc-_DEF%3D&state=a+b%26c%23d&iss=https%3A%2F%2Fsignet.example');
  assert.equal(callbackUrl('https://a.example/cb', { error: 'access_denied' }, opts(null, undefined)), 'https://a.example/cb?error=access_denied&iss=https%3A%2F%2Fsignet.example');
  assert.equal(callbackUrl('https://a.example/cb', { error: 'login_required' }, opts('', undefined)), 'https://a.example/cb?error=login_required&iss=https%3A%2F%2Fsignet.example');
  assert.equal(callbackUrl('https://a.example/cb', { error: 'login_required' }, opts('', 'legacy')), 'https://a.example/cb?error=login_required');
  assert.equal(callbackUrl('https://a.example/cb?x=1', { error: 'consent_required' }, opts('s', undefined)), 'https://a.example/cb?x=1&error=consent_required&state=s&iss=https%3A%2F%2Fsignet.example');
  assert.equal(callbackUrl('myapp://cb', { error: 'interaction_required' }, opts('s', 'legacy')), 'myapp://cb?error=interaction_required&state=s');
});

forEachDatabase('grants', (open) => {
  test('grants are remembered per person and application; first_authorized_at keeps the first time; the latest decision on an asked scope wins', async () => {
    const { db, dialect } = await open();
    const clock = manualClock();
    const notice = { dialect, locale: 'en' };
    const { sub } = await accounts.createAccount(db, clock, { email: 'g@example.com', password: 'password-1' });
    const { client } = await clients.registerClient(db, clock, Buffer.alloc(32), { name: 'Grant App', redirectUris: ['https://g.example/cb'], scopes: ['openid', 'profile', 'email', 'phone'] });
    const first = clock();
    assert.deepEqual(await recordConsent(db, clock, sub, client.clientId, ['openid', 'profile', 'email'], ['openid', 'profile', 'email'], notice), ['openid', 'profile', 'email']);
    clock.advance(DAY);
    // Asked for openid and phone only: profile and email stay granted, phone is added.
    assert.deepEqual(await recordConsent(db, clock, sub, client.clientId, ['openid', 'phone'], ['openid', 'phone'], notice), ['openid', 'profile', 'email', 'phone']);
    // Asked for email again and unticked it: email is removed.
    assert.deepEqual(await recordConsent(db, clock, sub, client.clientId, ['openid', 'email'], ['openid'], notice), ['openid', 'profile', 'phone']);
    const grant = (await findGrant(db, sub, client.clientId))!;
    assert.equal(grant.firstAuthorizedAt, first);
    assert.equal(grant.updatedAt, first + DAY);
    const apps = await listAuthorizedApplications(db, sub);
    assert.deepEqual(apps.map((a) => [a.name, a.scope.join(' ')]), [['Grant App', 'openid profile phone']]);
    assert.equal(await withdrawApplication(db, clock, sub, client.clientId), true);
    assert.equal(await findGrant(db, sub, client.clientId), undefined);
    assert.equal(await withdrawApplication(db, clock, sub, client.clientId), false);
  });
});
