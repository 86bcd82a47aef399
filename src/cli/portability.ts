// signet import · signet export · signet backup (issue 35): moving people and applications in and out,
// and a consistent copy of the embedded database while the service runs.
import { createReadStream, createWriteStream, existsSync, statSync, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import type { Command } from 'commander';
import { exportAsOperator, importAsOperator } from '../admin/operator-changes.ts';
import { backupDatabase } from '../portability/backup.ts';
import { IMPORT_FORMATS, isImportFormat } from '../portability/records.ts';
import { cliOperator, describeData, loadSettingsFromProcess, openContext } from './context.ts';
import { UsageError, print, wantsJson } from './output.ts';
import { describe, fail, type Run } from './run.ts';

/** Writes the lines to the stream, waiting whenever it asks to (a large export never piles up in memory). */
async function writeAll(lines: AsyncIterable<string>, out: NodeJS.WritableStream): Promise<void> {
  for await (const line of lines) {
    if (!out.write(line)) await once(out, 'drain');
  }
}

async function closeFile(stream: WriteStream): Promise<void> {
  stream.end();
  await once(stream, 'close');
}

export function registerPortabilityCommands(program: Command, run: Run, mayCreateData: () => boolean): void {
  program
    .command('import <file>')
    .description(`create or update accounts (and, from a Signet export, applications) from a file; "-" reads standard input. Formats: ${IMPORT_FORMATS.join(', ')} (default: what the file is)`)
    .option('--format <format>', `${IMPORT_FORMATS.join(' | ')}`)
    .option('--dry-run', 'read and check everything, report what would happen, write nothing', false)
    .option('--json', 'print JSON')
    .addHelpText('after', `\nExample:\n  $ npx signet import acme-realm.json --dry-run    # a Keycloak realm export; prints {"created","updated","skipped","errors"}`)
    .action((file: string, o: { format?: string; dryRun: boolean; json?: boolean }) =>
      run(async (ctx) => {
        if (o.format !== undefined && !isImportFormat(o.format)) throw new UsageError(`--format takes ${IMPORT_FORMATS.join(', ')}; "${o.format}" is none of them`);
        if (file !== '-' && !existsSync(file)) throw new UsageError(`no file at ${file}`);
        if (file !== '-' && !statSync(file).isFile()) throw new UsageError(`${file} is not a file`);
        const input = file === '-' ? process.stdin : createReadStream(file);
        const { summary } = await importAsOperator(cliOperator(ctx), input, { format: o.format, dryRun: o.dryRun });
        return summary;
      }, o),
    );

  program
    .command('export')
    .description('every account, application and upstream provider as JSON Lines, readable by `signet import` (standard output unless --out)')
    .option('--out <file>', 'write to this file instead of standard output')
    .option('--include-secrets', 'include password hashes and application secret hashes (the file is then readable by you only)', false)
    .option('--json', 'print JSON (the summary, with --out)')
    .addHelpText('after', `\nExample:\n  $ npx signet export --include-secrets --out signet-export.jsonl    # for \`signet import\` on an instance with the same SIGNET_SECRET`)
    .action(async (o: { out?: string; includeSecrets: boolean; json?: boolean }) => {
      let ctx: Awaited<ReturnType<typeof openContext>> | undefined;
      try {
        ctx = await openContext(loadSettingsFromProcess(), { mayCreateData: mayCreateData() });
        const counts: Record<string, number> = {};
        if (o.out === undefined) {
          if (o.includeSecrets) process.stderr.write('signet: this export holds password hashes and application secret hashes; keep it where only you can read it\n');
          await writeAll(await exportAsOperator(cliOperator(ctx), { includeSecrets: o.includeSecrets }, counts), process.stdout);
        } else {
          // With secrets the file is made readable by its owner only, before anything is in it.
          const file = createWriteStream(o.out, { mode: o.includeSecrets ? 0o600 : 0o644, flags: 'w' });
          await once(file, 'open');
          await writeAll(await exportAsOperator(cliOperator(ctx), { includeSecrets: o.includeSecrets }, counts), file);
          await closeFile(file);
          if (o.includeSecrets) process.stderr.write(`signet: ${o.out} holds password hashes and application secret hashes; it is readable by you only (mode 0600)\n`);
          const summary = { out: o.out, accounts: counts['account'] ?? 0, clients: counts['client'] ?? 0, providers: counts['provider'] ?? 0, links: counts['link'] ?? 0, includes_secrets: o.includeSecrets };
          print(summary, o, {}, wantsJson(o) ? undefined : describeData(ctx.settings));
        }
      } catch (error) {
        const { message, exitCode } = describe(error);
        await ctx?.database.close().catch(() => {});
        fail(message, exitCode);
      }
      await ctx.objects.close();
      await ctx.database.close();
    });

  program
    .command('backup')
    .description('a consistent copy of the embedded SQLite database while the service runs (PostgreSQL: use pg_dump)')
    .requiredOption('--out <file>', 'where the copy goes (written beside it first, then renamed into place)')
    .option('--json', 'print JSON')
    .addHelpText('after', `\nExample:\n  $ npx signet backup --out /var/backups/signet/signet-$(date +%F).sqlite    # while serve and worker run`)
    .action((o: { out: string; json?: boolean }) => run((ctx) => backupDatabase(ctx.settings.database, o.out), o));
}
