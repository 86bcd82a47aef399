// What the commands that work on local files (`signet parse`, `signet translate`) share: a result's
// name, why a file could not be read, the --out check, and the progress line on a terminal.
import { stat } from 'node:fs/promises';
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
