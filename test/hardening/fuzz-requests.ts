// The fuzz test's requests: the route table read from Fastify itself, and fast-check arbitraries for
// random and adversarial requests — parameters random, repeated, empty or 100 kB long; broken
// %-escapes, invalid UTF-8 and NUL bytes; wrong content types and methods; truncated, oversized and
// malformed bodies. A request is generated as a description and rendered only when sent, so values that
// change during a run (the session cookie, the CSRF pair) are filled in then, and a counterexample
// prints short.
import fc from 'fast-check';
import type { FastifyInstance, InjectOptions } from 'fastify';

export type AppName = 'public' | 'admin';
export type FuzzRoute = { app: AppName; method: string; url: string };

/**
 * Every route an app serves, read from `printRoutes` (so a route added later is fuzzed without touching
 * this test) and each confirmed with `hasRoute`. The tree prints a wildcard beside the static siblings
 * that share its prefix; it is resolved against their paths.
 */
export function registeredRoutes(app: FastifyInstance, name: AppName): FuzzRoute[] {
  const parsed: Array<{ method: string; url: string; parent: string }> = [];
  const stack: Array<{ depth: number; path: string }> = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = /^([│ ]*)[├└]── (.*?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!match) continue;
    const depth = match[1]!.length / 4;
    while (stack.length > 0 && stack.at(-1)!.depth >= depth) stack.pop();
    const parent = stack.at(-1)?.path ?? '';
    const path = parent + match[2]!;
    stack.push({ depth, path });
    for (const method of match[3]?.split(', ') ?? []) parsed.push({ method, url: path, parent });
  }
  const routes: FuzzRoute[] = [];
  for (const route of parsed) {
    const candidates = route.url.endsWith('*')
      ? [route.url, ...parsed.filter((p) => p.url.startsWith(route.parent)).flatMap((p) => slashPrefixes(p.url, route.parent.length).map((prefix) => `${prefix}*`))]
      : [route.url];
    const url = candidates.find((candidate) => app.hasRoute({ method: route.method as 'GET', url: candidate }));
    if (url === undefined) throw new Error(`printRoutes listed ${route.method} ${route.url}, which hasRoute does not find: teach registeredRoutes this shape`);
    if (!routes.some((r) => r.method === route.method && r.url === url)) routes.push({ app: name, method: route.method, url });
  }
  return routes;
}

function slashPrefixes(path: string, from: number): string[] {
  const prefixes: string[] = [];
  for (let i = path.indexOf('/', from); i !== -1; i = path.indexOf('/', i + 1)) prefixes.push(path.slice(0, i + 1));
  return prefixes;
}

/** Values the test knows, filled in when a request is sent (they may change between runs). */
export type Known = {
  /** an authorization code of the confidential client (single use) */
  code: string;
  clientId: string;
  publicClientId: string;
  clientSecret: string;
  redirectUri: string;
  accessToken: string;
  refreshToken: string;
  pendingRequest: string;
  victimSub: string;
  victimClientId: string;
  email: string;
  csrfToken: string;
  adminKey: string;
  spaOrigin: string;
  /** cookie name=value pairs */
  sessionCookie: string;
  csrfCookie: string;
  flowCookie: string;
};
type KnownName = keyof Known;
const KNOWN_VALUES: KnownName[] = ['code', 'clientId', 'publicClientId', 'clientSecret', 'redirectUri', 'accessToken', 'refreshToken', 'pendingRequest', 'victimSub', 'victimClientId', 'email', 'csrfToken', 'spaOrigin'];

/** One piece of a parameter: a plain value (percent-encoded when rendered), a raw escape sent as is, or a known value. */
type Piece = { text: string } | { raw: string } | { known: KnownName };
type Component = Piece[];
type Pair = { name: Component; value: Component; shape: 'pair' | 'name-only' | 'empty' };
type JsonSpec = { raw: string } | { value: unknown };
type Part = { name: string; filename?: string; contentType?: string; data: 'pdf-like' | 'oversized' | Uint8Array };
type Body =
  | { kind: 'none' }
  | { kind: 'form'; pairs: Pair[]; csrf: boolean }
  | { kind: 'json'; json: JsonSpec }
  | { kind: 'multipart'; boundary: string; declared: string; parts: Part[]; truncateTo?: number }
  | { kind: 'bytes'; bytes: Uint8Array }
  | { kind: 'oversized'; bytes: number };

