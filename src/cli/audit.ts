// signet audit list: the audit trail, newest first.
import type { Command } from 'commander';
import { listAuditEvents, MAX_AUDIT_PAGE } from '../audit/audit.ts';
import { shortTime, UsageError, type HumanView } from './output.ts';
import type { Run } from './run.ts';

const listView: HumanView = {
  columns: [
    { header: 'id', value: (e) => e.id },
    { header: 'at', value: (e) => shortTime(e.at) },
    { header: 'type', value: (e) => e.type },
    { header: 'outcome', value: (e) => e.outcome },
    { header: 'sub', value: (e) => e.sub },
    { header: 'client_id', value: (e) => e.client_id },
    { header: 'ip', value: (e) => e.ip },
    { header: 'actor', value: (e) => e.actor },
  ],
};

const TYPE_PATTERN = /^[a-z_]+(\.[a-z_]+){0,2}\.([a-z_]+|\*)$/;

export function registerAuditCommands(program: Command, run: Run): void {
  const audit = program
    .command('audit')
    .description('the audit trail: list')
    .addHelpText('after', `\nExample:\n  $ npx signet audit list --type 'signin.*' --limit 20    # newest first`);

  audit
    .command('list')
    .description('audit events, newest first')
    .option('--sub <sub>', 'only events about this account')
    .option('--client-id <client_id>', 'only events about this application')
    .option('--type <type>', 'only this type (e.g. signin.failed) or family (e.g. account.*)')
    .option('--limit <n>', `at most this many events (1 to ${MAX_AUDIT_PAGE})`, '50')
    .option('--json', 'print JSON')
    .action((o: { sub?: string; clientId?: string; type?: string; limit: string; json?: boolean }) =>
      run(
        async (ctx) => {
          const limit = Number(o.limit);
          if (!/^\d+$/.test(o.limit) || limit < 1 || limit > MAX_AUDIT_PAGE) throw new UsageError(`--limit takes a whole number from 1 to ${MAX_AUDIT_PAGE}`);
          if (o.type !== undefined && !TYPE_PATTERN.test(o.type)) throw new UsageError(`--type takes an event type such as signin.failed, or a family such as account.*; "${o.type}" is neither`);
          const page = await listAuditEvents(ctx.database.db, { sub: o.sub, clientId: o.clientId, type: o.type }, { limit });
          return page.events;
        },
        o,
        listView,
      ),
    );
}
