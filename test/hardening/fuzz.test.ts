// Hardening 13: random and adversarial requests at every route Fastify lists — the OAuth endpoints,
// the pages, the task and notification APIs, and the admin API on its own app. The property, for each
// request: an answer arrives (no hang), it is never a 5xx, it carries the security headers, a refusal
// is a 4xx in the route's error shape, a success is one the route may give to that request, and the
// database holds nothing new except what that answer explicitly allows (rate-limit counters aside).
//
// `npm test` runs 2,500 requests with a fixed seed on SQLite and on PostgreSQL (about 25 s each);
// `npm run fuzz` runs SIGNET_FUZZ_RUNS=200000 on both. SIGNET_FUZZ_SEED picks another seed,
// SIGNET_FUZZ_DATABASES the databases (sqlite,postgres), SIGNET_FUZZ_STATS=1 prints how often each
// route gave each answer (to see how deep the requests reach).
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import fc from 'fast-check';
import { sql } from 'kysely';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { createAccount } from '../../src/accounts/accounts.ts';
import { unlockAccount } from '../../src/accounts/throttle.ts';
import { createAdminKey } from '../../src/admin/admin-keys.ts';
import { buildAdminApp } from '../../src/admin/app.ts';
import { registerClient } from '../../src/clients/clients.ts';
import type { Db } from '../../src/db/database.ts';
import { issueAuthorizationCode } from '../../src/oauth/codes.ts';
import { postgresDatabase, sqliteDatabase, type TestDatabase } from '../helpers/databases.ts';
import { postgresUnavailableReason, skipUnlessAvailable } from '../helpers/services.ts';
import { csrfOf, flowSetup, TinyBrowser, type Flow } from '../oauth/authorize-support.ts';
import { describe as describeRequest, fuzzRequest, registeredRoutes, render, type FuzzRequest, type FuzzRoute, type Known } from './fuzz-requests.ts';

const RUNS = Number(process.env.SIGNET_FUZZ_RUNS ?? 2500);
const SEED = Number(process.env.SIGNET_FUZZ_SEED ?? 20261122);
/** Both databases: PostgreSQL refuses values SQLite stores (a NUL character), so each finds its own 500s. */
const DATABASES = (process.env.SIGNET_FUZZ_DATABASES ?? 'sqlite,postgres').split(',').filter((kind): kind is 'sqlite' | 'postgres' => kind === 'sqlite' || kind === 'postgres');
/** An answer slower than this is a hang. */
const ANSWER_WITHIN_MS = 15_000;
const UPLOAD_MAX_MB = 1;

/** Counters that every refusal may add to (rate limits, sign-in throttling): not "something new". */
const COUNTER_TABLES = new Set(['signin_throttle', 'account_request_counters']);

type Fixture = { flow: Flow; admin: FastifyInstance; known: Known; browser: TinyBrowser; refresh(): Promise<void> };