export type FuzzRequest = {
  route: FuzzRoute;
  method: string;
  pathParams: Component[];
  query: Pair[];
  body: Body;
  contentType: string | undefined;
  contentLength: 'right' | 'longer' | 'shorter';
  host: 'base' | 'alt' | 'foreign';
  origin: string | undefined;
  cookies: Array<'session' | 'csrf' | 'flow' | 'garbage'>;
  authorization: 'none' | 'access-token' | 'admin-key' | 'garbage';
  extraHeaders: Record<string, string>;
  remoteAddress: string;
};

/** 100 kB values: ASCII, and two-byte characters. */
const HUGE = ['x'.repeat(100_000), 'é'.repeat(50_000)];

/** %-escapes a decoder must survive: truncated, not hex, invalid or overlong UTF-8, encoded surrogates, NUL, CR LF, separators. */
const BROKEN = ['%', '%2', '%zz', '%c3%28', '%ff%fe', '%ed%a0%80', '%c0%80', '%00', '%0d%0a', '+', '%2B', '&', '=', '%26%3D', ';', '%E2%80%AE', '%2e%2e%2f', '..'];

const NAMES = [
  'client_id', 'client_secret', 'redirect_uri', 'response_type', 'scope', 'state', 'code_challenge', 'code_challenge_method', 'prompt', 'code',
  'code_verifier', 'grant_type', 'refresh_token', 'token', 'token_type_hint', 'request', 'decision', '_csrf', 'identifier', 'password',
  'email', 'name', 'picture', 'current_password', 'new_password', 'return', 'lang', 'locale', 'category', 'channel', 'cursor', 'limit', 'after',
  'source_lang', 'target_lang', 'file', 'id', 'session', 'List-Unsubscribe', 'sub', 'type', 'phone', 'phone_number', 'disabled', 'enabled',
  'redirect_uris', 'scopes', 'allowed_origins', 'email_verified', 'phone_number_verified', 'client_id[]', '__proto__', 'constructor',
];

const WORDS = [
  'code', 'token', 'authorization_code', 'refresh_token', 'access_token', 'S256', 's256', 'plain', 'none', 'login', 'consent', 'openid',
  'openid profile email phone', 'allow', 'deny', 'docparse', 'translate', 'en', 'es', 'zh-CN', 'true', 'false', '1', '0', '-1', '1e309',
  '9007199254740993', 'null', 'security', 'email', 'in_app', 'https://app.example/callback', 'javascript:alert(1)', '//evil.example',
  '/\\evil.example', '<script>alert(1)</script>', "' OR 1=1 --", 'ak_0123456789abcdef.x', '00000000-0000-0000-0000-000000000000',
];

function percentEncode(text: string): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-._~]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

const text = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...WORDS) },
  { weight: 4, arbitrary: fc.string({ maxLength: 24 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 16 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 16 }) },
  { weight: 1, arbitrary: fc.constantFrom('', '\u0000', 'a\u0000b', '\r\n', ' ', '\u202e') },
  { weight: 1, arbitrary: fc.constantFrom(...HUGE) },
);

const piece: fc.Arbitrary<Piece> = fc.oneof(
  { weight: 6, arbitrary: text.map((t) => ({ text: t })) },
  { weight: 2, arbitrary: fc.constantFrom(...BROKEN).map((raw) => ({ raw })) },
  { weight: 3, arbitrary: fc.constantFrom(...KNOWN_VALUES).map((known) => ({ known })) },
);
const component: fc.Arbitrary<Component> = fc.oneof({ weight: 4, arbitrary: piece.map((p) => [p]) }, { weight: 1, arbitrary: fc.array(piece, { minLength: 0, maxLength: 3 }) });
const nameComponent: fc.Arbitrary<Component> = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom(...NAMES).map((t) => [{ text: t }]) },
  { weight: 1, arbitrary: component },
);
const pair: fc.Arbitrary<Pair> = fc.record({
  name: nameComponent,
  value: component,
  shape: fc.oneof({ weight: 8, arbitrary: fc.constant('pair' as const) }, { weight: 1, arbitrary: fc.constantFrom('name-only' as const, 'empty' as const) }),
});
/** Parameters, sometimes with one of them sent twice. */
const randomPairs: fc.Arbitrary<Pair[]> = fc.tuple(fc.array(pair, { maxLength: 8 }), fc.boolean()).map(([list, duplicate]) => (duplicate && list.length > 0 ? [...list, list[0]!] : list));

