// A loopback HTTPS server for tests of the guarded outbound fetch (net/guarded-fetch.ts): client metadata
// documents (issue 39), documents from URLs (issue 40). Its certificate is made now with openssl (P-256,
// self-signed, for 127.0.0.1 and localhost, valid a day) and written beside a CA file that Signet trusts
// only when a test says so:
//
//     const server = await startHttpsTestServer();
//     server.route('/agent/client.json', (req, res) => res.writeHead(200, {'content-type': 'application/json'}).end(...));
//     const env = server.signetEnv;   // SIGNET_OUTBOUND_ALLOW_LOOPBACK_FOR_TESTS=true, SIGNET_OUTBOUND_TEST_CA_FILE=…
//     … `${server.origin}/agent/client.json` is then an https URL Signet will fetch …
//     await server.close();
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

export type Handler = (req: IncomingMessage, res: ServerResponse) => void;

export type HttpsTestServer = {
  /** `https://127.0.0.1:PORT` */
  origin: string;
  /** the PEM file of the server's certificate (its own CA) */
  caFile: string;
  /** the settings under which a Signet in this process may fetch from this server */
  signetEnv: Record<string, string>;
  /** serves `handler` at `pathname` (replacing an earlier one) */
  route(pathname: string, handler: Handler): void;
  /** how many requests reached `pathname` */
  hits(pathname: string): number;
  /** the request headers of the last request to `pathname` */
  lastHeaders(pathname: string): IncomingMessage['headers'] | undefined;
  close(): Promise<void>;
};

export async function startHttpsTestServer(): Promise<HttpsTestServer> {
  const dir = mkdtempSync(path.join(tmpdir(), 'signet-https-'));
  const key = path.join(dir, 'key.pem');
  const cert = path.join(dir, 'cert.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost'], { stdio: 'ignore' });
  const routes = new Map<string, Handler>();
  const counts = new Map<string, number>();
  const headers = new Map<string, IncomingMessage['headers']>();
  const server: Server = createServer({ key: readFileSync(key), cert: readFileSync(cert) }, (req, res) => {
    const pathname = new URL(req.url ?? '/', 'https://x').pathname;
    counts.set(pathname, (counts.get(pathname) ?? 0) + 1);
    headers.set(pathname, req.headers);
    const handler = routes.get(pathname);
    if (handler) handler(req, res);
    else res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
  });
  const open = new Set<import('node:net').Socket>();
  server.on('secureConnection', (socket) => {
    open.add(socket);
    socket.on('close', () => open.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    caFile: cert,
    signetEnv: { SIGNET_OUTBOUND_ALLOW_LOOPBACK_FOR_TESTS: 'true', SIGNET_OUTBOUND_TEST_CA_FILE: cert },
    route: (pathname, handler) => void routes.set(pathname, handler),
    hits: (pathname) => counts.get(pathname) ?? 0,
    lastHeaders: (pathname) => headers.get(pathname),
    async close() {
      for (const socket of open) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A handler answering JSON with the given status and headers. */
export function json(body: unknown, extraHeaders: Record<string, string> = {}, status = 200): Handler {
  return (_req, res) => res.writeHead(status, { 'content-type': 'application/json', ...extraHeaders }).end(JSON.stringify(body));
}
