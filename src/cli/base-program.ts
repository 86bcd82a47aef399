// The `signet` program before its commands are added, shared by the full command set (program.ts) and
// the lean entry of `signet parse` (parse-main.ts), so both read the same way: name, help, version,
// errors as one `signet: …` line.
import { readFileSync } from 'node:fs';
import { Command } from 'commander';

/**
 * Ids issued before client_ids became hex may begin with "-", which the parser reads as an option.
 * Such an "unknown option" is long and made of base64url characters: say how to pass it.
 */
function explainUnknownOption(message: string): string {
  const id = /^unknown option '(-[A-Za-z0-9_-]{15,})'$/.exec(message)?.[1];
  if (id === undefined) return message;
  return `${message}; if ${id} is an id, put -- before it: signet … [options] -- ${id}`;
}

export const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

/** The `signet` program itself, its commands not yet added: name, help, version, how errors read, the global --init. */
export function signetProgram(): Command {
  return new Command('signet')
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
}