type Template = Array<[string, KnownName | string]>;

/**
 * Well-formed requests to start from, by route, so that many requests get past the first check and
 * reach the rules behind it; each parameter is then kept, dropped or replaced, and random ones added.
 */
const TEMPLATES: Record<string, Template[]> = {
  '/oauth/token': [
    [['grant_type', 'authorization_code'], ['code', 'code'], ['redirect_uri', 'redirectUri'], ['client_id', 'clientId'], ['client_secret', 'clientSecret'], ['code_verifier', 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r7wW1gFWFOEjXk']],
    [['grant_type', 'refresh_token'], ['refresh_token', 'refreshToken'], ['client_id', 'clientId'], ['client_secret', 'clientSecret'], ['scope', 'openid']],
  ],
  '/oauth/revoke': [
    [['token', 'accessToken'], ['token_type_hint', 'access_token'], ['client_id', 'clientId'], ['client_secret', 'clientSecret']],
    [['token', 'refreshToken'], ['token_type_hint', 'refresh_token'], ['client_id', 'clientId'], ['client_secret', 'clientSecret']],
  ],
  '/oauth/introspect': [
    [['token', 'accessToken'], ['token_type_hint', 'access_token'], ['client_id', 'clientId'], ['client_secret', 'clientSecret']],
    [['token', 'refreshToken'], ['token_type_hint', 'refresh_token'], ['client_id', 'clientId'], ['client_secret', 'clientSecret']],
  ],
  '/oauth/authorize': [
    [['response_type', 'code'], ['client_id', 'clientId'], ['redirect_uri', 'redirectUri'], ['scope', 'openid profile'], ['state', 'xyz'], ['code_challenge', 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'], ['code_challenge_method', 'S256']],
    [['response_type', 'code'], ['client_id', 'publicClientId'], ['redirect_uri', 'redirectUri'], ['prompt', 'none']],
    // issue 39: a Client ID Metadata Document URL at a private address — refused before any connection
    [['response_type', 'code'], ['client_id', 'https://10.0.0.1/client.json'], ['redirect_uri', 'redirectUri'], ['code_challenge', 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'], ['code_challenge_method', 'S256']],
  ],
  '/signin': [[['identifier', 'email'], ['password', 'wrong password'], ['request', 'pendingRequest']]],
  '/consent': [[['request', 'pendingRequest'], ['decision', 'allow'], ['scope', 'openid']]],
};

function templatePairs(templates: readonly Template[]): fc.Arbitrary<Pair[]> {
  const fate = fc.oneof({ weight: 6, arbitrary: fc.constant('keep' as const) }, { weight: 1, arbitrary: fc.constant('drop' as const) }, { weight: 2, arbitrary: component });
  return fc.tuple(fc.constantFrom(...templates), fc.array(fate, { minLength: 8, maxLength: 8 }), randomPairs).map(([template, fates, extra]) => [
    ...template.flatMap(([name, value], i): Pair[] => {
      const f = fates[i]!;
      if (f === 'drop') return [];
      const known = (KNOWN_VALUES as string[]).includes(value) ? [{ known: value as KnownName }] : [{ text: value }];
      return [{ name: [{ text: name }], value: f === 'keep' ? known : f, shape: 'pair' }];
    }),
    ...extra.slice(0, 2),
  ]);
}

/** The parameters of a request to `url`: random, or (where there is one) a well-formed request bent. */
function pairsFor(url: string): fc.Arbitrary<Pair[]> {
  const templates = TEMPLATES[url];
  return templates === undefined ? randomPairs : fc.oneof({ weight: 1, arbitrary: randomPairs }, { weight: 2, arbitrary: templatePairs(templates) });
}

const jsonLeaf = fc.oneof(
  text,
  fc.constantFrom(...KNOWN_VALUES).map((known) => ({ $known: known })),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(text, { maxLength: 3 }),
  fc.object({ maxDepth: 2 }),
);
const json: fc.Arbitrary<JsonSpec> = fc.oneof(
  { weight: 4, arbitrary: fc.dictionary(fc.constantFrom(...NAMES), jsonLeaf, { maxKeys: 6 }).map((value) => ({ value })) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((value) => ({ value })) },
  { weight: 1, arbitrary: fc.constantFrom('{"name":', '[', '{"__proto__":{"polluted":1}}', '{"constructor":{"prototype":{"x":1}}}', '"a string"', '1e309', '{"name":"a","name":"b"}', '\u0000').map((raw) => ({ raw })) },
);

const part: fc.Arbitrary<Part> = fc.record(
  {
    name: fc.constantFrom('file', 'source_lang', 'target_lang', 'other', ''),
    filename: fc.constantFrom('a.pdf', '../../etc/passwd', 'naïve "quoted".pdf', '', 'x'.repeat(300)),
    contentType: fc.constantFrom('application/pdf', 'text/plain', 'application/octet-stream'),
    data: fc.oneof(fc.constantFrom('pdf-like' as const, 'oversized' as const), fc.uint8Array({ maxLength: 64 })),
  },
  { requiredKeys: ['name', 'data'] },
);

/** A body: forms most often (more so where the route reads forms we have templates for), then everything else. */
const bodyFor = (url: string): fc.Arbitrary<Body> => fc.oneof(
  { weight: 3, arbitrary: fc.constant({ kind: 'none' as const }) },
  { weight: TEMPLATES[url] ? 12 : 5, arbitrary: fc.record({ kind: fc.constant('form' as const), pairs: pairsFor(url), csrf: fc.oneof(fc.constant(true), fc.constant(true), fc.constant(false)) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('json' as const), json }) },
  {
    weight: 2,
    arbitrary: fc
      .record({ boundary: fc.constantFrom('fuzzboundary', 'x'), declared: fc.constantFrom('fuzzboundary', 'x', 'other', ''), parts: fc.array(part, { maxLength: 3 }), truncate: sometimes(fc.double({ min: 0, max: 1, noNaN: true })) })
      .map(({ truncate, ...rest }) => ({ kind: 'multipart' as const, ...rest, ...(truncate === undefined ? {} : { truncateTo: truncate }) })),
  },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 256 }).map((bytes) => ({ kind: 'bytes' as const, bytes })) },
  { weight: 1, arbitrary: fc.constant({ kind: 'oversized' as const, bytes: 70 * 1024 }) },
);

const CONTENT_TYPES = [
  'text/plain', 'application/octet-stream', 'garbage', '', 'multipart/form-data', 'application/x-www-form-urlencoded; charset=utf-16',
  'APPLICATION/X-WWW-FORM-URLENCODED', 'application/json; charset=latin1', 'application/x-www-form-urlencoded, application/json', 'text/event-stream',
];
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/** Absent three times in four. (fc.option's `freq` is the odds of the nil value: 1 in freq.) */
const sometimes = <T>(values: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> => fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: values });
const optionalHeader = sometimes<string>;
const headerText = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 40 });

