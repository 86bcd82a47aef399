// signet client …: manage applications.
import type { Command } from 'commander';
import * as clients from '../clients/clients.ts';
import type { CommandContext } from './context.ts';
import { print, UsageError } from './output.ts';

type Run = (action: (ctx: CommandContext) => Promise<unknown>, options: { json?: boolean }) => Promise<void>;
const collect = (value: string, previous: string[] = []) => [...previous, value];
const scopeList = (value: string) => value.split(/[\s,]+/).filter(Boolean);

export function registerClientCommands(program: Command, run: Run): void {
  const client = program.command('client').description('manage applications');

  client
    .command('create')
    .description('register an application')
    .requiredOption('--name <name>', 'shown to people on the consent page')
    .requiredOption('--redirect-uri <uri>', 'a registered callback (repeat for more)', collect)
    .option('--scope <scopes>', 'permitted scopes', 'openid profile')
    .option('--public', 'a public client (PKCE, no secret)', false)
    .option('--allowed-origin <origin>', 'browser origin allowed to call the token endpoint (repeat for more)', collect)
    .option('--json', 'print JSON')
    .action((o: { name: string; redirectUri: string[]; scope: string; public: boolean; allowedOrigin?: string[]; json?: boolean }) =>
      run(async (ctx) => {
        const { client: created, clientSecret } = await clients.registerClient(ctx.database.db, ctx.clock, ctx.keys.tokenHash, {
          name: o.name,
          redirectUris: o.redirectUri,
          scopes: scopeList(o.scope),
          isPublic: o.public,
          allowedOrigins: o.allowedOrigin ?? [],
        });
        return clients.toView(created, clientSecret);
      }, o),
    );

  client
    .command('list')
    .option('--json', 'print JSON')
    .action((o: { json?: boolean }) => run(async (ctx) => (await clients.listClients(ctx.database.db)).map((c) => clients.toView(c)), o));

  client
    .command('show <client_id>')
    .option('--json', 'print JSON')
    .action((id: string, o: { json?: boolean }) => run(async (ctx) => clients.toView(await clients.getClient(ctx.database.db, id)), o));

  client
    .command('update <client_id>')
    .description('change an application (a repeated option replaces the whole list)')
    .option('--name <name>')
    .option('--redirect-uri <uri>', 'replaces the registered callbacks (repeat for more)', collect)
    .option('--scope <scopes>', 'replaces the permitted scopes')
    .option('--allowed-origin <origin>', 'replaces the browser origins (repeat for more)', collect)
    .option('--no-allowed-origins', 'removes every allowed browser origin')
    .option('--json', 'print JSON')
    .action((id: string, o: { name?: string; redirectUri?: string[]; scope?: string; allowedOrigin?: string[]; allowedOrigins?: boolean; json?: boolean }) =>
      run(async (ctx) => {
        const changes: clients.ClientChanges = {
          name: o.name,
          redirectUris: o.redirectUri,
          scopes: o.scope === undefined ? undefined : scopeList(o.scope),
          allowedOrigins: o.allowedOrigins === false ? [] : o.allowedOrigin,
        };
        if (Object.values(changes).every((v) => v === undefined)) throw new UsageError('nothing to change: give --name, --redirect-uri, --scope or --allowed-origin');
        return clients.toView(await clients.updateClient(ctx.database.db, ctx.clock, id, changes));
      }, o),
    );

  for (const [name, enabled] of [
    ['disable', false],
    ['enable', true],
  ] as const) {
    client
      .command(`${name} <client_id>`)
      .option('--json', 'print JSON')
      .action((id: string, o: { json?: boolean }) => run(async (ctx) => clients.toView(await clients.updateClient(ctx.database.db, ctx.clock, id, { enabled })), o));
  }

  client
    .command('rotate-secret <client_id>')
    .description('issue a new secret (shown once); the old one stops working at once')
    .option('--json', 'print JSON')
    .action((id: string, o: { json?: boolean }) =>
      run(async (ctx) => {
        const { client: rotated, clientSecret } = await clients.rotateClientSecret(ctx.database.db, ctx.clock, ctx.keys.tokenHash, id);
        return clients.toView(rotated, clientSecret);
      }, o),
    );

  client
    .command('delete <client_id>')
    .description('remove an application with its grants and tokens')
    .option('--json', 'print JSON')
    .action((id: string, o: { json?: boolean }) =>
      run(async (ctx) => {
        await clients.deleteClient(ctx.database.db, id);
        return { client_id: id, deleted: true };
      }, o),
    );
}
