// The plumbing of the scale-out test: real `signet serve` and `signet worker` processes sharing one
// PostgreSQL and one S3 store, a browser that talks to one chosen server process under the public host
// name (as a load balancer passes `Host` through), and a round-robin proxy in front of the servers that
// retries on another server only what nginx's `proxy_next_upstream error` would: a request of which
// nothing was sent because the connection could not be made.
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SIGNET_BIN } from '../helpers/cli.ts';
import { freePort } from '../helpers/live-server.ts';
import { sseFrameReader, type SseEvent } from '../helpers/sse.ts';

export type SignetProcess = {
  name: string;
  child: ChildProcess;
  /** stdout split into lines, stderr as it came */
  lines: string[];
  exited: Promise<number | null>;
};

export type ServeProcess = SignetProcess & { port: number };

/** A serve process clients reach directly at `baseUrl`, its public address. */
export type ServeAtOwnOrigin = ServeProcess & { baseUrl: string };

function spawnSignet(name: string, args: string[], env: Record<string, string>): SignetProcess {
  const child = spawn(process.execPath, [SIGNET_BIN, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  let partial = '';
  child.stdout!.on('data', (d: Buffer) => {
    const parts = (partial + d.toString()).split('\n');
    partial = parts.pop() ?? '';
    lines.push(...parts);
  });
  child.stderr!.on('data', (d: Buffer) => lines.push(d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { name, child, lines, exited };
}

/** `signet serve` on its own port (a free one unless given); resolves once /healthz answers. */
export async function startServe(name: string, env: Record<string, string>, port?: number): Promise<ServeProcess> {
  port ??= await freePort();
  const started = { ...spawnSignet(name, ['serve'], { ...env, SIGNET_HOST: '127.0.0.1', SIGNET_PORT: String(port) }), port };
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (started.child.exitCode !== null) throw new Error(`${name}: signet serve exited with ${started.child.exitCode}: ${started.lines.join('\n')}`);
    const up = await send(port, { path: '/healthz' }).then(
      (r) => r.status === 200,
      () => false,
    );
    if (up) return started;
    if (Date.now() > deadline) throw new Error(`${name}: signet serve did not answer /healthz within 60 s: ${started.lines.join('\n')}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * `signet serve` that clients reach directly, with no balancer in front: its public address
 * (SIGNET_BASE_URL) is its own, `baseUrl`. Metrics and admin listeners off, warnings only in the log.
 */
export async function startServeAtOwnOrigin(name: string, input: { databaseUrl: string; secret: string; dataDir: string }): Promise<ServeAtOwnOrigin> {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const env = {
    SIGNET_DATABASE_URL: input.databaseUrl,
    SIGNET_BASE_URL: baseUrl,
    SIGNET_SECRET: input.secret,
    SIGNET_METRICS_ADDR: 'off',
    SIGNET_ADMIN_ADDR: 'off',
    SIGNET_LOG_LEVEL: 'warn',
    SIGNET_DATA_DIR: input.dataDir,
  };
  return { ...(await startServe(name, env, port)), baseUrl };
}

/** `signet worker` (tasks and e-mail); it logs a JSON line per task it starts. */
export function startWorker(name: string, env: Record<string, string>): SignetProcess {
  return spawnSignet(name, ['worker'], env);
}

/** The ids of the tasks a worker started, from its log, in order (a task claimed again appears again). */
export function tasksStarted(worker: SignetProcess): string[] {
  return worker.lines.filter((l) => l.includes('"task started"')).map((l) => (JSON.parse(l) as { task: string }).task);
}

export async function stop(process: SignetProcess | undefined, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  if (!process) return null;
  if (process.child.exitCode === null && process.child.signalCode === null) process.child.kill(signal);
  return process.exited;
}

// ---------------------------------------------------------------------------------------------------
// HTTP to one chosen process

export type Answer = { status: number; headers: http.IncomingHttpHeaders; body: string };
export type Outgoing = { method?: string; path: string; headers?: Record<string, string>; body?: string | Buffer };

const direct = new http.Agent({ keepAlive: true });

/** One request to 127.0.0.1:port; the whole body read as text. */
export function send(port: number, request: Outgoing, agent: http.Agent = direct): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: request.method ?? 'GET', path: request.path, headers: request.headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(request.body);
  });
}

export function csrfOf(html: string): string {
  const match = /name="_csrf" value="([^"]+)"/.exec(html);
  if (!match) throw new Error(`the page carries no CSRF token: ${html.slice(0, 300)}`);
  return match[1]!;
}

/**
 * A browser on the public address: one cookie jar for the public host (cookies carry no Domain, so
 * every server process behind the balancer gets them), each request sent to the server the test picks.
 */
export class Browser {
  readonly cookies = new Map<string, string>();
  readonly host: string;
  readonly headers: Record<string, string>;
  constructor(publicOrigin: string, headers: Record<string, string> = {}) {
    this.host = new URL(publicOrigin).host;
    this.headers = headers;
  }

  private remember(answer: Answer): void {
    for (const line of answer.headers['set-cookie'] ?? []) {
      const [pair, ...attributes] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      const expired = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a) || (/^\s*expires=/i.test(a) && Date.parse(a.split('=')[1]!) < Date.now()));
      if (value === '' || expired) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  cookieHeader(): Record<string, string> {
    return this.cookies.size ? { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') } : {};
  }

  async get(server: ServeProcess, path: string): Promise<Answer> {
    const answer = await send(server.port, { path, headers: { host: this.host, ...this.headers, ...this.cookieHeader() } });
    this.remember(answer);
    return answer;
  }

  async post(server: ServeProcess, path: string, form: Record<string, string | string[]>): Promise<Answer> {
    const body = new URLSearchParams();
    for (const [k, v] of Object.entries(form)) for (const one of [v].flat()) body.append(k, one);
    const answer = await send(server.port, {
      method: 'POST',
      path,
      headers: { host: this.host, 'content-type': 'application/x-www-form-urlencoded', ...this.headers, ...this.cookieHeader() },
      body: body.toString(),
    });
    this.remember(answer);
    return answer;
  }

  /** Loads a page on one server and posts its form (with the page's CSRF token) to the same or another. */
  async submit(pageOn: ServeProcess, page: string, postTo: ServeProcess, action: string, form: Record<string, string | string[]>): Promise<Answer> {
    const shown = await this.get(pageOn, page);
    if (shown.status !== 200) throw new Error(`GET ${page} on ${pageOn.name}: ${shown.status} ${shown.body.slice(0, 300)}`);
    return this.post(postTo, action, { _csrf: csrfOf(shown.body), ...form });
  }
}

/** A multipart/form-data body with one file field and some text fields. */
export function multipart(file: { field: string; name: string; type: string; data: Buffer }, fields: Record<string, string> = {}): { body: Buffer; contentType: string } {
  const boundary = `----signet${Math.random().toString(16).slice(2)}`;
  const parts: Buffer[] = [];
  for (const [k, v] of Object.entries(fields)) parts.push(Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`));
  parts.push(Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="${file.field}"; filename="${file.name}"\r\ncontent-type: ${file.type}\r\n\r\n`), file.data, Buffer.from(`\r\n--${boundary}--\r\n`));
  return { body: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}

// ---------------------------------------------------------------------------------------------------
// The load balancer

export type ProxyStats = {
  /** requests sent again to the next server because the connection to one could not be made */
  retried: number;
  /** upstream errors after (part of) a request had been sent: answered 502, never retried */
  failed: string[];
  /** requests forwarded, per upstream port (the last try) */
  served: Map<number, number>;
};

export type RoundRobinProxy = { port: number; origin: string; upstreams: number[]; stats: ProxyStats; close(): Promise<void> };

// Hop-by-hop headers (RFC 9110 §7.6.1) belong to one connection, not to the request.
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

function endToEnd(headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP.has(name)));
}

/**
 * Round robin over `upstreams` with kept-alive connections to each, as nginx with an `upstream` block
 * and `keepalive` does. `X-Forwarded-For` carries the client's address. Streams responses as they
 * come (no buffering, so server-sent events pass). A request is sent to the next server only when the
 * connection failed before anything of it was written (connection refused): once bytes went out, the
 * server may have acted on them, so the error reaches the client as 502.
 */
export async function startRoundRobinProxy(): Promise<RoundRobinProxy> {
  const agents = new Map<number, http.Agent>();
  const agentFor = (port: number) => {
    let agent = agents.get(port);
    if (!agent) agents.set(port, (agent = new http.Agent({ keepAlive: true, maxSockets: 64 })));
    return agent;
  };
  const stats: ProxyStats = { retried: 0, failed: [], served: new Map() };
  let next = 0;
  const proxy: RoundRobinProxy = { port: 0, origin: '', upstreams: [], stats, close: async () => {} };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => forward(Buffer.concat(chunks), new Set()));

    // As nginx does, a retry goes to a server this request has not tried yet.
    const forward = (body: Buffer, tried: Set<number>) => {
      let port = proxy.upstreams[next++ % proxy.upstreams.length]!;
      for (let i = 0; tried.has(port) && i < proxy.upstreams.length; i++) port = proxy.upstreams[next++ % proxy.upstreams.length]!;
      tried.add(port);
      const headers = { ...endToEnd(req.headers), 'x-forwarded-for': req.socket.remoteAddress ?? '', 'content-length': String(body.length) };
      const upstream = http.request({ host: '127.0.0.1', port, method: req.method, path: req.url, headers, agent: agentFor(port) });
      let connected = false;
      upstream.on('socket', (socket) => {
        if (!socket.connecting) connected = true;
        else socket.once('connect', () => (connected = true));
      });
      upstream.on('response', (answer) => {
        stats.served.set(port, (stats.served.get(port) ?? 0) + 1);
        res.writeHead(answer.statusCode ?? 502, endToEnd(answer.headers));
        answer.pipe(res);
        answer.on('error', () => res.destroy());
        answer.on('aborted', () => res.destroy());
      });
      upstream.on('error', (error: NodeJS.ErrnoException) => {
        if (!connected && tried.size < proxy.upstreams.length) {
          stats.retried += 1;
          forward(body, tried);
          return;
        }
        stats.failed.push(`${port}: ${error.code ?? error.message}${connected ? ' (after sending)' : ''}`);
        if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' }).end('bad gateway');
        else res.destroy();
      });
      upstream.end(body);
    };
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.port = (server.address() as AddressInfo).port;
  proxy.origin = `http://127.0.0.1:${proxy.port}`;
  proxy.close = async () => {
    for (const agent of agents.values()) agent.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return proxy;
}

export type LoadResult = { statuses: Map<number, number>; errors: string[]; sent: number };

/**
 * Steady load: `concurrency` loops, each sending the next request of `requests` (in turn) through a
 * kept-alive connection to `port`, until `stop` resolves. Every status and every client-side error counted.
 */
export async function steadyLoad(port: number, concurrency: number, requests: Outgoing[], stopped: Promise<void>): Promise<LoadResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const result: LoadResult = { statuses: new Map(), errors: [], sent: 0 };
  let done = false;
  void stopped.then(() => (done = true));
  let turn = 0;
  const loop = async () => {
    while (!done) {
      const request = requests[turn++ % requests.length]!;
      result.sent += 1;
      try {
        const answer = await send(port, request, agent);
        result.statuses.set(answer.status, (result.statuses.get(answer.status) ?? 0) + 1);
      } catch (error) {
        result.errors.push((error as NodeJS.ErrnoException).code ?? (error as Error).message);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, loop));
  agent.destroy();
  return result;
}

// ---------------------------------------------------------------------------------------------------
// Server-sent events from one chosen process (fetch cannot set Host, so this reads over node:http)

export type StreamEvent = SseEvent;
export type EventStream = {
  status: number;
  events: StreamEvent[];
  /** every `retry:` value, in order */
  retries: number[];
  /** resolves when the server ends the stream */
  ended: Promise<void>;
  waitFor(match: (event: StreamEvent) => boolean, timeoutMs?: number): Promise<StreamEvent>;
  close(): void;
};

export function openStream(port: number, path: string, headers: Record<string, string>): Promise<EventStream> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, headers: { accept: 'text/event-stream', ...headers }, agent: false }, (res) => {
      const events: StreamEvent[] = [];
      const retries: number[] = [];
      const waiters = new Set<() => void>();
      res.setEncoding('utf8');
      res.on('error', () => {}); // a stream closed by the test, or cut by a process that died
      res.on(
        'data',
        sseFrameReader({
          event(event) {
            events.push(event);
            for (const waiter of [...waiters]) waiter();
          },
          retry: (ms) => retries.push(ms),
          comment: () => {},
        }),
      );
      const ended = new Promise<void>((done) => {
        res.on('end', () => done());
        res.on('close', () => done());
      });
      resolve({
        status: res.statusCode ?? 0,
        events,
        retries,
        ended,
        waitFor(match, timeoutMs = 20_000) {
          return new Promise((found, fail) => {
            const check = () => {
              const event = events.find(match);
              if (!event) return;
              clearTimeout(timer);
              waiters.delete(check);
              found(event);
            };
            const timer = setTimeout(() => {
              waiters.delete(check);
              fail(new Error(`no matching event within ${timeoutMs} ms; ${events.length} events so far`));
            }, timeoutMs);
            waiters.add(check);
            check();
          });
        },
        close: () => req.destroy(),
      });
    });
    req.on('error', reject);
    req.end();
  });
}
