// `signet parse` on its own: the same program (base-program.ts) with only the parse command, so parsing
// local files does not load the sign-in service (accounts, OAuth, the database layer — half a
// CPU-second of module loading in every `signet parse` run). bin/signet.js chooses this entry when
// the first argument is `parse`; every other command goes through main.ts (program.ts).
import { CommanderError } from 'commander';
import { fail } from './exit.ts';
import { UsageError } from './output.ts';
import { registerParseCommand } from './parse.ts';
import { signetProgram } from './base-program.ts';

const program = signetProgram();
registerParseCommand(program);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) process.exit(error.exitCode === 0 ? 0 : 2);
  // As run.ts's describe() says them: a usage error exits 2, anything else 1.
  fail(error instanceof Error ? error.message : String(error), error instanceof UsageError ? 2 : 1);
}