/** A request to one of `routes`: usually with the route's own method, sometimes another. */
export function fuzzRequest(routes: readonly FuzzRoute[]): fc.Arbitrary<FuzzRequest> {
  const protocol = routes.filter((r) => r.url.startsWith('/oauth/') && r.method !== 'HEAD');
  // Every route, and the OAuth endpoints (the public protocol surface) once more.
  const route = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...routes) }, { weight: 1, arbitrary: fc.constantFrom(...protocol) });
  return route.chain((route) => fc
    .record({
      route: fc.constant(route),
      otherMethod: sometimes(fc.constantFrom(...METHODS)),
      pathParams: fc.array(fc.oneof(component, fc.constantFrom<Component>([{ raw: '..' }], [{ raw: '%2F' }], [{ text: 'a'.repeat(300) }], [{ text: 'docparse' }], [{ text: 'translate' }], [{ text: 'signet.css' }], [{ raw: '%2e%2e/%2e%2e/package.json' }])), { minLength: 3, maxLength: 3 }),
      query: pairsFor(route.url),
      body: bodyFor(route.url),
      contentType: sometimes(fc.constantFrom(...CONTENT_TYPES)),
      contentLength: fc.oneof({ weight: 10, arbitrary: fc.constant('right' as const) }, { weight: 1, arbitrary: fc.constantFrom('longer' as const, 'shorter' as const) }),
      host: fc.oneof({ weight: 12, arbitrary: fc.constant('base' as const) }, { weight: 1, arbitrary: fc.constantFrom('alt' as const, 'foreign' as const) }),
      origin: optionalHeader(fc.constantFrom('http://signet.test', 'http://alt.signet.test', 'https://spa.example', 'null', 'https://evil.example')),
      cookies: fc
        .record({ session: fc.double({ min: 0, max: 1, noNaN: true }), csrf: fc.double({ min: 0, max: 1, noNaN: true }), flow: fc.boolean(), garbage: fc.double({ min: 0, max: 1, noNaN: true }) })
        .map(({ session, csrf, flow, garbage }) => [
          ...(session < 0.6 ? (['session'] as const) : []),
          ...(csrf < 0.7 ? (['csrf'] as const) : []),
          ...(flow ? (['flow'] as const) : []),
          ...(garbage < 0.15 ? (['garbage'] as const) : []),
        ]),
      authorization: fc.constantFrom('none' as const, 'none' as const, 'access-token' as const, 'admin-key' as const, 'garbage' as const),
      secFetchDest: optionalHeader(fc.constantFrom('iframe', 'document', 'empty', ' IFRAME ')),
      acceptLanguage: optionalHeader(fc.oneof(fc.constantFrom('zh-CN', 'en;q=0.1, zh-CN', '*'), headerText)),
      lastEventId: optionalHeader(fc.oneof(fc.constantFrom('0', '-1', '99999999999999999999'), headerText)),
      forwardedFor: optionalHeader(fc.constantFrom('203.0.113.9', 'garbage', '::1, 10.0.0.1')),
      remoteAddress: fc.oneof(fc.constantFrom('127.0.0.1', '::1', '10.1.2.3'), fc.ipV4(), fc.ipV6()),
    })
    .map(({ route, otherMethod, secFetchDest, acceptLanguage, lastEventId, forwardedFor, ...rest }) => ({
      ...rest,
      route,
      method: otherMethod ?? route.method,
      extraHeaders: Object.fromEntries(
        Object.entries({ 'sec-fetch-dest': secFetchDest, 'accept-language': acceptLanguage, 'last-event-id': lastEventId, 'x-forwarded-for': forwardedFor }).filter(
          (entry): entry is [string, string] => entry[1] !== undefined,
        ),
      ),
    })));
}

