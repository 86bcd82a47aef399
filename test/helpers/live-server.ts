// A real listening Signet on 127.0.0.1 (random port) over a test database, for clients that speak HTTP.
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import type { TestDatabase } from './databases.ts';
import { testApp, type TestApp } from './app.ts';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export type LiveServer = TestApp & { baseUrl: string; close(): Promise<void> };

export async function liveServer(database: TestDatabase, env: Record<string, string> = {}): Promise<LiveServer> {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const test = await testApp(database, { SIGNET_BASE_URL: baseUrl, SIGNET_ALT_BASE_URL: `http://localhost:${port}`, SIGNET_LOG_LEVEL: 'warn', ...env });
  await test.app.listen({ host: '127.0.0.1', port });
  return { ...test, baseUrl, close: () => test.app.close() };
}
