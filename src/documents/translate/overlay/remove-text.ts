// Removing a PDF's text while keeping everything else (images, vector drawings, table rules,
// backgrounds) exactly: Debian's ghostscript rewrites the file without its text objects
// (`-dFILTERTEXT`, ghostscript ≥ 9.23). Measured against the alternatives in the README ("Translated
// PDFs"): covering text with white boxes leaves it selectable and searchable (refused by issue 18),
// and pdftocairo/qpdf have no text filter.
//
// Ghostscript is AGPL: it runs as a separate program, never linked, without a shell, with a time
// limit and an address-space limit (prlimit), like every external program the worker runs on
// untrusted input (HELPERS: "Run external programs without a shell, with a time limit and a memory limit").
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

export type RemoveTextOptions = {
  /** The ghostscript command; `gs` on the PATH by default. */
  command?: string;
  timeoutMs?: number;
  /** The address-space limit of the ghostscript process, in bytes. */
  memoryBytes?: number;
  signal?: AbortSignal;
};

export const GS_TIMEOUT_MS = 120_000;
export const GS_MEMORY_BYTES = 2 * 1024 ** 3;

/** Ghostscript is not installed, failed, or ran too long: the message says which and what to do. */
export class TextRemovalError extends Error {
  override name = 'TextRemovalError';
}

/** The source PDF without its text objects; same pages, same sizes. */
export async function removeText(pdf: Uint8Array, options: RemoveTextOptions = {}): Promise<Uint8Array> {
  const dir = await mkdtemp(path.join(tmpdir(), 'signet-gs-'));
  try {
    const input = path.join(dir, 'in.pdf');
    const output = path.join(dir, 'out.pdf');
    await writeFile(input, pdf);
    const gs = options.command ?? 'gs';
    const args = [
      `--as=${options.memoryBytes ?? GS_MEMORY_BYTES}`,
      '--',
      gs,
      '-q', '-dSAFER', '-dBATCH', '-dNOPAUSE', '-dNOPROMPT',
      '-sDEVICE=pdfwrite',
      '-dFILTERTEXT',
      // Pages keep their orientation: pdfwrite would otherwise turn pages by their text direction.
      '-dAutoRotatePages=/None',
      // Images are kept as they are: no downsampling, JPEGs passed through unchanged.
      '-dDownsampleColorImages=false', '-dDownsampleGrayImages=false', '-dDownsampleMonoImages=false',
      '-dPassThroughJPEGImages=true', '-dPassThroughJPXImages=true',
      `-sOutputFile=${output}`,
      input,
    ];
    await execute('prlimit', args, options.timeoutMs ?? GS_TIMEOUT_MS, options.signal, gs);
    const result = await readFile(output).catch(() => undefined);
    if (!result || result.length === 0) throw new TextRemovalError('Ghostscript wrote no output for this PDF, so the text could not be removed from its pages.');
    return new Uint8Array(result.buffer, result.byteOffset, result.byteLength);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function execute(command: string, args: string[], timeoutMs: number, signal: AbortSignal | undefined, gs: string): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { timeout: timeoutMs, killSignal: 'SIGKILL', signal, maxBuffer: 1024 * 1024, shell: false }, (error, _stdout, stderr) => {
      if (!error) return resolve();
      if (signal?.aborted) return reject(signal.reason);
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return reject(new TextRemovalError('prlimit (util-linux) is not installed, so ghostscript cannot be run with a memory limit.'));
      if (error.killed) return reject(new TextRemovalError(`Ghostscript took longer than ${Math.round(timeoutMs / 1000)} s to remove the text, and was stopped.`));
      // prlimit exits 127 (or says "failed to execute") when the program itself is missing.
      if ((error as { code?: unknown }).code === 127 || /failed to execute|No such file/i.test(stderr)) {
        return reject(new TextRemovalError(`Ghostscript (${gs}) is not installed; the operator can install Debian's ghostscript package.`));
      }
      const detail = stderr.trim().split('\n').slice(-2).join(' ').slice(0, 300);
      reject(new TextRemovalError(`Ghostscript could not rewrite this PDF without its text${detail ? `: ${detail}` : ''}.`));
    });
  });
}
