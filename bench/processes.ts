// What the harness needs from child processes: free ports, an IPC request/response channel, peak RSS
// (VmHWM, resettable per round) and CPU time from /proc, and how busy the whole machine was.
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer().once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export type IpcChild = {
  child: ChildProcess;
  /** Sends `{type, id, ...payload}` and resolves with the reply carrying the same id. */
  request<T>(type: string, payload: Record<string, unknown>): Promise<T>;
  stop(): Promise<void>;
};

type Reply = { id?: number; error?: string } & Record<string, unknown>;

/** Forks a Node script with an IPC channel and waits for its `{type:'ready'}` message. */
export async function forkWithIpc(script: string, args: string[] = [], execArgv: string[] = []): Promise<{ ipc: IpcChild; ready: Record<string, unknown> }> {
  const child = fork(script, args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv, serialization: 'advanced' });
  const ready = await new Promise<Record<string, unknown>>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`${script} exited (${code}) before it was ready`)));
    child.once('message', (message) => resolve(message as Record<string, unknown>));
  });
  child.removeAllListeners('exit');
  let nextId = 0;
  const pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  child.on('message', (message: Reply) => {
    const waiter = message.id === undefined ? undefined : pending.get(message.id);
    if (!waiter || message.id === undefined) return;
    pending.delete(message.id);
    if (message.error) waiter.reject(new Error(`${script}: ${message.error}`));
    else waiter.resolve(message);
  });
  child.on('exit', (code) => {
    for (const waiter of pending.values()) waiter.reject(new Error(`${script} exited (${code})`));
    pending.clear();
  });
  const ipc: IpcChild = {
    child,
    request<T>(type: string, payload: Record<string, unknown>) {
      const id = ++nextId;
      return new Promise<T>((resolve, reject) => {
        pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
        child.send({ type, id, ...payload });
      });
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.disconnect();
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
  return { ipc, ready };
}

/** Peak resident set size of a process since start or since the last reset, in MB (VmHWM). */
export function peakRssMb(pid: number): number {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : NaN;
}

/** Resets VmHWM to the current RSS, so the next reading is the peak of what follows (Linux ≥ 4.0). */
export function resetPeakRss(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** CPU time (user + system, every thread) a process has used, in seconds. */
export function processCpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may contain spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return NaN;
  }
}

const CLOCK_TICKS = 100;

/** CPU seconds the whole machine spent busy (every core) and in total, from /proc/stat. */
export function machineCpuSeconds(): { busy: number; total: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
  const [, ...values] = line.trim().split(/\s+/);
  const n = values.map(Number);
  const total = n.slice(0, 8).reduce((a, b) => a + b, 0);
  const idle = (n[3] ?? 0) + (n[4] ?? 0);
  return { busy: (total - idle) / CLOCK_TICKS, total: total / CLOCK_TICKS };
}
