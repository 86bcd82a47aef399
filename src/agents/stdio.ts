// `signet mcp`: the tool registry over stdio for a desktop agent (Claude Desktop, VS Code, …) on this
// machine's files, bound to the local back-end. stdout carries the protocol and nothing else: every
// word for a person goes to stderr.
import { createAgentServer } from './registry.ts';
import { createLocalBackend, type LocalBackendOptions } from './local-backend.ts';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';

const INSTRUCTIONS = [
  'Signet parses and translates PDF files on this machine, with no server and no account.',
  'parse_pdf returns a PDF\'s Markdown; translate_pdf writes translated PDFs and returns them as file:// resource links.',
  'Give a PDF by its path. Results stay in the output folder; list_tasks and get_task find them again.',
].join(' ');

/** Serves until stdin closes; resolves then. */
export async function serveStdio(options: LocalBackendOptions & { version: string }): Promise<void> {
  const backend = createLocalBackend(options);
  const server = createAgentServer(backend, {
    name: 'signet',
    version: options.version,
    instructions: INSTRUCTIONS,
    // On your own machine the reason itself is the most useful answer (a program missing, a disk full).
    unexpected: (error) => {
      const message = error instanceof Error ? error.message.split('\n', 1)[0]! : String(error);
      process.stderr.write(`signet mcp: ${message}\n`);
      return message;
    },
  });
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = resolve;
    process.stdin.once('end', resolve);
  });
  await server.connect(transport);
  process.stderr.write(`signet mcp: ready on stdio; results in ${options.out}\n`);
  // Someone ran it by hand: say who it is for, rather than sit silent.
  if (process.stdin.isTTY) process.stderr.write('signet mcp: an AI agent starts this command and talks to it on stdin and stdout (see signet mcp --help); Ctrl-D or Ctrl-C ends it.\n');
  await closed;
  await server.close().catch(() => {});
}
