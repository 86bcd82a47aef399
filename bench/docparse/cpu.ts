// CPU seconds spent on the engine's behalf, for "pages per second per worker core" on a machine
// shared with other work (wall-clock time there depends on the neighbours): this process's user and
// system time, that of its finished children (pdftoppm, tesseract, readers that were stopped — the
// kernel adds a reaped child's time to its parent's cutime/cstime), and that of the live idle
// reader process, all from /proc (Linux).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { spareReaderPids } from '../../src/documents/pdf/reader-client.ts';

const TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** utime, stime, cutime, cstime of a process (fields 14–17 of /proc/<pid>/stat, after the command name). */
function times(pid: number | 'self'): number[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ').slice(11, 15).map(Number);
  } catch {
    return undefined;
  }
}

/** CPU seconds so far: this process and its reaped children, plus the live spare readers (and which those are). */
function snapshot(): { seconds: number; readers: number[] } | undefined {
  const self = times('self');
  if (!self) return undefined;
  const readers = spareReaderPids();
  const live = readers.reduce((sum, pid) => {
    const t = times(pid);
    return sum + (t ? (t[0] ?? 0) + (t[1] ?? 0) : 0);
  }, 0);
  const ticks = self.reduce((a, b) => a + b, 0) + live;
  return { seconds: ticks / TICKS, readers };
}

/** Until the process is gone from /proc (reaped: its time is then in our cutime), at most `ms`. */
async function reaped(pid: number, ms = 2000): Promise<void> {
  for (let waited = 0; waited < ms && existsSync(`/proc/${pid}`); waited += 5) await new Promise((resolve) => setTimeout(resolve, 5));
}

/**
 * CPU seconds `run` costs, all processes included. A reader that was replaced during the run
 * (stopped for its size, say) counts once it has been reaped, when its time moves into ours.
 */
export async function cpuOf<T>(run: () => Promise<T>): Promise<{ value: T; seconds: number | undefined }> {
  const before = snapshot();
  const value = await run();
  // A reader idle before the run that is no longer among the spares was used and ended: wait until it is reaped.
  const now = spareReaderPids();
  for (const pid of before?.readers ?? []) if (!now.includes(pid)) await reaped(pid);
  const after = snapshot();
  return { value, seconds: before && after ? after.seconds - before.seconds : undefined };
}
