// `signet mcp`: the MCP tools on files of this machine, over stdio, for a desktop agent — like
// docling-mcp's stdio mode: no server, no database, no sign-in. An agent starts it as a command.
// stdout is the protocol; messages go to stderr.
import { readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import type { Command } from 'commander';
import { checkOutFolder } from './local-files.ts';
import { fail } from './run.ts';
import { chooseTranslator } from './translate.ts';
import { threadsOf } from './parse.ts';

type McpOptions = { out?: string; maxMb: string; threads?: string };

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

/** The default results folder: one per user under the system's temporary folder. */
export const defaultOutFolder = () => path.join(tmpdir(), `signet-mcp-${userInfo().username}`);

async function mcpCommand(o: McpOptions): Promise<void> {
  const out = path.resolve(o.out ?? defaultOutFolder());
  const maxMb = Number(o.maxMb);
  let threads: number;
  try {
    if (!/^\d{1,5}$/.test(o.maxMb) || maxMb < 1) throw new Error(`--max-mb takes a whole number of megabytes, 1 or more (not "${o.maxMb}")`);
    await checkOutFolder(out);
    await mkdir(out, { recursive: true, mode: 0o700 });
    threads = await threadsOf(o.threads);
  } catch (error) {
    fail(error instanceof Error ? error.message : String(error), 2);
  }
  const { serveStdio } = await import('../agents/stdio.ts');
  let translator: ReturnType<typeof chooseTranslator> | undefined;
  await serveStdio({ out, maxPdfBytes: maxMb * 1024 * 1024, threads, cwd: process.cwd(), version, translator: () => (translator ??= chooseTranslator(undefined)) });
  const { killSpareReader } = await import('../documents/pdf/reader-client.ts');
  await killSpareReader();
  process.exit(0);
}

export function registerMcpCommand(program: Command): void {
  program
    .command('mcp')
    .description('serve the document tools (parse_pdf, translate_pdf, list_tasks, get_task) to an AI agent over stdio, on files of this machine (no server, no database)')
    .option('--out <dir>', 'where each call\'s results go (a folder per call); created when missing (default: signet-mcp-USER in the temporary folder)')
    .option('--max-mb <n>', 'the largest PDF the tools take, in megabytes', '50')
    .option('--threads <n>', 'reader processes for one document (default: SIGNET_PARSE_THREADS, else the cores up to 4)')
    .addHelpText(
      'after',
      `\nExample:\n  $ npx signet mcp --out ~/signet-results    # started by an agent, which talks to it on stdin/stdout\n\nIn Claude Desktop's claude_desktop_config.json (the checkout's Node 24, by its full path):\n  {"mcpServers": {"signet": {"command": "/path/to/signet/node_modules/.bin/node", "args": ["/path/to/signet/bin/signet.js", "mcp"]}}}\nTranslations use SIGNET_TRANSLATE_ENGINE (and _URL, _MODEL, _API_KEY) from the environment, else Apertium.`,
    )
    .action((o: McpOptions) => mcpCommand(o));
}
