// Settings: one schema, parsed once at start and passed down. Nothing else reads process.env.
import { readFileSync, existsSync } from 'node:fs';
import { isIP } from 'node:net';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { parse as parseDotenv } from 'dotenv';
import { z } from 'zod';

export class SettingsError extends Error {
  readonly variable: string;
  constructor(variable: string, message: string) {
    super(`${variable}: ${message}`);
    this.variable = variable;
    this.name = 'SettingsError';
  }
}

export const TRANSLATE_ENGINES = ['apertium', 'libretranslate', 'openai'] as const;

/** A whole number of `unit` from `min` to `max`, `fallback` when unset; the message names the range. */
const wholeNumber = (unit: string, min: number, max: number, fallback: number) => {
  const message = `expected a whole number of ${unit} from ${min} to ${max}`;
  return z
    .string()
    .regex(/^\d+$/, message)
    .transform(Number)
    .refine((n) => n >= min && n <= max, message)
    .default(fallback);
};

/**
 * PostgreSQL connections per process unless set: two per core of this machine, 2 to 10 (issue 44, "a pool
 * sized to the cores"). One process's event loop keeps about two statements in flight per core busy;
 * more connections only add backends competing for the same cores (the benchmark's PostgreSQL runs
 * beside the server), each holding memory.
 */
const DEFAULT_POOL_SIZE = Math.min(10, Math.max(2, 2 * availableParallelism()));

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** An origin such as `https://id.example.com` or `http://localhost:8080`: scheme, host, optional port, nothing else. */
const originUrl = z.string().transform((value, ctx) => {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    ctx.addIssue({ code: 'custom', message: `expected an absolute http(s) URL such as https://id.example.com, got "${value}"` });
    return z.NEVER;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    ctx.addIssue({ code: 'custom', message: `expected an http or https URL, got "${value}"` });
    return z.NEVER;
  }
  if ((url.pathname !== '/' && url.pathname !== '') || url.search || url.hash || url.username || url.password) {
    ctx.addIssue({ code: 'custom', message: `expected only scheme, host and port (no path, query or credentials), got "${value}"` });
    return z.NEVER;
  }
  return url;
});

const port = z
  .string()
  .regex(/^\d+$/, 'expected a port number from 1 to 65535')
  .transform(Number)
  .refine((n) => n >= 1 && n <= 65535, 'expected a port number from 1 to 65535');

const optionalText = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v === '' ? undefined : v));

/**
 * Reader processes one document's pages are read by side by side (issue 31: "pages in parallel"):
 * by default the machine's cores, at most 4 — past that a document's layout, done in one thread,
 * keeps up with no more readers. Each reader is one process with its own memory limits.
 */
export const DEFAULT_PARSE_THREADS = Math.min(4, availableParallelism());
const parseThreadsSetting = wholeNumber('reader processes', 1, 64, DEFAULT_PARSE_THREADS);

/**
 * `signet parse`'s default when neither --threads nor SIGNET_PARSE_THREADS is given: a core is left to
 * its own process, which lays the pages out (about half the CPU of a batch), so the readers and it
 * fit the cores. A one-shot run also pays each reader's start and warm-up (its PDFium and JavaScript
 * compiled by V8 again, ≈ 0.5–1 CPU-second per reader): on two cores, the 137 files of the docparse
 * benchmark took 15–20 % less CPU with one reader than with two (docs/documents/benchmarks.md). A
 * worker keeps its readers from task to task, so its default stays DEFAULT_PARSE_THREADS.
 */
export const DEFAULT_LOCAL_PARSE_THREADS = Math.max(1, Math.min(4, availableParallelism() - 1));

/** SIGNET_PARSE_THREADS alone, validated as in the settings (else `fallback`): for `signet parse`, which reads no other setting. */
export function parseThreadsFrom(env: Record<string, string | undefined>, fallback = DEFAULT_PARSE_THREADS): number {
  const value = env.SIGNET_PARSE_THREADS === '' ? undefined : env.SIGNET_PARSE_THREADS;
  if (value === undefined) return fallback;
  const parsed = parseThreadsSetting.safeParse(value);
  if (!parsed.success) throw new SettingsError('SIGNET_PARSE_THREADS', parsed.error.issues[0]?.message ?? 'invalid');
  return parsed.data;
}

