// A command's failure as one line on stderr and its exit code; light enough for `signet parse`'s lean
// entry (parse-main.ts), which loads none of the sign-in service.
export function fail(message: string, exitCode = 1): never {
  process.stderr.write(`signet: ${message.replace(/\s*\n\s*/g, ' ')}\n`);
  process.exit(exitCode);
}
