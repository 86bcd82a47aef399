// The `signet` command.
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { AccountError } from '../accounts/accounts.ts';
import { ClientError } from '../clients/clients.ts';
import { SettingsError } from '../config/settings.ts';
import { migrate } from '../db/database.ts';
import { isUniqueViolation } from '../db/errors.ts';
import { registerClientCommands } from './client.ts';
import { loadSettingsFromProcess, openContext, type CommandContext } from './context.ts';
import { print, UsageError } from './output.ts';
import { registerUserCommands } from './user.ts';

function fail(message: string, exitCode = 1): never {
  process.stderr.write(`signet: ${message.replace(/\s*\n\s*/g, ' ')}\n`);
  process.exit(exitCode);
}

function describe(error: unknown): { message: string; exitCode: number } {
  if (error instanceof SettingsError) return { message: error.message, exitCode: 78 };
  if (error instanceof UsageError) return { message: error.message, exitCode: 2 };
  if (error instanceof AccountError || error instanceof ClientError) return { message: error.message, exitCode: 1 };
  if (isUniqueViolation(error)) return { message: 'that value is taken already', exitCode: 1 };
  const code = typeof error === 'object' && error && 'code' in error ? String((error as { code: unknown }).code) : '';
  if (code === 'ECONNREFUSED') return { message: 'cannot reach the database named by SIGNET_DATABASE_URL (connection refused)', exitCode: 69 };
  return { message: error instanceof Error ? error.message : String(error), exitCode: 1 };
}

/**
 * Ids issued before client_ids became hex may begin with "-", which the parser reads as an option.
 * Such an "unknown option" is long and made of base64url characters: say how to pass it.
 */
function explainUnknownOption(message: string): string {
  const id = /^unknown option '(-[A-Za-z0-9_-]{15,})'$/.exec(message)?.[1];
  if (id === undefined) return message;
  return `${message}; if ${id} is an id, put -- before it: signet … [options] -- ${id}`;
}

/** Runs one command against an opened context, prints its result, closes everything. */
async function run(action: (ctx: CommandContext) => Promise<unknown>, options: { json?: boolean }): Promise<void> {
  let ctx: CommandContext | undefined;
  try {
    ctx = await openContext();
    const result = await action(ctx);
    print(result, options);
  } catch (error) {
    const { message, exitCode } = describe(error);
    await ctx?.database.close().catch(() => {});
    fail(message, exitCode);
  }
  await ctx.database.close();
}

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

const program = new Command('signet')
  .description('Signet: a self-hostable OAuth 2.0 sign-in provider')
  .version(version, '-V, --version', 'print the version')
  .exitOverride()
  .configureOutput({ writeErr: (text) => process.stderr.write('signet: ' + explainUnknownOption((text.split('\n').filter(Boolean)[0] ?? '').replace(/^error: /, '')) + '\n') })
  .showSuggestionAfterError(false);

program
  .command('serve')
  .description('run the HTTP service')
  .action(async () => {
    try {
      // Loaded here, so the management commands do not load the web app.
      const { startServer } = await import('../web/server.ts');
      const server = await startServer(loadSettingsFromProcess());
      for (const signal of ['SIGTERM', 'SIGINT'] as const) {
        process.once(signal, () => {
          server.close().then(
            () => process.exit(0),
            () => process.exit(1),
          );
        });
      }
    } catch (error) {
      const { message, exitCode } = describe(error);
      fail(message, exitCode);
    }
  });

program
  .command('worker')
  .description('run background work: task execution and e-mail delivery')
  .option('--only <kind>', 'tasks or email')
  .action(async (o: { only?: string }) => {
    if (o.only !== undefined && o.only !== 'tasks' && o.only !== 'email') fail('--only takes tasks or email', 2);
    try {
      const ctx = await openContext();
      const { startWorker } = await import('../worker/worker.ts');
      const { createLogger } = await import('../web/logging.ts');
      const kinds = o.only ? [o.only as 'tasks' | 'email'] : (['tasks', 'email'] as const).slice();
      const worker = startWorker({ settings: ctx.settings, database: ctx.database, clock: ctx.clock, logger: createLogger(ctx.settings.logLevel), kinds });
      for (const signal of ['SIGTERM', 'SIGINT'] as const) {
        // spec'd by the tasks issue: "SIGTERM: finish or give back the current task, then exit"
        process.once(signal, () => {
          worker
            .stop()
            .then(() => ctx.database.close())
            .then(
              () => process.exit(0),
              () => process.exit(1),
            );
        });
      }
    } catch (error) {
      const { message, exitCode } = describe(error);
      fail(message, exitCode);
    }
  });

program
  .command('migrate')
  .description('bring the database schema up to date')
  .option('--json', 'print JSON')
  .action((o: { json?: boolean }) =>
    run(async (ctx) => ({ database: ctx.database.dialect, applied: await migrate(ctx.database.db), status: 'up to date' }), o),
  );

registerClientCommands(program, run);
registerUserCommands(program, run);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) process.exit(error.exitCode === 0 ? 0 : 2);
  const { message, exitCode } = describe(error);
  fail(message, exitCode);
}
