// `signet login --server URL` · `signet logout` (issue 43): the command line signs a person in to a
// Signet server with the device grant (remote/server-session.ts) so `signet parse --remote` and
// `signet translate --remote` can send files there as that person. No data dir, no database.
import type { Command } from 'commander';
import { credentialsPath, readCredentials, removeCredentials } from './remote/credentials.ts';
import { login, RemoteError, serverFetch } from './remote/server-session.ts';
import { print } from './output.ts';
import { fail } from './run.ts';

function failWith(error: unknown): never {
  if (error instanceof RemoteError) fail(error.message, error.exitCode);
  fail(error instanceof Error ? error.message : String(error));
}

export function registerLoginCommands(program: Command): void {
  program
    .command('login')
    .description('sign in to a Signet server from this machine (a code to enter in the browser), for parse --remote and translate --remote')
    .requiredOption('--server <url>', 'the server, e.g. https://id.example.com')
    .option('--json', 'print JSON')
    .addHelpText('after', `\nExample:\n  $ npx signet login --server https://id.example.com    # then open the address shown and enter the code\n\nThe tokens are kept in $XDG_CONFIG_HOME/signet/credentials.json (~/.config/signet/credentials.json without it), readable by you only.`)
    .action(async (o: { server: string; json?: boolean }) => {
      try {
        const credentials = await login(o.server, ({ uri, code, complete }) => {
          process.stderr.write(`To sign in, open ${uri} in a browser and enter the code ${code}\n(or open ${complete})\nWaiting for you to approve it there…\n`);
        });
        // Who signed in: the profile, when the token may read it.
        const me: { sub?: string; name?: string } = await serverFetch(credentials, '/oauth/userinfo').then((r) => (r.ok ? (r.json() as Promise<{ sub?: string; name?: string }>) : {})).catch(() => ({}));
        print({ server: credentials.server, signed_in: true, sub: me.sub ?? null, name: me.name ?? null, scope: credentials.scope, credentials: credentialsPath() }, o);
      } catch (error) {
        failWith(error);
      }
    });

  program
    .command('logout')
    .description('forget the sign-in of signet login on this machine (withdraw "Signet command line" on the server\'s /account page to end it there too)')
    .option('--json', 'print JSON')
    .addHelpText('after', `\nExample:\n  $ npx signet logout    # deletes the credentials file of signet login`)
    .action(async (o: { json?: boolean }) => {
      try {
        const stored = await readCredentials().catch(() => undefined);
        const removed = await removeCredentials();
        print({ signed_out: removed, server: stored?.server ?? null }, o);
      } catch (error) {
        failWith(error);
      }
    });
}