async function fuzzFixture(database: TestDatabase): Promise<Fixture> {
  const flow = await flowSetup(database, { SIGNET_SIGNUP: 'open', SIGNET_UPLOAD_MAX_MB: String(UPLOAD_MAX_MB), SIGNET_LOG_LEVEL: 'silent' });
  const { db, clock, keys, logger, objects } = flow.deps;
  const admin = await buildAdminApp({ db, clock, keys, objects, logger, trustProxy: false });
  await admin.ready();
  const spa = 'https://spa.example';
  const confidential = await registerClient(db, clock, keys.tokenHash, { name: 'Fuzz App', redirectUris: ['https://app.example/callback'], allowedOrigins: [spa] });
  const pub = await registerClient(db, clock, keys.tokenHash, { name: 'Fuzz SPA', redirectUris: ['https://app.example/callback'], isPublic: true, allowedOrigins: [spa] });
  const victimClient = await registerClient(db, clock, keys.tokenHash, { name: 'Victim App', redirectUris: ['https://victim.example/cb'] });
  const victim = await createAccount(db, clock, { email: 'victim@example.com', password: 'a long victim password' });
  const code = await issueAuthorizationCode(db, keys.tokenHash, clock, { clientId: confidential.client.clientId, sub: flow.sub, redirectUri: 'https://app.example/callback', scope: 'openid profile email', codeChallenge: null, codeChallengeMethod: null });
  const exchanged = await flow.app.inject({
    method: 'POST',
    url: '/oauth/token',
    headers: { host: flow.host, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: 'https://app.example/callback', client_id: confidential.client.clientId, client_secret: confidential.clientSecret! }).toString(),
  });
  assert.equal(exchanged.statusCode, 200, exchanged.body);
  const tokens = exchanged.json<{ access_token: string; refresh_token: string }>();
  const adminKey = await createAdminKey(db, clock, keys.tokenHash, 'fuzz');
  const browser = new TinyBrowser(flow);
  const known: Known = {
    code: '',
    clientId: confidential.client.clientId,
    publicClientId: pub.client.clientId,
    clientSecret: confidential.clientSecret!,
    redirectUri: 'https://app.example/callback',
    accessToken: tokens.access_token,
    refreshToken: tokens.refresh_token,
    pendingRequest: '',
    victimSub: victim.sub,
    victimClientId: victimClient.client.clientId,
    email: 'person@example.com',
    csrfToken: '',
    adminKey: adminKey.key,
    spaOrigin: spa,
    sessionCookie: '',
    csrfCookie: '',
    flowCookie: '',
  };
  const cookie = (name: string) => `${name}=${browser.cookies.get(name) ?? ''}`;
  /** (Re)starts the signed-in session and a pending request of this browser, and reads a CSRF pair. */
  async function refresh(): Promise<void> {
    // The fuzz may have slowed sign-in for this account (wrong passwords for its e-mail address).
    await unlockAccount(db, flow.sub);
    browser.cookies.clear();
    known.pendingRequest = await browser.authorize();
    known.code = await issueAuthorizationCode(db, keys.tokenHash, clock, { clientId: known.clientId, sub: flow.sub, redirectUri: known.redirectUri, scope: 'openid', codeChallenge: null, codeChallengeMethod: null });
    const signedIn = await browser.signIn();
    assert.equal(signedIn.statusCode, 303, `the fixture signs in: ${signedIn.body.slice(0, 300)}`);
    const page = await browser.get('/account');
    assert.equal(page.statusCode, 200);
    known.csrfToken = csrfOf(page.body);
    Object.assign(known, { sessionCookie: cookie('signet_session'), csrfCookie: cookie('signet_csrf'), flowCookie: cookie('signet_flow') });
  }
  await refresh();
  return { flow, admin, known, browser, refresh };
}

/** Row counts of every table but the counters, in one query. */
async function tableCounter(db: Db): Promise<() => Promise<Record<string, number>>> {
  const tables = (await db.introspection.getTables())
    .map((t) => t.name)
    .filter((name) => !name.startsWith('kysely_') && !COUNTER_TABLES.has(name))
    .sort();
  const query = sql<Record<string, string | number>>`select ${sql.join(tables.map((t) => sql`(select count(*) from ${sql.table(t)}) as ${sql.id(t)}`))}`;
  return async () => {
    const { rows } = await query.execute(db);
    return Object.fromEntries(Object.entries(rows[0]!).map(([name, count]) => [name, Number(count)]));
  };
}