function renderComponent(c: Component, known: Known): string {
  return c.map((p) => ('raw' in p ? p.raw : percentEncode('known' in p ? known[p.known] : p.text))).join('');
}

function renderPairs(list: readonly Pair[], known: Known): string {
  return list
    .map((p) => (p.shape === 'empty' ? '' : p.shape === 'name-only' ? renderComponent(p.name, known) : `${renderComponent(p.name, known)}=${renderComponent(p.value, known)}`))
    .join('&');
}

function renderJson(spec: JsonSpec, known: Known): string {
  if ('raw' in spec) return spec.raw;
  return JSON.stringify(spec.value, (_key, value: unknown) => {
    if (typeof value === 'object' && value !== null && '$known' in value) return known[(value as { $known: KnownName }).$known];
    return value;
  });
}

const PDF_LIKE = Buffer.from('%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n');

function renderMultipart(spec: Extract<Body, { kind: 'multipart' }>, oversizedBytes: number): Buffer {
  const chunks: Buffer[] = [];
  for (const p of spec.parts) {
    const disposition = `form-data; name="${p.name}"${p.filename === undefined ? '' : `; filename="${p.filename}"`}`;
    const data = p.data === 'pdf-like' ? PDF_LIKE : p.data === 'oversized' ? Buffer.concat([PDF_LIKE, Buffer.alloc(oversizedBytes)]) : Buffer.from(p.data);
    chunks.push(Buffer.from(`--${spec.boundary}\r\nContent-Disposition: ${disposition}\r\n${p.contentType ? `Content-Type: ${p.contentType}\r\n` : ''}\r\n`), data, Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${spec.boundary}--\r\n`));
  const all = Buffer.concat(chunks);
  return spec.truncateTo === undefined ? all : all.subarray(0, Math.floor(all.length * spec.truncateTo));
}

export const HOSTS = { base: 'signet.test', alt: 'alt.signet.test', foreign: 'evil.example' } as const;

/** The request as app.inject takes it, with today's known values. `oversizedBytes` is just above the upload limit. */
export function render(req: FuzzRequest, known: Known, oversizedBytes: number): InjectOptions {
  let paramIndex = 0;
  const path = req.route.url.replace(/:[A-Za-z_]+|\*$/g, () => renderComponent(req.pathParams[paramIndex++ % req.pathParams.length]!, known));
  const query = renderPairs(req.query, known);
  const headers: Record<string, string> = { host: HOSTS[req.host], ...req.extraHeaders };
  let payload: Buffer | undefined;
  let contentType: string | undefined;
  const b = req.body;
  if (b.kind === 'form') {
    const csrf = b.csrf ? `_csrf=${percentEncode(known.csrfToken)}&` : '';
    payload = Buffer.from(csrf + renderPairs(b.pairs, known));
    contentType = 'application/x-www-form-urlencoded';
  } else if (b.kind === 'json') {
    payload = Buffer.from(renderJson(b.json, known));
    contentType = 'application/json';
  } else if (b.kind === 'multipart') {
    payload = renderMultipart(b, oversizedBytes);
    contentType = `multipart/form-data; boundary=${b.declared}`;
  } else if (b.kind === 'bytes') {
    payload = Buffer.from(b.bytes);
    contentType = 'application/octet-stream';
  } else if (b.kind === 'oversized') {
    payload = Buffer.from(`a=${'x'.repeat(b.bytes)}`);
    contentType = 'application/x-www-form-urlencoded';
  }
  if (req.contentType !== undefined) contentType = req.contentType;
  if (contentType !== undefined && payload !== undefined) headers['content-type'] = contentType;
  if (payload !== undefined && req.contentLength !== 'right') headers['content-length'] = String(payload.length + (req.contentLength === 'longer' ? 10 : -1));
  const cookies = req.cookies.map((c) => (c === 'session' ? known.sessionCookie : c === 'csrf' ? known.csrfCookie : c === 'flow' ? known.flowCookie : 'signet_session=forged; signet_csrf=s%3Aforged.sig'));
  if (cookies.length > 0) headers.cookie = cookies.join('; ');
  if (req.authorization === 'access-token') headers.authorization = `Bearer ${known.accessToken}`;
  if (req.authorization === 'admin-key') headers.authorization = `Bearer ${known.adminKey}`;
  if (req.authorization === 'garbage') headers.authorization = 'Bearer ak_0000000000000000.AAAA';
  if (req.origin !== undefined) headers.origin = req.origin;
  return {
    method: req.method as InjectOptions['method'],
    url: query === '' ? path : `${path}?${query}`,
    headers,
    remoteAddress: req.remoteAddress,
    ...(payload === undefined || req.method === 'GET' || req.method === 'HEAD' ? {} : { payload }),
  };
}

/** A short description of a rendered request for a failure message (long values cut). */
export function describe(options: InjectOptions): string {
  const cut = (s: string) => (s.length > 700 ? `${s.slice(0, 700)}… (${s.length} characters)` : s);
  const payload = options.payload === undefined ? '' : `\n  body: ${cut(Buffer.isBuffer(options.payload) ? options.payload.toString('latin1') : String(options.payload))}`;
  return `${options.method} ${cut(String(options.url))} from ${options.remoteAddress}\n  headers: ${cut(JSON.stringify(options.headers))}${payload}`;
}
