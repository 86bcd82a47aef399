// The `signet` command: every command group registered on one commander program, not yet run
// (main.ts parses the arguments; scripts/docs-cli.ts reads every command's help from it in one process).
import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { migrate } from '../db/database.ts';
import { registerAdminKeyCommands } from './admin-key.ts';
import { registerApiKeyCommands } from './api-key.ts';
import { registerAuditCommands } from './audit.ts';
import { registerClientCommands } from './client.ts';
import { registerIdpCommands } from './idp.ts';
import { registerKeysCommands } from './keys.ts';
import { registerMcpCommand } from './mcp.ts';
import { loadSettingsFromProcess, openContext } from './context.ts';
import { registerLoginCommands } from './login.ts';
import { registerParseCommand } from './parse.ts';
import { registerPortabilityCommands } from './portability.ts';
import { registerTranslateCommand } from './translate.ts';
import { describe, fail, makeRun } from './run.ts';
import { registerUserCommands } from './user.ts';

/**
 * Ids issued before client_ids became hex may begin with "-", which the parser reads as an option.
 * Such an "unknown option" is long and made of base64url characters: say how to pass it.
 */
function explainUnknownOption(message: string): string {
  const id = /^unknown option '(-[A-Za-z0-9_-]{15,})'$/.exec(message)?.[1];
  if (id === undefined) return message;
  return `${message}; if ${id} is an id, put -- before it: signet … [options] -- ${id}`;
}

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

export const program = new Command('signet')
  .description(
    'Signet: a self-hostable sign-in provider (OAuth 2.0 and OpenID Connect: applications sign people in with their account here) ' +
      'and a PDF parsing and translation service (PDFs into Markdown and docling JSON, or translated into their own page layout)',
  )
  .addHelpText(
    'after',
    `
Examples:
  $ npm start                                    # signet serve: the web service on http://localhost:8080
  $ npx signet client create --name "Example App" --redirect-uri https://app.example.com/callback
  $ npx signet parse paper.pdf --out parsed/     # a PDF on this machine into Markdown and JSON, no server

Run it from the checkout as npx signet … (npx uses the Node 24 that npm install brought).
Every command has --help with an example; the guides are in docs/ (docs/operations/cli.md lists every command).`,
  )
  .version(version, '-V, --version', 'print the version')
  .exitOverride()
  .configureOutput({ writeErr: (text) => process.stderr.write('signet: ' + explainUnknownOption((text.split('\n').filter(Boolean)[0] ?? '').replace(/^error: /, '')) + '\n') })
  .showSuggestionAfterError(false)
  .option('--init', 'allow creating a new, empty data dir (otherwise only serve, worker and migrate do)');

/** How much longer than its processes' own deadline the `serve --processes` primary waits before killing them. */
const CLUSTER_SHUTDOWN_MARGIN_MS = 5_000;

const run = makeRun(() => program.opts<{ init?: boolean }>().init === true);

program
  .command('serve')
  .description('run the HTTP service: the sign-in provider, the account and task pages, the APIs')
  .addHelpText('after', `\nExample:\n  $ SIGNET_BASE_URL=https://id.example.com SIGNET_HOST=0.0.0.0 npx signet serve --processes 2`)
  .option('--processes <n>', 'server processes on this host, sharing its port (default 1)')
  .action(async (o: { processes?: string }) => {
    const processes = o.processes === undefined ? 1 : Number(o.processes);
    if (!Number.isInteger(processes) || processes < 1 || processes > 64) fail('--processes takes a whole number from 1 to 64', 2);
    try {
      // Loaded here, so the management commands do not load the web app.
      const settings = loadSettingsFromProcess();
      const serve = async () => {
        const { startServer } = await import('../web/server.ts');
        const { shutDownOnSignal, trackConnections } = await import('../web/shutdown.ts');
        const server = await startServer(settings);
        const connections = trackConnections(server.app.server);
        for (const signal of ['SIGTERM', 'SIGINT'] as const) {
          // Stop accepting, let kept-alive connections end cleanly, finish in flight; exit by the deadline.
          process.once(signal, () => shutDownOnSignal(connections, () => server.close(), (line) => process.stderr.write(line + '\n'), settings.shutdownMs));
        }
      };
      if (processes === 1) {
        await serve();
      } else {
        const { runCluster } = await import('../web/cluster.ts');
        // The primary gives its processes their own deadline and a little more before it kills them.
        await runCluster({ processes, serve, metrics: settings.metrics, shutdownDeadlineMs: settings.shutdownMs + CLUSTER_SHUTDOWN_MARGIN_MS, log: (line) => process.stderr.write(line + '\n') });
      }
      const cluster = await import('node:cluster');
      if (cluster.default.isPrimary) process.stderr.write(firstRunLine(settings, processes) + '\n');
    } catch (error) {
      const { message, exitCode } = describe(error);
      fail(message, exitCode);
    }
  });

