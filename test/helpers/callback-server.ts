// A local stand-in for an application's redirect URI: answers 200 and records each callback URL.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type CallbackServer = {
  /** the redirect URI to register */
  url: string;
  /** every callback received so far, oldest first */
  received: URL[];
  /** the next callback (one already received and not yet taken, or the next to arrive) */
  next(): Promise<URL>;
  close(): Promise<void>;
};

export async function startCallbackServer(): Promise<CallbackServer> {
  const received: URL[] = [];
  const pending: URL[] = [];
  const waiting: Array<(url: URL) => void> = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', `http://${req.headers.host ?? '127.0.0.1'}`);
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>Callback</title><p>Callback received.</p>');
    if (url.pathname !== '/callback') return; // e.g. /favicon.ico
    received.push(url);
    const waiter = waiting.shift();
    if (waiter) waiter(url);
    else pending.push(url);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/callback`,
    received,
    next() {
      const ready = pending.shift();
      return ready ? Promise.resolve(ready) : new Promise<URL>((resolve) => waiting.push(resolve));
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
