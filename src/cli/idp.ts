// signet idp …: upstream identity providers (issue 33). The client secret is read from standard input
// (--client-secret-stdin), sealed, and never printed; `add` prints the redirect URI to register upstream.
import type { Command } from 'commander';
import { addProviderAsOperator, removeProviderAsOperator, updateProviderAsOperator } from '../admin/operator-changes.ts';
import { getProvider, listProviders, toProviderView, type ProviderChanges } from '../accounts/upstream/providers.ts';
import { cliOperator, type CommandContext } from './context.ts';
import { readStdin, shortTime, UsageError, type HumanView } from './output.ts';
import type { Run } from './run.ts';

const listView: HumanView = {
  columns: [
    { header: 'slug', value: (p) => p.slug },
    { header: 'name', value: (p) => p.name },
    { header: 'issuer', value: (p) => p.issuer },
    { header: 'enabled', value: (p) => p.enabled },
    { header: 'redirect_uri', value: (p) => p.redirect_uri },
    { header: 'created', value: (p) => shortTime(p.created_at) },
  ],
};

const view = (ctx: CommandContext) => (provider: Parameters<typeof toProviderView>[0]) => toProviderView(provider, ctx.settings.baseUrl);

async function secretFromStdin(given: boolean | undefined): Promise<string | undefined> {
  if (!given) return undefined;
  return readStdin();
}

export function registerIdpCommands(program: Command, run: Run): void {
  const idp = program
    .command('idp')
    .description('upstream identity providers people can sign in with: add, list, show, update, disable, enable, remove')
    .addHelpText('after', `\nExample:\n  $ printf '%s' "$GITHUB_CLIENT_SECRET" | npx signet idp add github --preset github --client-id Iv1.0123456789abcdef --client-secret-stdin`);

  idp
    .command('add <slug>')
    .description('add an OpenID Provider (--issuer, through its discovery document) or a preset (--preset github|google|entra|microsoft|gitlab|keycloak); prints the redirect URI to register there')
    .option('--issuer <url>', 'the OpenID Provider\'s issuer (https; for --preset github, a GitHub Enterprise Server address)')
    .option('--preset <name>', 'github, google, entra (or microsoft), gitlab, keycloak')
    .option('--tenant <tenant>', 'Microsoft Entra ID: the tenant id or domain (with --preset entra)')
    .requiredOption('--client-id <id>', 'the client id the upstream gave this Signet (required)')
    .option('--client-secret-stdin', 'read the client secret from standard input (required)', false)
    .option('--name <name>', 'shown on the sign-in page as "Sign in with NAME" (default: the preset\'s name, else the slug)')
    .option('--scope <scope>', 'requested scopes (default "openid email profile"; GitHub: "read:user user:email")')
    .option('--json', 'print JSON')
    .action((slug: string, o: { issuer?: string; preset?: string; tenant?: string; clientId: string; clientSecretStdin: boolean; name?: string; scope?: string; json?: boolean }) =>
      run(async (ctx) => {
        if (!o.clientSecretStdin) throw new UsageError('--client-secret-stdin is required: the client secret is read from standard input, never from the command line');
        if (o.issuer === undefined && o.preset === undefined) throw new UsageError('give --issuer URL (an OpenID Provider) or --preset NAME');
        const clientSecret = await readStdin();
        const added = await addProviderAsOperator(cliOperator(ctx), ctx.keys.upstreamSecret, { slug, issuer: o.issuer, preset: o.preset, tenant: o.tenant, clientId: o.clientId, clientSecret, name: o.name, scope: o.scope });
        return view(ctx)(added);
      }, o),
    );

  idp
    .command('list')
    .description('every provider (secrets are never shown)')
    .option('--json', 'print JSON')
    .action((o: { json?: boolean }) => run(async (ctx) => (await listProviders(ctx.database.db)).map(view(ctx)), o, listView));

  idp
    .command('show <slug>')
    .option('--json', 'print JSON')
    .action((slug: string, o: { json?: boolean }) => run(async (ctx) => view(ctx)(await getProvider(ctx.database.db, slug)), o));

  idp
    .command('update <slug>')
    .description('change a provider: --name, --issuer, --client-id, --scope, or a new secret with --client-secret-stdin')
    .option('--name <name>')
    .option('--issuer <url>')
    .option('--client-id <id>')
    .option('--client-secret-stdin', 'read a new client secret from standard input', false)
    .option('--scope <scope>')
    .option('--json', 'print JSON')
    .action((slug: string, o: { name?: string; issuer?: string; clientId?: string; clientSecretStdin: boolean; scope?: string; json?: boolean }) =>
      run(async (ctx) => {
        const changes: ProviderChanges = { name: o.name, issuer: o.issuer, clientId: o.clientId, scope: o.scope, clientSecret: await secretFromStdin(o.clientSecretStdin) };
        if (Object.values(changes).every((v) => v === undefined)) throw new UsageError('nothing to change: give --name, --issuer, --client-id, --scope or --client-secret-stdin');
        return view(ctx)(await updateProviderAsOperator(cliOperator(ctx), ctx.keys.upstreamSecret, slug, changes));
      }, o),
    );

  for (const [name, enabled, what] of [
    ['disable', false, 'hide the provider\'s button and refuse its sign-ins (links are kept)'],
    ['enable', true, 'show the provider again'],
  ] as const) {
    idp
      .command(`${name} <slug>`)
      .description(what)
      .option('--json', 'print JSON')
      .action((slug: string, o: { json?: boolean }) => run(async (ctx) => view(ctx)(await updateProviderAsOperator(cliOperator(ctx), ctx.keys.upstreamSecret, slug, { enabled })), o));
  }

  idp
    .command('remove <slug>')
    .description('remove the provider with every identity linked through it')
    .option('--json', 'print JSON')
    .action((slug: string, o: { json?: boolean }) =>
      run(async (ctx) => {
        await removeProviderAsOperator(cliOperator(ctx), slug);
        return { slug, removed: true };
      }, o),
    );
}
