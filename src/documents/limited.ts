// Running an external program (pdftoppm, tesseract) on untrusted input: never through a shell, with
// a wall-clock limit and an address-space limit (util-linux's prlimit), so a hostile page can fail
// only itself — never hang, bloat or crash the worker (issue 17, item 9).
import { execFile } from 'node:child_process';

export type Limits = {
  /** Wall-clock limit; the program is killed (SIGKILL) when it is reached. */
  timeoutMs: number;
  /** Address-space limit in bytes (RLIMIT_AS), applied with prlimit before the program starts. */
  memoryBytes: number;
  signal?: AbortSignal;
};

/** Why a limited program did not give a result, in words for the task's owner. */
export class LimitedProgramError extends Error {
  override name = 'LimitedProgramError';
  readonly reason: 'timeout' | 'memory' | 'failed' | 'missing';
  constructor(message: string, reason: LimitedProgramError['reason']) {
    super(message);
    this.reason = reason;
  }
}

/** 0.3, 2.5, 60: a limit in seconds as people write it. */
export const seconds = (ms: number) => String(ms < 10_000 ? Math.round(ms / 100) / 10 : Math.round(ms / 1000));

/** Output larger than this is not a page's OCR text or a picture; the program is stopped. */
const MAX_OUTPUT = 64 * 1024 * 1024;

/** A small environment: no secrets of the worker reach the program; tesseract's data path if the operator set one. */
function programEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin', OMP_THREAD_LIMIT: '1', LC_ALL: 'C' };
  if (process.env.TESSDATA_PREFIX) env.TESSDATA_PREFIX = process.env.TESSDATA_PREFIX;
  return env;
}

/**
 * Runs `program args…` under prlimit (address space and a CPU-seconds backstop) with a timeout;
 * resolves with stdout. Rejects with LimitedProgramError saying which limit was hit.
 */
export function runLimited(program: string, args: string[], limits: Limits): Promise<Buffer> {
  const cpuSeconds = Math.max(1, Math.ceil(limits.timeoutMs / 1000) + 1);
  const wrapped = [`--as=${Math.floor(limits.memoryBytes)}`, `--cpu=${cpuSeconds}`, '--', program, ...args];
  return new Promise((resolve, reject) => {
    execFile(
      'prlimit',
      wrapped,
      { shell: false, timeout: limits.timeoutMs, killSignal: 'SIGKILL', maxBuffer: MAX_OUTPUT, encoding: 'buffer', signal: limits.signal, env: programEnv() },
      (error, stdout, stderr) => {
        if (!error) return resolve(stdout);
        if (limits.signal?.aborted) return reject(limits.signal.reason);
        const err = error as NodeJS.ErrnoException & { killed?: boolean; signal?: string | null; code?: number | string | null };
        const text = stderr.toString('utf8');
        if (err.code === 'ENOENT') return reject(new LimitedProgramError('prlimit (util-linux) is not installed, so external programs cannot be run with a memory limit.', 'missing'));
        if (err.killed || err.signal === 'SIGKILL' || err.signal === 'SIGXCPU') {
          return reject(new LimitedProgramError(`${program} took longer than ${seconds(limits.timeoutMs)} s and was stopped`, 'timeout'));
        }
        if (/bad_alloc|out of memory|cannot allocate|memory allocation|Couldn't allocate|failed to allocate|failed to map segment|MemoryError/i.test(text) || err.signal === 'SIGABRT' || err.signal === 'SIGSEGV') {
          return reject(new LimitedProgramError(`${program} needed more than ${Math.round(limits.memoryBytes / 2 ** 20)} MB of memory and was stopped`, 'memory'));
        }
        if (/failed to execute|No such file or directory/.test(text) && text.includes(program)) {
          return reject(new LimitedProgramError(`${program} is not installed`, 'missing'));
        }
        const detail = text.trim().split('\n').slice(-1)[0]?.slice(0, 200) ?? '';
        reject(new LimitedProgramError(`${program} failed (${err.signal ?? `exit ${String(err.code)}`}${detail ? `: ${detail}` : ''})`, 'failed'));
      },
    );
  });
}

/** Whether a program can be run at all (found on PATH and starts), cached per program name. */
const available = new Map<string, Promise<boolean>>();
export function isInstalled(program: string, versionArg = '--version'): Promise<boolean> {
  let probe = available.get(program);
  if (!probe) {
    probe = new Promise((resolve) => {
      execFile(program, [versionArg], { shell: false, timeout: 10_000 }, (error) => resolve(!error || (error as NodeJS.ErrnoException).code !== 'ENOENT'));
    });
    available.set(program, probe);
  }
  return probe;
}
