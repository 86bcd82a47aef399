// Command output: one JSON value on stdout with --json or when stdout is not a terminal;
// failures are one line on stderr and a non-zero exit.

export class UsageError extends Error {
  override name = 'UsageError';
}

export function wantsJson(options: { json?: boolean }): boolean {
  return options.json === true || !process.stdout.isTTY;
}

export function print(value: unknown, options: { json?: boolean }): void {
  process.stdout.write(wantsJson(options) ? JSON.stringify(value) + '\n' : JSON.stringify(value, null, 2) + '\n');
}

/** Reads the whole of standard input; one trailing newline (as `echo` adds) is not part of the value. */
export async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) throw new UsageError('--password-stdin reads the password from standard input; pipe it in, e.g. printf %s "$PASSWORD" | signet …');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}
