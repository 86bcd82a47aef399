// signet client …: manage applications.
import type { Command } from 'commander';
import {
  createClientAsOperator,
  deleteClientAsOperator,
  rotateClientSecretAsOperator,
  updateClientAsOperator,
} from '../admin/operator-changes.ts';
import * as clients from '../clients/clients.ts';
import { cliOperator } from './context.ts';
import { shortTime, UsageError, type HumanView } from './output.ts';
import type { Run } from './run.ts';

const collect = (value: string, previous: string[] = []) => [...previous, value];
const scopeList = (value: string) => value.split(/[\s,]+/).filter(Boolean);

/** On a terminal: a table of applications; a new or rotated secret is followed by a "shown once" line. */
const listView: HumanView = {
  columns: [
    { header: 'client_id', value: (c) => c.client_id },
    { header: 'name', value: (c) => c.name },
    { header: 'public', value: (c) => c.public },
    { header: 'enabled', value: (c) => c.enabled },
    // issue 36: whether the application gets an id_token when it asks for `openid` (--oidc)
    { header: 'oidc', value: (c) => c.oidc },
    // issue 39: registered itself (POST /oauth/register); its name is its own, unverified
    { header: 'dynamic', value: (c) => c.dynamic },
    { header: 'scopes', value: (c) => c.scopes },
    // issue 43: the extra grants it opted into (--grant)
    { header: 'grants', value: (c) => c.grants },
    { header: 'redirect_uris', value: (c) => c.redirect_uris },
    { header: 'created', value: (c) => shortTime(c.created_at) },
  ],
};
const secretView: HumanView = { secretField: 'client_secret' };

function idTokenAlgOption(value: string | undefined): 'ES256' | 'RS256' | undefined {
  if (value === undefined) return undefined;
  if (value !== 'ES256' && value !== 'RS256') throw new UsageError('--id-token-alg takes ES256 or RS256');
  return value;
}

