// The `signet` command run: the program of program.ts, given this process's arguments.
import { CommanderError } from 'commander';
import { program } from './program.ts';
import { describe, fail } from './run.ts';

try {
  // Bare `signet`: the command list on stdout, exit 0 (commander would print it on stderr and exit 1).
  if (process.argv.length <= 2) program.help();
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) process.exit(error.exitCode === 0 ? 0 : 2);
  const { message, exitCode } = describe(error);
  fail(message, exitCode);
}
