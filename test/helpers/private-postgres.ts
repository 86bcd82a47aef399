// A PostgreSQL cluster of a test's own (initdb + pg_ctl on a free port, in a temporary folder), for
// fault tests that stop, pause or restrict the server: the shared server every other test uses is
// never touched. As root (CI), the cluster runs as the `postgres` system user, since PostgreSQL refuses
// to run as root.
import { execFile } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);

/** initdb's folder: on PATH, or the newest of Debian's /usr/lib/postgresql/N/bin. */
function postgresBinDir(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) if (dir && existsSync(path.join(dir, 'initdb'))) return dir;
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(path.join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : path.join(root, versions[0], 'bin');
}

const asRoot = process.getuid?.() === 0;

/** Why a private cluster cannot be started here, or undefined when it can. */
export function privatePostgresUnavailableReason(): string | undefined {
  if (!postgresBinDir()) return 'initdb and pg_ctl not found (apt-get install postgresql)';
  if (asRoot && !existsSync('/usr/sbin/runuser')) return 'running as root without runuser to start PostgreSQL as the postgres user';
  return undefined;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export type PrivatePostgres = {
  /** a database `signet` in the cluster, for the service under test */
  url: string;
  /** an administrator's connection string (database `postgres`) */
  adminUrl: string;
  /** SIGSTOP to the server and every backend: connections stay open, nothing answers */
  pause(): Promise<void>;
  /** SIGCONT to them all */
  resume(): Promise<void>;
  /** pg_ctl stop -m fast: connections are refused */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** runs one statement as the administrator */
  admin(statement: string): Promise<void>;
  dispose(): Promise<void>;
};

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = postgresBinDir();
  if (!bin) throw new Error(privatePostgresUnavailableReason());
  const dir = mkdtempSync(path.join(tmpdir(), 'signet-pg-'));
  const data = path.join(dir, 'data');
  const log = path.join(dir, 'server.log');
  const port = await freePort();
  if (asRoot) {
    const { uid, gid } = postgresUser();
    chownSync(dir, uid, gid);
    chmodSync(dir, 0o700);
  }
  const as = (command: string, args: string[]) => (asRoot ? run('/usr/sbin/runuser', ['-u', 'postgres', '--', path.join(bin, command), ...args]) : run(path.join(bin, command), args));

  await as('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
  // Unix socket in the cluster's own folder, TCP on loopback only, small and quick (fsync off: a test cluster).
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c shared_buffers=16MB -c max_connections=40`;
  const start = async () => {
    await as('pg_ctl', ['-D', data, '-l', log, '-o', options, '-w', '-t', '60', 'start']);
  };
  const stop = async () => {
    await as('pg_ctl', ['-D', data, '-m', 'fast', '-w', '-t', '60', 'stop']);
  };
  await start();

  const adminUrl = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 30_000 });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await admin('create database signet');

  /** the postmaster and its children (backends and background processes) */
  const processes = (): number[] => {
    const postmaster = Number(readFileSync(path.join(data, 'postmaster.pid'), 'utf8').split('\n', 1)[0]);
    const children = readdirSync('/proc')
      .filter((entry) => /^\d+$/.test(entry))
      .filter((pid) => {
        try {
          // /proc/PID/stat: "pid (comm) state ppid …"; comm may hold spaces, so read after the last ')'.
          const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
          return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === postmaster;
        } catch {
          return false;
        }
      })
      .map(Number);
    return [postmaster, ...children];
  };
  const signalAll = (signal: NodeJS.Signals) => {
    for (const pid of processes()) {
      try {
        process.kill(pid, signal);
      } catch {
        // a child that ended meanwhile
      }
    }
  };

  let paused = false;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/signet`,
    adminUrl,
    async pause() {
      signalAll('SIGSTOP');
      paused = true;
    },
    async resume() {
      signalAll('SIGCONT');
      paused = false;
    },
    stop,
    start,
    admin,
    async dispose() {
      if (paused) signalAll('SIGCONT');
      await stop().catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function postgresUser(): { uid: number; gid: number } {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('postgres:'));
  if (!line) throw new Error('no postgres system user to run the private cluster as');
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}