/** Sends one request; a stream (server-sent events) counts as answered once its head arrives. */
async function send(app: FastifyInstance, options: InjectOptions): Promise<{ res: LightMyRequestResponse; body: Buffer }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ANSWER_WITHIN_MS} ms (a hang)`)), ANSWER_WITHIN_MS);
  });
  try {
    const res = await Promise.race([app.inject({ ...options, payloadAsStream: true }), timeout]);
    const stream = res.stream();
    if (String(res.headers['content-type']).startsWith('text/event-stream')) {
      stream.destroy();
      return { res, body: Buffer.alloc(0) };
    }
    const chunks: Buffer[] = [];
    const read = (async () => {
      for await (const chunk of stream) chunks.push(Buffer.from(chunk as Uint8Array));
    })();
    await Promise.race([read, timeout]);
    return { res, body: Buffer.concat(chunks) };
  } finally {
    clearTimeout(timer);
  }
}

/** oauth: /oauth/*; api: the session APIs; docling: docling-serve's /v1 and /v1alpha (issue 40); admin; page: HTML pages and their static files (one plugin, one error page); public: discovery, probes, the icon. */
type Surface = 'oauth' | 'api' | 'docling' | 'admin' | 'page' | 'public';

function surfaceOf(route: FuzzRoute): Surface {
  // issue 27: the admin console's pages share the admin listener with the API (/admin/v1/…).
  if (route.app === 'admin' && (route.url === '/admin' || route.url.startsWith('/admin/')) && !route.url.startsWith('/admin/v1/')) return 'page';
  if (route.app === 'admin') return 'admin';
  // issue 28: RP-initiated logout is a browser navigation answered with pages (a confirmation, an error page).
  if (route.url.startsWith('/oauth/end-session')) return 'page';
  if (route.url.startsWith('/oauth/')) return 'oauth';
  if (route.url.startsWith('/api/')) return 'api';
  if (route.url.startsWith('/v1/') || route.url.startsWith('/v1alpha/')) return 'docling';
  if (route.url.startsWith('/.well-known/') || ['/favicon.ico', '/healthz', '/readyz', '/static/brand.css'].includes(route.url)) return 'public';
  return 'page';
}

function headerOf(res: LightMyRequestResponse, name: string): string {
  return String(res.headers[name] ?? '');
}

function assertSecurityHeaders(route: FuzzRoute, res: LightMyRequestResponse): void {
  assert.equal(headerOf(res, 'x-content-type-options'), 'nosniff');
  if (route.app === 'admin') return; // an API on its own listener: nosniff and no-store
  assert.equal(headerOf(res, 'x-frame-options'), 'DENY');
  assert.match(headerOf(res, 'content-security-policy'), /frame-ancestors 'none'/);
  assert.equal(headerOf(res, 'referrer-policy'), 'no-referrer');
}

/** A refusal in the shape of its route: OAuth's {error, error_description}, the APIs' {error, message}, a page. */
function assertErrorShape(route: FuzzRoute, options: InjectOptions, res: LightMyRequestResponse, body: Buffer, routed: boolean): void {
  assert.ok(res.statusCode >= 400 && res.statusCode < 500);
  if (options.method === 'HEAD') return;
  const type = headerOf(res, 'content-type');
  const surface = surfaceOf(route);
  if (type.startsWith('application/json')) {
    const json = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
    const keys = Object.keys(json).sort();
    const oauthShape = keys.join() === 'error,error_description' && typeof json.error_description === 'string';
    const apiShape = keys.join() === 'error,message' && typeof json.message === 'string';
    if (surface !== 'docling') assert.equal(typeof json.error, 'string', 'an error code');
    // A method the path does not serve reaches no route: the app's own 404 answers, {error, message}.
    const notFound = !routed && res.statusCode === 404 && json.error === 'not_found' && apiShape;
    // The end-session pages live under /oauth/, where the app's error handler answers JSON in OAuth's shape.
    // issue 40: docling-serve's routes refuse as docling-serve does, {detail} (a string, or FastAPI's list of {type, loc, msg}).
    // What never reaches the route — a path resolving (%2e%2e) out of it, an address too long or broken
    // — is answered by the app itself, {error, message}.
    if (surface === 'docling') {
      const detailShape = keys.join() === 'detail' && (typeof json.detail === 'string' || Array.isArray(json.detail));
      assert.ok(detailShape || apiShape, `{detail}: ${body.toString('utf8').slice(0, 300)}`);
      return;
    }
    if (surface === 'oauth' || route.url.startsWith('/oauth/')) assert.ok(oauthShape || notFound, `OAuth error shape: ${body.toString('utf8').slice(0, 300)}`);
    else assert.ok(apiShape, `{error, message}: ${body.toString('utf8').slice(0, 300)}`);
    return;
  }
  if (type.startsWith('text/html')) {
    // issue 36: an unknown console address is a console page (404); a URL whose dot segments (%2e%2e)
    // resolve out of /admin/v1/ lands there, as a browser would send it.
    const landed = new URL(String(options.url), 'http://fuzz.test').pathname;
    const consolePage = route.app === 'admin' && landed.startsWith('/admin') && !landed.startsWith('/admin/v1/') && landed !== '/admin/v1';
    assert.ok(surface === 'page' || route.url === '/unsubscribe' || consolePage, `an HTML refusal from ${surface} route ${route.url}`);
    assert.match(body.toString('utf8'), /<html/i);
    return;
  }
  // The flow pages (sign-in, sign-out, consent) refuse a framed navigation with a bare 403: nothing is shown inside a frame.
  const framed = /^(iframe|frame|embed|object|fencedframe)$/i.test(String((options.headers as Record<string, string>)['sec-fetch-dest'] ?? '').trim());
  if (type.startsWith('text/plain') && res.statusCode === 403 && framed && surface === 'page') return;
  assert.fail(`a ${res.statusCode} with content type ${JSON.stringify(type)}`);
}

/** Whether the request carried a working credential of this kind (the fixture's session cookie, the operator key). */
function hasCredential(req: FuzzRequest, what: 'session' | 'admin-key'): boolean {
  return what === 'session' ? req.cookies.includes('session') : req.authorization === 'admin-key';
}

/** The successes (2xx, 3xx) a route may give to a random request. */
function assertSuccessAllowed(req: FuzzRequest, res: LightMyRequestResponse, body: Buffer): void {
  const { route, method } = req;
  const status = res.statusCode;
  const reading = method === 'GET' || method === 'HEAD' || method === 'OPTIONS';
  const surface = surfaceOf(route);
  const ok = (() => {
    if (route.url === '/oauth/revoke' && method === 'POST') return status === 200 && body.toString('utf8') === '{}';
    if (route.url === '/oauth/token' && method === 'POST') return status === 200;
    // RFC 7662: an authenticated caller always gets 200, {"active":false} for anything not its live token
    if (route.url === '/oauth/introspect' && method === 'POST') return status === 200 && /^\{"active":(false|true,)/.test(body.toString('utf8'));
    if (surface === 'admin') return reading || hasCredential(req, 'admin-key');
    if (surface === 'api') return hasCredential(req, 'session');
    if (surface === 'page') return reading || status === 200 || (status >= 300 && status < 400);
    return reading;
  })();
  assert.ok(ok, `a ${status} from ${method} ${route.url} is not an answer this route gives to such a request`);
}

/**
 * What an answer may add to or remove from the database. Anything else changing is a failure: a
 * refusal leaves nothing behind, and a read changes nothing.
 */
function allowedChanges(req: FuzzRequest, res: LightMyRequestResponse): ReadonlySet<string> | 'any' {
  const { route, method } = req;
  const status = res.statusCode;
  const success = status < 400;
  if (route.app === 'admin') return hasCredential(req, 'admin-key') ? 'any' : new Set();
  const allowed = new Set<string>();
  const add = (...tables: string[]) => tables.forEach((t) => allowed.add(t));
  // A pending request; or, for prompt=none within a grant the fixture's person gave, a code.
  if (route.url === '/oauth/authorize' && status === 302) add('authorization_requests', 'token_chains');
  // issue 28: an app built without startServer makes its id_token signing keys at the first JWKS request.
  if (route.url === '/oauth/jwks') add('signing_keys');
  // A code or refresh token presented again is audited (token.replay_detected, code.replay_detected), as are redemptions and refreshes.
  if (route.url === '/oauth/token' && method === 'POST') add('audit_events');
  if (route.url === '/oauth/token' && method === 'POST' && success) add('token_chains');
  // Revoking one access token of the chain format puts it on the deny list (a row until it would have expired).
  if (route.url === '/oauth/revoke' && method === 'POST' && success) add('revoked_access_tokens');
  // Opening the authenticator set-up page keeps the secret being set up (so a reload shows the same QR code).
  if (['/account/two-step/setup', '/signin/two-step/setup'].includes(route.url) && status === 200) add('second_factors');
  if (method !== 'POST' && method !== 'PUT' && method !== 'DELETE') return allowed;
  // Wrong codes at the second step or on the confirmation page are audited (mfa.failed).
  if (['/signin/two-step', '/account/confirm', '/account/two-step/setup', '/signin/two-step/setup'].includes(route.url)) add('audit_events', 'second_factors');
  // Sign-in attempts and password changes are audited whatever their outcome.
  if (route.url === '/signin' || route.url === '/account/password') add('audit_events');
  // A passkey answer uses its challenge up whatever the outcome; a passkey sign-in is audited whatever its outcome.
  if (route.url === '/signin/passkey' || route.url === '/account/passkeys') add('passkey_challenges');
  if (route.url === '/signin/passkey') add('audit_events');
  if (!success) return allowed;
  // Passkey options store the ceremony's challenge (five minutes, single use).
  if (route.url === '/signin/passkey/options' || route.url === '/account/passkeys/options') add('passkey_challenges');
  if (route.url === '/signin/passkey') add('sessions');
  if (route.url === '/account/passkeys' || route.url === '/account/passkeys/remove') add('passkeys', 'notifications', 'notification_deliveries', 'audit_events');
  if (route.url === '/signin' || route.url === '/account/password') add('sessions', 'second_steps');
  if (['/signin/two-step', '/signin/two-step/setup'].includes(route.url)) add('sessions', 'second_steps', 'recovery_codes', 'notifications', 'notification_deliveries');
  if (['/account/two-step/setup', '/account/two-step/recovery-codes', '/account/two-step/turn-off', '/account/confirm'].includes(route.url)) add('second_factors', 'recovery_codes', 'notifications', 'notification_deliveries', 'audit_events');
  if (route.url === '/consent') add('authorization_requests', 'token_chains', 'grants', 'notifications', 'notification_deliveries', 'audit_events');
  if (['/signup', '/forgot-password', '/account/verify-email'].includes(route.url)) add('users', 'mail_outbox', 'account_tokens', 'audit_events');
  if (['/signout', '/account/sessions/end', '/account/sessions/end-others'].includes(route.url)) add('sessions', 'second_steps');
  // issue 28: RP-initiated logout ends the session and is audited (logout.succeeded).
  if (route.url.startsWith('/oauth/end-session')) add('sessions', 'audit_events');
  if (route.url === '/account/withdraw') add('grants', 'notification_preferences', 'audit_events');
  if (['/account/mute', '/account/unmute', '/account/notifications', '/unsubscribe', '/api/v1/notification-preferences'].includes(route.url)) add('notification_preferences');
  if (route.url.startsWith('/api/v1/:kind/tasks')) add('tasks', 'notifications', 'notification_deliveries');
  // issue 40: /account → API keys creates or revokes a key (audited).
  if (route.url.startsWith('/account/api-keys')) add('api_keys', 'audit_events');
  return allowed;
}

for (const kind of DATABASES) {
  describe(`fuzz: every route, random and adversarial requests [${kind}]`, { skip: kind === 'postgres' ? skipUnlessAvailable('PostgreSQL', await postgresUnavailableReason()) : false }, () => {
    const opened: TestDatabase[] = [];
    after(async () => {
      for (const database of opened) await (database as TestDatabase & { dispose(): Promise<void> }).dispose();
    });

    test(`${RUNS} requests (seed ${SEED}): never a 5xx or a hang; refusals are 4xx in the route's error shape with the security headers; nothing new in the database`, async (t) => {
      const database = kind === 'sqlite' ? await sqliteDatabase() : await postgresDatabase();
      opened.push(database);
      const f = await fuzzFixture(database);
      const routes = [...registeredRoutes(f.flow.app, 'public'), ...registeredRoutes(f.admin, 'admin')];
      for (const expected of ['POST /oauth/token', 'POST /oauth/revoke', 'GET /oauth/userinfo', 'GET /oauth/authorize', 'POST /signin', 'POST /api/v1/:kind/tasks', 'PUT /api/v1/notification-preferences', 'PATCH /admin/v1/accounts/:sub']) {
        assert.ok(routes.some((r) => `${r.method} ${r.url}` === expected), `the route table lists ${expected}`);
      }
      const served = new Set(routes.map((r) => `${r.app} ${r.method} ${r.url}`));
      const countRows = await tableCounter(database.db);
      let before = await countRows();
      const oversizedBytes = UPLOAD_MAX_MB * 1024 * 1024;
      /** How often each route answered each status (printed with SIGNET_FUZZ_STATS=1, to see how deep the requests reach). */
      const answers = new Map<string, number>();

      await fc.assert(
        fc.asyncProperty(fuzzRequest(routes), async (req) => {
          const options = render(req, f.known, oversizedBytes);
          const target = req.route.app === 'admin' ? f.admin : f.flow.app;
          let answer: { res: LightMyRequestResponse; body: Buffer };
          try {
            answer = await send(target, options);
          } catch (error) {
            throw new Error(`${(error as Error).message}\n${describeRequest(options)}`, { cause: error });
          }
          const { res, body } = answer;
          const code = headerOf(res, 'content-type').startsWith('application/json') && res.statusCode >= 400 ? ` ${/"error":"([^"]*)"/.exec(body.toString('utf8'))?.[1]}` : '';
          const tally = `${req.route.app === 'admin' ? 'admin ' : ''}${req.method} ${req.route.url} → ${res.statusCode}${code}`;
          answers.set(tally, (answers.get(tally) ?? 0) + 1);
          const context = () => `${describeRequest(options)}\n  → ${res.statusCode} ${headerOf(res, 'content-type')} ${body.toString('utf8').slice(0, 400)}`;
          try {
            assert.ok(res.statusCode < 500, 'never a 5xx');
            assertSecurityHeaders(req.route, res);
            if (res.statusCode >= 400) assertErrorShape(req.route, options, res, body, served.has(`${req.route.app} ${req.method} ${req.route.url}`));
            else assertSuccessAllowed(req, res, body);
            const after = await countRows();
            const allowed = allowedChanges(req, res);
            if (allowed !== 'any') {
              for (const [table, count] of Object.entries(after)) {
                if (count !== before[table] && !allowed.has(table)) assert.fail(`${table}: ${before[table]} rows before, ${count} after`);
              }
            }
            // Keep the fixture's own session and pending request alive for the runs that follow.
            const lostSession = after.sessions! < before.sessions! || after.users! < before.users!;
            const lostPending = after.authorization_requests! < before.authorization_requests!;
            before = after;
            if (lostSession || lostPending) {
              await f.refresh();
              before = await countRows();
            }
          } catch (error) {
            throw new Error(`${(error as Error).message}\n${context()}`, { cause: error });
          }
        }),
        {
          seed: SEED,
          numRuns: RUNS,
          endOnFailure: true,
          // The property's own message describes the request (long values cut); the generated value may hold 100 kB strings.
          reporter: (run) => {
            if (run.failed) throw new Error(`fuzz failed at run ${run.numRuns} (seed ${run.seed}, path ${run.counterexamplePath}): ${String((run.errorInstance as Error | undefined)?.message ?? run.errorInstance)}`);
          },
        },
      );
      if (process.env.SIGNET_FUZZ_STATS) for (const [tally, n] of [...answers].sort()) t.diagnostic(`${n}\t${tally}`);
      await f.admin.close();
      await f.flow.app.close();
    });
  });
}