const schema = z.object({
  SIGNET_BASE_URL: originUrl.default(new URL('http://localhost:8080')),
  SIGNET_ALT_BASE_URL: originUrl.optional(),
  SIGNET_HOST: z.string().min(1, 'expected a host name or address to listen on').default('127.0.0.1'),
  SIGNET_PORT: port.optional(),
  SIGNET_DATA_DIR: z.string().min(1, 'expected a folder path').default('./data'),
  SIGNET_DATABASE_URL: z
    .string()
    .optional()
    .refine(
      (v) => v === undefined || v === '' || /^postgres(ql)?:\/\//.test(v) || /^sqlite:/.test(v),
      'expected postgres://USER@HOST:PORT/DB or sqlite:PATH',
    ),
  SIGNET_DATABASE_POOL_SIZE: wholeNumber('connections', 1, 1000, DEFAULT_POOL_SIZE),
  SIGNET_DATABASE_TIMEOUT_SECONDS: wholeNumber('seconds', 1, 300, 5),
  SIGNET_SHUTDOWN_SECONDS: wholeNumber('seconds', 1, 3600, 25),
  SIGNET_STORAGE_URL: z
    .string()
    .optional()
    .refine((v) => v === undefined || v === '' || /^file:/.test(v) || /^s3:\/\/[^/?]+/.test(v), 'expected file:PATH or s3://BUCKET?endpoint=URL&region=R'),
  SIGNET_UPLOAD_MAX_MB: wholeNumber('megabytes', 1, 10240, 50),
  SIGNET_WORKER_LEASE_SECONDS: wholeNumber('seconds', 2, 3600, 30),
  SIGNET_WORKER_CONCURRENCY: wholeNumber('tasks', 1, 64, 1),
  SIGNET_PARSE_THREADS: parseThreadsSetting,
  SIGNET_SMTP_URL: z
    .string()
    .optional()
    .refine((v) => v === undefined || v === '' || /^smtps?:\/\//.test(v), 'expected smtp://HOST:PORT or smtps://HOST:PORT'),
  SIGNET_MAIL_FROM: optionalText,
  SIGNET_TRANSLATE_ENGINE: z.enum(TRANSLATE_ENGINES, `expected one of ${TRANSLATE_ENGINES.join(', ')}`).optional(),
  SIGNET_TRANSLATE_URL: z
    .string()
    .optional()
    .refine((v) => v === undefined || v === '' || URL.canParse(v), 'expected an absolute URL'),
  SIGNET_TRANSLATE_MODEL: optionalText,
  SIGNET_TRANSLATE_API_KEY: optionalText,
  SIGNET_SECRET: z.string().min(32, 'expected at least 32 characters of key material').optional(),
  SIGNET_COMPAT: z.enum(['legacy'], 'expected legacy or unset').optional(),
  SIGNET_TRUST_PROXY: z
    .string()
    .optional()
    .refine(
      (v) => v === undefined || v === 'true' || v === 'false' || /^\d{1,2}$/.test(v) || v.split(',').every((part) => isAddressOrRange(part.trim())),
      'expected true, false, a number of proxy hops, or a comma-separated list of proxy addresses or CIDR ranges',
    ),
  SIGNET_LOG_LEVEL: z.enum(LOG_LEVELS, `expected one of ${LOG_LEVELS.join(', ')}`).default('info'),
  SIGNET_METRICS_ADDR: z
    .string()
    .regex(/^(off|[^\s:]+:\d{1,5}|\[[0-9a-fA-F:]+\]:\d{1,5})$/, 'expected HOST:PORT or off')
    .default('127.0.0.1:9464'),
  SIGNET_ADMIN_ADDR: z
    .string()
    .regex(/^(off|[^\s:]+:\d{1,5}|\[[0-9a-fA-F:]+\]:\d{1,5})$/, 'expected HOST:PORT or off')
    .default('127.0.0.1:9465'),
  SIGNET_SIGNUP: z.enum(['open', 'closed'], 'expected open or closed').default('closed'),
  SIGNET_FETCH_SOURCES: z.enum(['on', 'off'], 'expected on or off').default('off'),
  SIGNET_MFA: z.enum(['optional', 'required'], 'expected optional or required').default('optional'),
  SIGNET_CLIENT_REGISTRATION: z.enum(['open', 'closed'], 'expected open or closed').default('open'),
  // Tests only (net/guarded-fetch.ts): refused below when NODE_ENV=production.
  SIGNET_OUTBOUND_ALLOW_LOOPBACK_FOR_TESTS: z.enum(['true', 'false'], 'expected true or false').default('false'),
  SIGNET_OUTBOUND_TEST_CA_FILE: z.string().optional(),
  SIGNET_ID_TOKEN_ALG: z.enum(['ES256', 'RS256'], 'expected ES256 or RS256').default('ES256'),
  SIGNET_IDP_TIMEOUT_MS: z.coerce.number('expected a number of milliseconds').int('expected a whole number of milliseconds').min(100, 'expected at least 100').max(60000, 'expected at most 60000').default(10000),
  SIGNET_PRODUCT_NAME: z
    .string()
    .max(60, 'expected a name of at most 60 characters')
    // eslint-disable-next-line no-control-regex
    .refine((v) => !/[\u0000-\u001f\u007f]/.test(v) && v.trim() === v, 'expected a plain name without control characters or surrounding spaces')
    .default('Signet'),
  SIGNET_LOGO_URL: z
    .string()
    .optional()
    .refine((v) => v === undefined || isHttpsUrl(v), 'expected an https:// URL of an image, or unset'),
  SIGNET_ACCENT_COLOR: z
    .string()
    .regex(/^#[0-9a-fA-F]{6}$/, 'expected a colour as #rrggbb, e.g. #0b57d0')
    .optional(),
  SIGNET_AUDIT_RETENTION_DAYS: wholeNumber('days', 1, 36500, 90),
});

/** Every setting's variable name, in the schema's order (docs/configuration.md is checked against it). */
export const SETTING_NAMES: readonly string[] = Object.keys(schema.shape);

export type Settings = {
  baseUrl: URL;
  altBaseUrl: URL | undefined;
  host: string;
  port: number;
  dataDir: string;
  /**
   * `timeoutMs` (SIGNET_DATABASE_TIMEOUT_SECONDS): the longest a request waits on the database — to
   * connect, for a statement, for SQLite's write lock — before it is answered 503. Unset: no limit.
   */
  database: { kind: 'sqlite'; file: string; timeoutMs?: number } | { kind: 'postgres'; url: string; poolSize: number; timeoutMs?: number };
  storageUrl: string;
  /** after SIGTERM, a `serve` or `worker` process exits within this whatever still runs (SIGNET_SHUTDOWN_SECONDS) */
  shutdownMs: number;
  smtpUrl: string | undefined;
  mailFrom: string | undefined;
  /** The largest source PDF a task accepts, in bytes (SIGNET_UPLOAD_MAX_MB). */
  uploadMaxBytes: number;
  /** a worker's claim on a task lasts this long without a heartbeat (a dead worker's task is retried after it); concurrency: tasks a worker runs at once (the extra slots take translation only) */
  worker: { leaseSeconds: number; concurrency: number; parseThreads: number };
  /** apertium runs the local `apertium` command; the other two are HTTP services at `url`. */
  translate: { engine: (typeof TRANSLATE_ENGINES)[number] | undefined; url: string | undefined; model: string | undefined; apiKey: string | undefined };
  /** Key material from SIGNET_SECRET; undefined means "generate once into the data dir" (see secret.ts). */
  secret: string | undefined;
  compat: 'legacy' | undefined;
  /** Fastify's trustProxy: which X-Forwarded-For hops to believe for the client's address (sign-in throttling). */
  trustProxy: boolean | number | string[];
  logLevel: (typeof LOG_LEVELS)[number];
  metrics: { host: string; port: number } | 'off';
  /** where the admin API listens (SIGNET_ADMIN_ADDR); never the public port */
  admin: { host: string; port: number } | 'off';
  /** audit events older than this many days are swept (SIGNET_AUDIT_RETENTION_DAYS) */
  auditRetentionDays: number;
  /** SIGNET_SIGNUP: `open` lets people create their own account (with e-mail verification) */
  signup: 'open' | 'closed';
  /** SIGNET_FETCH_SOURCES: `on` lets /v1/convert/source fetch `http_sources` (public addresses only, size- and time-limited) */
  fetchSources: boolean;
  /** SIGNET_MFA: `required` leads a person without a second factor to set one up after the password, before any consent or callback */
  mfa: 'optional' | 'required';
  /** SIGNET_CLIENT_REGISTRATION (issue 39): `open` lets applications (AI agents) register themselves at POST /oauth/register (RFC 7591) */
  clientRegistration: 'open' | 'closed';
  /**
   * SIGNET_OUTBOUND_ALLOW_LOOPBACK_FOR_TESTS, SIGNET_OUTBOUND_TEST_CA_FILE: what the guarded outbound fetch
   * (client metadata documents, documents from URLs) allows beyond public https addresses — for tests that
   * serve from a loopback HTTPS server with a self-signed certificate. Never with NODE_ENV=production.
   */
  outbound: { allowLoopbackForTests: boolean; testCaFile?: string | undefined };
  /** SIGNET_ID_TOKEN_ALG: how id_tokens are signed for applications that name no algorithm of their own (issue 28) */
  idTokenAlg: 'ES256' | 'RS256';
  /** SIGNET_IDP_TIMEOUT_MS: the deadline of each request to an upstream identity provider (issue 33) */
  idpTimeoutMs: number;
  /** shown on every page and in account mail: SIGNET_PRODUCT_NAME, SIGNET_LOGO_URL, SIGNET_ACCENT_COLOR */
  brand: { productName: string; logoUrl: string | undefined; accentColor: string | undefined };
};

/** Reads `.env` from `cwd` (if any) under the given environment: real environment variables win. */
export function readEnvironment(env: NodeJS.ProcessEnv, cwd: string): Record<string, string | undefined> {
  const file = path.join(cwd, '.env');
  const fromFile = existsSync(file) ? parseDotenv(readFileSync(file)) : {};
  return { ...fromFile, ...env };
}

/**
 * Only the SIGNET_TRANSLATE_* settings, for `signet translate` on local files (no data dir, no
 * database, no base URL): the same checks as `parseSettings` makes of them.
 */
export function parseTranslateSettings(env: Record<string, string | undefined>): Settings['translate'] {
  const keys = ['SIGNET_TRANSLATE_ENGINE', 'SIGNET_TRANSLATE_URL', 'SIGNET_TRANSLATE_MODEL', 'SIGNET_TRANSLATE_API_KEY'] as const;
  const relevant: Record<string, string> = {};
  for (const key of keys) if (env[key] !== undefined && env[key] !== '') relevant[key] = env[key];
  const parsed = schema.pick({ SIGNET_TRANSLATE_ENGINE: true, SIGNET_TRANSLATE_URL: true, SIGNET_TRANSLATE_MODEL: true, SIGNET_TRANSLATE_API_KEY: true }).safeParse(relevant);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new SettingsError(String(issue.path[0] ?? 'settings'), issue.message);
  }
  const s = parsed.data;
  return { engine: s.SIGNET_TRANSLATE_ENGINE, url: s.SIGNET_TRANSLATE_URL || undefined, model: s.SIGNET_TRANSLATE_MODEL, apiKey: s.SIGNET_TRANSLATE_API_KEY };
}

/** Parses and validates settings. Throws SettingsError naming the first variable that is wrong. */
export function parseSettings(env: Record<string, string | undefined>, cwd = process.cwd()): Settings {
  const relevant: Record<string, string> = {};
  for (const key of Object.keys(schema.shape)) {
    const value = env[key];
    // An empty variable counts as unset, as in most twelve-factor tools.
    if (value !== undefined && value !== '') relevant[key] = value;
  }
  const parsed = schema.safeParse(relevant);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new SettingsError(String(issue.path[0] ?? 'settings'), issue.message);
  }
  const s = parsed.data;
  // The outbound fetch's test allowances can never be on in production by accident.
  if (env.NODE_ENV === 'production') {
    if (s.SIGNET_OUTBOUND_ALLOW_LOOPBACK_FOR_TESTS === 'true') throw new SettingsError('SIGNET_OUTBOUND_ALLOW_LOOPBACK_FOR_TESTS', 'is for tests only and cannot be set when NODE_ENV=production');
    if (s.SIGNET_OUTBOUND_TEST_CA_FILE) throw new SettingsError('SIGNET_OUTBOUND_TEST_CA_FILE', 'is for tests only and cannot be set when NODE_ENV=production');
  }
  const dataDir = path.resolve(cwd, s.SIGNET_DATA_DIR);
  const databaseUrl = s.SIGNET_DATABASE_URL;
  const database: Settings['database'] =
    databaseUrl && /^postgres/.test(databaseUrl)
      ? { kind: 'postgres', url: databaseUrl, poolSize: s.SIGNET_DATABASE_POOL_SIZE, timeoutMs: s.SIGNET_DATABASE_TIMEOUT_SECONDS * 1000 }
      : {
          kind: 'sqlite',
          file: databaseUrl ? path.resolve(cwd, databaseUrl.slice('sqlite:'.length)) : path.join(dataDir, 'signet.sqlite'),
          timeoutMs: s.SIGNET_DATABASE_TIMEOUT_SECONDS * 1000,
        };

  if (s.SIGNET_TRANSLATE_ENGINE && s.SIGNET_TRANSLATE_ENGINE !== 'apertium' && !s.SIGNET_TRANSLATE_URL) {
    throw new SettingsError('SIGNET_TRANSLATE_URL', `required when SIGNET_TRANSLATE_ENGINE is ${s.SIGNET_TRANSLATE_ENGINE}`);
  }
  if (s.SIGNET_TRANSLATE_ENGINE === 'openai' && !s.SIGNET_TRANSLATE_MODEL) {
    throw new SettingsError('SIGNET_TRANSLATE_MODEL', 'required when SIGNET_TRANSLATE_ENGINE is openai (the model name the server offers, e.g. qwen2.5:7b)');
  }
  if (s.SIGNET_SMTP_URL && !s.SIGNET_MAIL_FROM) {
    throw new SettingsError('SIGNET_MAIL_FROM', 'required when SIGNET_SMTP_URL is set (the From address of outgoing mail)');
  }

  let metrics: Settings['metrics'] = 'off';
  if (s.SIGNET_METRICS_ADDR !== 'off') {
    const at = s.SIGNET_METRICS_ADDR.lastIndexOf(':');
    const metricsPort = Number(s.SIGNET_METRICS_ADDR.slice(at + 1));
    if (metricsPort < 1 || metricsPort > 65535) throw new SettingsError('SIGNET_METRICS_ADDR', 'expected HOST:PORT with a port from 1 to 65535, or off');
    metrics = { host: s.SIGNET_METRICS_ADDR.slice(0, at).replace(/^\[|\]$/g, ''), port: metricsPort };
  }

  // SIGNET_PORT alone moves the default base URL with it: otherwise every request would be refused
  // (421) for naming a host:port the service does not answer for. With both set, both are taken as
  // given (a proxy in front may well listen on another port).
  const baseUrl = relevant.SIGNET_BASE_URL === undefined && s.SIGNET_PORT !== undefined ? new URL(`http://localhost:${s.SIGNET_PORT}`) : s.SIGNET_BASE_URL;
  const basePort = baseUrl.port ? Number(baseUrl.port) : 8080;
  const admin = parseListenAddress('SIGNET_ADMIN_ADDR', s.SIGNET_ADMIN_ADDR);
  // the admin API is "never on the public port"
  if (admin !== 'off' && admin.port === (s.SIGNET_PORT ?? basePort)) {
    throw new SettingsError('SIGNET_ADMIN_ADDR', `the admin API must not listen on the public port ${s.SIGNET_PORT ?? basePort}; choose another port (default 127.0.0.1:9465) or off`);
  }
  return {
    baseUrl,
    altBaseUrl: s.SIGNET_ALT_BASE_URL,
    host: s.SIGNET_HOST,
    port: s.SIGNET_PORT ?? basePort,
    dataDir,
    database,
    storageUrl: s.SIGNET_STORAGE_URL || `file:${path.join(dataDir, 'objects')}`,
    shutdownMs: s.SIGNET_SHUTDOWN_SECONDS * 1000,
    uploadMaxBytes: s.SIGNET_UPLOAD_MAX_MB * 1024 * 1024,
    worker: { leaseSeconds: s.SIGNET_WORKER_LEASE_SECONDS, concurrency: s.SIGNET_WORKER_CONCURRENCY, parseThreads: s.SIGNET_PARSE_THREADS },
    smtpUrl: s.SIGNET_SMTP_URL || undefined,
    mailFrom: s.SIGNET_MAIL_FROM,
    translate: {
      engine: s.SIGNET_TRANSLATE_ENGINE,
      url: s.SIGNET_TRANSLATE_URL || undefined,
      model: s.SIGNET_TRANSLATE_MODEL,
      apiKey: s.SIGNET_TRANSLATE_API_KEY,
    },
    secret: s.SIGNET_SECRET,
    compat: s.SIGNET_COMPAT,
    trustProxy: parseTrustProxy(s.SIGNET_TRUST_PROXY),
    logLevel: s.SIGNET_LOG_LEVEL,
    metrics,
    admin,
    auditRetentionDays: s.SIGNET_AUDIT_RETENTION_DAYS,
    signup: s.SIGNET_SIGNUP,
    fetchSources: s.SIGNET_FETCH_SOURCES === 'on',
    mfa: s.SIGNET_MFA,
    clientRegistration: s.SIGNET_CLIENT_REGISTRATION,
    outbound: { allowLoopbackForTests: s.SIGNET_OUTBOUND_ALLOW_LOOPBACK_FOR_TESTS === 'true', testCaFile: s.SIGNET_OUTBOUND_TEST_CA_FILE ? path.resolve(cwd, s.SIGNET_OUTBOUND_TEST_CA_FILE) : undefined },
    idTokenAlg: s.SIGNET_ID_TOKEN_ALG,
    idpTimeoutMs: s.SIGNET_IDP_TIMEOUT_MS,
    brand: { productName: s.SIGNET_PRODUCT_NAME, logoUrl: s.SIGNET_LOGO_URL, accentColor: s.SIGNET_ACCENT_COLOR?.toLowerCase() },
  };
}

function isHttpsUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'https:' && !url.username && !url.password;
  } catch {
    return false;
  }
}

/** HOST:PORT (an IPv6 address in brackets) or off: a listener of its own. */
function parseListenAddress(variable: string, value: string): { host: string; port: number } | 'off' {
  if (value === 'off') return 'off';
  const at = value.lastIndexOf(':');
  const listenPort = Number(value.slice(at + 1));
  if (listenPort < 1 || listenPort > 65535) throw new SettingsError(variable, 'expected HOST:PORT with a port from 1 to 65535, or off');
  return { host: value.slice(0, at).replace(/^\[|\]$/g, ''), port: listenPort };
}

function isAddressOrRange(value: string): boolean {
  const [address, bits, extra] = value.split('/');
  if (extra !== undefined || address === undefined) return false;
  const family = isIP(address);
  if (family === 0) return false;
  return bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128));
}

function parseTrustProxy(value: string | undefined): Settings['trustProxy'] {
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  if (/^\d+$/.test(value)) return Number(value);
  return value.split(',').map((part) => part.trim());
}

/** The origins this service answers for: the base URL first, then the alternate one. */
export function servedOrigins(settings: Pick<Settings, 'baseUrl' | 'altBaseUrl'>): URL[] {
  return settings.altBaseUrl ? [settings.baseUrl, settings.altBaseUrl] : [settings.baseUrl];
}
