// signet api-key …: a person's API keys for the document APIs (issue 40). `create` prints
// {"id","key","name","expires_at"}: the key is shown once and stored only as a keyed hash; `revoke`
// stops it at once.
import type { Command } from 'commander';
import { createApiKey, listApiKeys, revokeApiKey } from '../accounts/api-keys/api-keys.ts';
import { findAccountByEmail } from '../accounts/accounts.ts';
import { recordAudit } from '../audit/audit.ts';
import type { Db } from '../db/database.ts';
import { shortTime, UsageError, type HumanView } from './output.ts';
import type { Run } from './run.ts';

const listView: HumanView = {
  columns: [
    { header: 'id', value: (k) => k.id },
    { header: 'name', value: (k) => k.name },
    { header: 'created', value: (k) => shortTime(k.created_at) },
    { header: 'last used', value: (k) => shortTime(k.last_used_at) },
    { header: 'expires', value: (k) => shortTime(k.expires_at) },
    { header: 'revoked', value: (k) => shortTime(k.revoked_at) },
  ],
};

async function personByEmail(db: Db, email: string): Promise<string> {
  const person = await findAccountByEmail(db, email);
  if (!person) throw new UsageError(`no account with the e-mail address ${email}; \`signet user list\` shows them`);
  return person.sub;
}

export function registerApiKeyCommands(program: Command, run: Run): void {
  const apiKey = program
    .command('api-key')
    .description("a person's API keys for the document APIs (docling-serve-compatible /v1/convert, the task API): create, list, revoke")
    .addHelpText('after', `\nExample:\n  $ npx signet api-key create --email ada@example.com --name "Open WebUI" --expires-in 90    # prints {"id","key","name","expires_at"}; the key is shown once`);

  apiKey
    .command('create')
    .description('create an API key for a person (printed once; Signet keeps only a hash)')
    .requiredOption('--email <email>', "the person's e-mail address")
    .requiredOption('--name <name>', 'what uses the key (required)')
    .option('--expires-in <days>', 'days until the key stops working (default: never)')
    .option('--json', 'print JSON')
    .action((o: { email: string; name: string; expiresIn?: string; json?: boolean }) =>
      run(
        async (ctx) => {
          const days = o.expiresIn === undefined ? undefined : /^\d{1,5}$/.test(o.expiresIn) ? Number(o.expiresIn) : Number.NaN;
          if (Number.isNaN(days)) throw new UsageError('--expires-in is a whole number of days, e.g. --expires-in 90');
          const sub = await personByEmail(ctx.database.db, o.email);
          const created = await createApiKey(ctx.database.db, ctx.clock, ctx.keys.tokenHash, { sub, name: o.name, expiresInDays: days });
          await recordAudit(ctx.database.db, ctx.clock, { type: 'api_key.created', sub, outcome: 'success', actor: 'cli', detail: { api_key_id: created.id } });
          return created;
        },
        o,
        { secretField: 'key' },
      ),
    );

  apiKey
    .command('list')
    .description("a person's API keys, with when each was last used, when it expires and whether it is revoked (never the key)")
    .requiredOption('--email <email>', "the person's e-mail address")
    .option('--json', 'print JSON')
    .action((o: { email: string; json?: boolean }) => run(async (ctx) => listApiKeys(ctx.database.db, await personByEmail(ctx.database.db, o.email)), o, listView));

  apiKey
    .command('revoke <id>')
    .description('stop an API key from working, at once')
    .option('--json', 'print JSON')
    .action((id: string, o: { json?: boolean }) =>
      run(async (ctx) => {
        const revoked = await revokeApiKey(ctx.database.db, ctx.clock, id);
        await recordAudit(ctx.database.db, ctx.clock, { type: 'api_key.revoked', sub: revoked.sub, outcome: 'success', actor: 'cli', detail: { api_key_id: revoked.id } });
        const { sub: _owner, ...view } = revoked;
        return view;
      }, o),
    );
}
