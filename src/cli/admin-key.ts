// signet admin-key …: operator keys for the admin API. `create` prints {"id","key"}: the key is shown
// once and stored only as a keyed hash; `revoke` stops it at once.
import type { Command } from 'commander';
import { createAdminKey, listAdminKeys, revokeAdminKey } from '../admin/admin-keys.ts';
import { recordAudit } from '../audit/audit.ts';
import { shortTime, type HumanView } from './output.ts';
import type { Run } from './run.ts';

const listView: HumanView = {
  columns: [
    { header: 'id', value: (k) => k.id },
    { header: 'name', value: (k) => k.name },
    { header: 'created', value: (k) => shortTime(k.created_at) },
    { header: 'last used', value: (k) => shortTime(k.last_used_at) },
    { header: 'revoked', value: (k) => shortTime(k.revoked_at) },
  ],
};

export function registerAdminKeyCommands(program: Command, run: Run): void {
  const adminKey = program
    .command('admin-key')
    .description('operator keys for the admin API: create, list, revoke')
    .addHelpText('after', `\nExample:\n  $ npx signet admin-key create --name "ops laptop"    # prints {"id","key"}; the key is shown once`);

  adminKey
    .command('create')
    .description('create an operator key (printed once; Signet keeps only a hash)')
    .requiredOption('--name <name>', 'who or what uses the key (required)')
    .option('--json', 'print JSON')
    .action((o: { name: string; json?: boolean }) =>
      run(
        async (ctx) => {
          const created = await createAdminKey(ctx.database.db, ctx.clock, ctx.keys.tokenHash, o.name);
          // No log line: this command's stdout is its answer.
          await recordAudit(ctx.database.db, ctx.clock, { type: 'admin_key.created', outcome: 'success', actor: 'cli', detail: { key_id: created.id } });
          return created;
        },
        o,
        { secretField: 'key' },
      ),
    );

  adminKey
    .command('list')
    .description('every operator key, with when it was last used and whether it is revoked (never the key)')
    .option('--json', 'print JSON')
    .action((o: { json?: boolean }) => run(async (ctx) => listAdminKeys(ctx.database.db), o, listView));

  adminKey
    .command('revoke <id>')
    .description('stop an operator key from working, at once')
    .option('--json', 'print JSON')
    .action((id: string, o: { json?: boolean }) =>
      run(async (ctx) => {
        const revoked = await revokeAdminKey(ctx.database.db, ctx.clock, id);
        await recordAudit(ctx.database.db, ctx.clock, { type: 'admin_key.revoked', outcome: 'success', actor: 'cli', detail: { key_id: revoked.id } });
        return revoked;
      }, o),
    );
}