export function registerClientCommands(program: Command, run: Run): void {
  const client = program
    .command('client')
    .description('manage applications: create, list, show, update, disable, enable, rotate-secret, delete')
    .addHelpText('after', `\nExample:\n  $ npx signet client create --name "Example App" --redirect-uri https://app.example.com/callback --scope "openid profile email"`);

  client
    .command('create')
    .description('register an application')
    .requiredOption('--name <name>', 'shown to people on the consent page (required)')
    .option('--redirect-uri <uri>', 'a registered callback, repeat for more (required), unless the application uses only --grant', collect)
    .option('--scope <scopes>', 'permitted scopes', 'openid profile')
    .option('--public', 'a public client (PKCE, no secret)', false)
    .option('--allowed-origin <origin>', 'browser origin allowed to call the token endpoint (repeat for more)', collect)
    .option('--oidc', 'OpenID Connect: an id_token when it asks for openid (without it, never)', false)
    .option('--post-logout-redirect-uri <uri>', 'where logout may return to, compared byte for byte (repeat for more)', collect)
    .option('--id-token-alg <alg>', 'ES256 or RS256 (default: SIGNET_ID_TOKEN_ALG)')
    .option('--grant <grant>', 'an extra grant: client_credentials (a service acting as itself) or device_code (RFC 8628); repeat for both', collect)
    .option('--json', 'print JSON')
    .action((o: { name: string; redirectUri?: string[]; scope: string; public: boolean; allowedOrigin?: string[]; oidc: boolean; postLogoutRedirectUri?: string[]; idTokenAlg?: string; grant?: string[]; json?: boolean }) =>
      run(async (ctx) => {
        const { client: created, clientSecret } = await createClientAsOperator(cliOperator(ctx), {
          name: o.name,
          redirectUris: o.redirectUri ?? [],
          scopes: scopeList(o.scope),
          isPublic: o.public,
          allowedOrigins: o.allowedOrigin ?? [],
          oidc: o.oidc,
          postLogoutRedirectUris: o.postLogoutRedirectUri ?? [],
          idTokenAlg: idTokenAlgOption(o.idTokenAlg),
          grants: o.grant ?? [],
        });
        return clients.toView(created, clientSecret);
      }, o, secretView),
    );

  client
    .command('list')
    .description('list every registered application (secrets are never shown again)')
    .option('--dynamic', 'only the applications that registered themselves (POST /oauth/register)')
    .option('--json', 'print JSON')
    .action((o: { json?: boolean; dynamic?: boolean }) =>
      run(async (ctx) => (await clients.listClients(ctx.database.db)).filter((c) => !o.dynamic || c.dynamic).map((c) => clients.toView(c)), o, listView),
    );

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
    .option('--oidc', 'OpenID Connect: an id_token when it asks for openid')
    .option('--no-oidc', 'no id_token, ever (the spec\'s rule)')
    .option('--post-logout-redirect-uri <uri>', 'replaces the logout callbacks (repeat for more)', collect)
    .option('--no-post-logout-redirect-uris', 'removes every logout callback')
    .option('--id-token-alg <alg>', 'ES256, RS256, or default (SIGNET_ID_TOKEN_ALG)')
    .option('--grant <grant>', 'replaces the extra grants: client_credentials, device_code (repeat for both)', collect)
    .option('--no-grants', 'removes every extra grant (the spec\'s two grants only)')
    .option('--json', 'print JSON')
    .action((id: string, o: { name?: string; redirectUri?: string[]; scope?: string; allowedOrigin?: string[]; allowedOrigins?: boolean; oidc?: boolean; postLogoutRedirectUri?: string[]; postLogoutRedirectUris?: boolean; idTokenAlg?: string; grant?: string[]; grants?: boolean; json?: boolean }) =>
      run(async (ctx) => {
        const changes: clients.ClientChanges = {
          name: o.name,
          redirectUris: o.redirectUri,
          scopes: o.scope === undefined ? undefined : scopeList(o.scope),
          allowedOrigins: o.allowedOrigins === false ? [] : o.allowedOrigin,
          oidc: o.oidc,
          postLogoutRedirectUris: o.postLogoutRedirectUris === false ? [] : o.postLogoutRedirectUri,
          idTokenAlg: o.idTokenAlg === undefined ? undefined : o.idTokenAlg === 'default' ? null : idTokenAlgOption(o.idTokenAlg),
          grants: o.grants === false ? [] : o.grant,
        };
        if (Object.values(changes).every((v) => v === undefined)) throw new UsageError('nothing to change: give --name, --redirect-uri, --scope, --allowed-origin, --oidc/--no-oidc, --post-logout-redirect-uri, --id-token-alg or --grant/--no-grants');
        return clients.toView(await updateClientAsOperator(cliOperator(ctx), id, changes));
      }, o),
    );

  for (const [name, enabled] of [
    ['disable', false],
    ['enable', true],
  ] as const) {
    client
      .command(`${name} <client_id>`)
      .option('--json', 'print JSON')
      .action((id: string, o: { json?: boolean }) => run(async (ctx) => clients.toView(await updateClientAsOperator(cliOperator(ctx), id, { enabled })), o));
  }

  client
    .command('rotate-secret <client_id>')
    .description('issue a new secret (shown once); the old one stops working at once')
    .option('--json', 'print JSON')
    .action((id: string, o: { json?: boolean }) =>
      run(async (ctx) => {
        const { client: rotated, clientSecret } = await rotateClientSecretAsOperator(cliOperator(ctx), id);
        return clients.toView(rotated, clientSecret);
      }, o, secretView),
    );

  client
    .command('delete <client_id>')
    .description('remove an application with its grants and tokens')
    .option('--json', 'print JSON')
    .action((id: string, o: { json?: boolean }) =>
      run(async (ctx) => {
        await deleteClientAsOperator(cliOperator(ctx), id);
        return { client_id: id, deleted: true };
      }, o),
    );
}
