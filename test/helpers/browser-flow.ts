// What a Chromium test of the sign-in flow starts from: Signet listening on a new SQLite database, a
// callback server standing in for the application, one person, the application registered, and a
// browser.
import type { Browser } from 'playwright-core';
import * as accounts from '../../src/accounts/accounts.ts';
import * as clients from '../../src/clients/clients.ts';
import { launchChromium } from './browser.ts';
import { startCallbackServer, type CallbackServer } from './callback-server.ts';
import { sqliteDatabase } from './databases.ts';
import { startSignet, type RunningSignet } from './live-server.ts';

export type BrowserFlow = {
  database: Awaited<ReturnType<typeof sqliteDatabase>>;
  signet: RunningSignet;
  callback: CallbackServer;
  browser: Browser;
  clientId: string;
  close(): Promise<void>;
};

export async function startBrowserFlow(person: { email: string; password: string }, appName: string): Promise<BrowserFlow> {
  const database = await sqliteDatabase();
  const signet = await startSignet(database);
  const callback = await startCallbackServer();
  await accounts.createAccount(database.db, signet.clock, person);
  const { client } = await clients.registerClient(database.db, signet.clock, signet.deps.keys.tokenHash, { name: appName, redirectUris: [callback.url], scopes: ['openid', 'profile'] });
  const browser = await launchChromium();
  return {
    database,
    signet,
    callback,
    browser,
    clientId: client.clientId,
    async close() {
      await browser.close();
      await callback.close();
      await signet.close();
      await database.dispose();
    },
  };
}
