// CPU seconds spent on the engine's behalf, for "pages per second per worker core" on a machine
// shared with other work (wall-clock time there depends on the neighbours): this process's user and
// system time, that of its finished children (pdftoppm, tesseract, readers that were stopped — the
// kernel adds a reaped child's time to its parent's cutime/cstime), and that of the live idle
// reader process, all from /proc (Linux).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { spareReaderPid } from '../../src/tasks/engines/pdf/reader-client.ts';

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

/** CPU seconds so far: this process and its reaped children, plus the live spare reader. */
export function cpuSeconds(): number | undefined {
  const self = times('self');
  if (!self) return undefined;
  const reader = spareReaderPid();
  const live = reader === undefined ? undefined : times(reader);
  const ticks = self.reduce((a, b) => a + b, 0) + (live ? (live[0] ?? 0) + (live[1] ?? 0) : 0);
  return ticks / TICKS;
}