/** The one human line `serve` prints (on stderr, so stdout stays JSON log lines): where to go next. */
function firstRunLine(settings: ReturnType<typeof loadSettingsFromProcess>, processes: number): string {
  const at = (a: { host: string; port: number } | 'off') => (a === 'off' ? 'off' : `${a.host.includes(':') ? `[${a.host}]` : a.host}:${a.port}`);
  const database = settings.database.kind === 'sqlite' ? settings.dataDir : 'PostgreSQL';
  return (
    `Signet ${version} is serving ${settings.baseUrl.origin}${processes > 1 ? ` with ${processes} processes` : ''} — data: ${database}; ` +
    `metrics: ${at(settings.metrics)}; admin API: ${at(settings.admin)}. ` +
    `Next, register an application: npx signet client create --name "My App" --redirect-uri https://app.example/callback`
  );
}

program
  .command('worker')
  .description('run background work: task execution and e-mail delivery')
  .addHelpText('after', `\nExample:\n  $ SIGNET_TRANSLATE_ENGINE=apertium npx signet worker --only tasks    # PDF tasks, translating with Apertium`)
  .option('--only <kind>', 'tasks or email')
  .action(async (o: { only?: string }) => {
    if (o.only !== undefined && o.only !== 'tasks' && o.only !== 'email') fail('--only takes tasks or email', 2);
    try {
      const ctx = await openContext(loadSettingsFromProcess(), { mayCreateData: true });
      const { startWorker } = await import('../worker/worker.ts');
      const { createLogger } = await import('../web/logging.ts');
      const kinds = o.only ? [o.only as 'tasks' | 'email'] : (['tasks', 'email'] as const).slice();
      const worker = startWorker({ settings: ctx.settings, database: ctx.database, clock: ctx.clock, logger: createLogger(ctx.settings.logLevel), kinds });
      for (const signal of ['SIGTERM', 'SIGINT'] as const) {
        // spec'd by the tasks issue: "SIGTERM: finish or give back the current task, then exit"
        process.once(signal, () => {
          // The current task is given back; should that hang, its lease gives it back after the deadline.
          process.stderr.write(`signet: worker stopping (pid ${process.pid}): claiming nothing new; giving back the current task, at most ${ctx.settings.shutdownMs / 1000} s\n`);
          setTimeout(() => {
            process.stderr.write(`signet: worker still stopping after ${ctx.settings.shutdownMs / 1000} s; exiting anyway\n`);
            process.exit(1);
          }, ctx.settings.shutdownMs).unref();
          worker
            .stop()
            .then(() => ctx.database.close())
            .then(
              () => {
                process.stderr.write(`signet: worker stopped (pid ${process.pid})\n`);
                process.exit(0);
              },
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
  .addHelpText('after', `\nExample:\n  $ SIGNET_DATABASE_URL=postgres://signet@db.example.com/signet npx signet migrate`)
  .option('--json', 'print JSON')
  .action((o: { json?: boolean }) =>
    makeRun(() => true)(async (ctx) => ({ database: ctx.database.dialect, applied: [...ctx.migrationsApplied, ...(await migrate(ctx.database.db))], status: 'up to date' }), o),
  );

registerClientCommands(program, run);
registerUserCommands(program, run);
registerAdminKeyCommands(program, run);
registerApiKeyCommands(program, run);
registerAuditCommands(program, run);
registerParseCommand(program);
registerTranslateCommand(program);
registerLoginCommands(program);
registerMcpCommand(program);
registerKeysCommands(program, run);
registerPortabilityCommands(program, run, () => program.opts<{ init?: boolean }>().init === true);
registerIdpCommands(program, run);
