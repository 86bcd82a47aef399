// What the commands that work on local files (`signet parse`, `signet translate`) share: a result's
// name, why a file could not be read, the --out check, and the progress line on a terminal.
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { UsageError } from './output.ts';

/** `--out` may be missing (it is created) or a folder; a file there would fail every input after working on it. */
export async function checkOutFolder(out: string): Promise<void> {
  const found = await stat(out).catch(() => undefined);
  if (found && !found.isDirectory()) throw new UsageError(`--out ${out} is a file, not a folder; choose another --out`);
}

/** A result's name: the input's file name without `.pdf`. */
export function resultName(input: string): string {
  const base = path.basename(input);
  return base.replace(/\.pdf$/i, '') || base;
}

/** Why a file could not be read, in one line. */
export function readFailure(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EISDIR') return 'a folder, not a PDF file';
  if (code === 'EACCES' || code === 'EPERM') return 'cannot be read (permission denied)';
  return error instanceof Error ? error.message : String(error);
}

/** An input file's bytes; a file that cannot be read throws with its one-line reason (readFailure). */
export async function readInput(input: string): Promise<Buffer> {
  try {
    return await readFile(input);
  } catch (error) {
    throw new Error(readFailure(error));
  }
}

export const oneLine = (text: string) => text.replace(/\s*\n\s*/g, ' ').trim();

export const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** A terminal's progress line: rewritten in place while the file runs. */
export class ProgressLine {
  private readonly on = process.stderr.isTTY === true;
  show(text: string): void {
    if (this.on) process.stderr.write(`\r\x1b[K${text}`);
  }
  /** Ends the line with its final text (on a terminal only). */
  end(text: string): void {
    if (this.on) process.stderr.write(`\r\x1b[K${text}\n`);
  }
  /** Clears it, so a failure's line stands alone. */
  clear(): void {
    if (this.on) process.stderr.write('\r\x1b[K');
  }
}

/** What a command says of a file that failed. */
export type Failed = { input: string; error: string };

/**
 * Runs `work` on each input in turn, as `signet parse` and `signet translate` do: a progress line on
 * a terminal, a failed file's one-line reason on stderr while the others still run, a second input
 * whose results would overwrite the first's refused, and Ctrl-C (or SIGTERM) stopping after nothing
 * of the file in progress was written (exit 130). `past` names what was done ("parsed").
 */
export async function runEachInput<R extends { input: string; notes: string[] }>(
  inputs: string[],
  options: { out?: string; verb: string; past: string },
  work: (input: string, signal: AbortSignal, progress: ProgressLine) => Promise<R>,
  doneLine: (result: R) => string,
): Promise<Array<R | Failed>> {
  const controller = new AbortController();
  const interrupt = () => controller.abort(new Error('interrupted'));
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);
  const progress = new ProgressLine();
  const results: Array<R | Failed> = [];
  // Two inputs of one name would write the same results: the second fails instead of overwriting.
  const claimed = new Map<string, string>();
  for (const input of inputs) {
    if (controller.signal.aborted) break;
    const key = path.resolve(options.out ?? path.dirname(input), resultName(input));
    const earlier = claimed.get(key);
    try {
      if (earlier !== undefined) throw new Error(`its results would overwrite those of ${earlier} (same name, same folder); ${options.verb} it on its own with another --out`);
      claimed.set(key, input);
      const result = await work(input, controller.signal, progress);
      progress.end(doneLine(result));
      if (process.stderr.isTTY) for (const note of result.notes) process.stderr.write(`  note: ${note}\n`);
      results.push(result);
    } catch (error) {
      progress.clear();
      if (controller.signal.aborted) break;
      const reason = oneLine(error instanceof Error ? error.message : String(error));
      process.stderr.write(`signet: ${input}: ${reason}\n`);
      results.push({ input, error: reason });
    }
  }
  const { killSpareReader } = await import('../documents/pdf/reader-client.ts');
  await killSpareReader();
  if (controller.signal.aborted) {
    progress.clear();
    const { fail } = await import('./run.ts');
    fail(`interrupted; ${results.filter((r) => !('error' in r)).length} of ${inputs.length} files were ${options.past}; nothing of the file in progress was written`, 130);
  }
  return results;
}
