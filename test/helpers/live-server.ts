// A real listening Signet on 127.0.0.1 (random port) over a test database, for browsers and clients that speak HTTP.
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { testApp, type TestApp } from './app.ts';
import type { TestDatabase } from './databases.ts';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export type RunningSignet = TestApp & { baseUrl: string; altBaseUrl: string; close(): Promise<void> };

/** The real app listening on 127.0.0.1 at a free port; the second host is `localhost` on the same port. */
export async function startSignet(database: TestDatabase, env: Record<string, string> = {}, parts: Parameters<typeof testApp>[3] = {}): Promise<RunningSignet> {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const altBaseUrl = `http://localhost:${port}`;
  const running = await testApp(database, { SIGNET_BASE_URL: baseUrl, SIGNET_ALT_BASE_URL: altBaseUrl, SIGNET_LOG_LEVEL: 'warn', ...env }, undefined, parts);
  await running.app.listen({ host: '127.0.0.1', port });
  return { ...running, baseUrl, altBaseUrl, close: () => running.app.close() };
}
