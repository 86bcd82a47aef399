// Import benchmark (issue 35): a CSV of N people (default 100,000) imported by the real `signet import`
// into a fresh SQLite data dir, timed, with the process's peak resident memory — read from
// /usr/bin/time -v when it is there, else from the child's own resource usage. A third of the lines
// carry a bcrypt hash, a third a PBKDF2 hash in PHC form (quoted: it holds a comma), a third none; the
// hashes repeat (an import never checks them, only reads and stores them). Then the same file again:
// every line an update, none a duplicate. The file is written as a stream and never held whole.
//
//   node bench/import-csv.ts [--lines N] [--keep]
import { spawn } from 'node:child_process';
import { pbkdf2Sync, randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { hashSync } from '@node-rs/bcrypt';

const { values } = parseArgs({ options: { lines: { type: 'string', default: '100000' }, keep: { type: 'boolean', default: false } } });
const lines = Number(values.lines);
const dir = mkdtempSync(path.join(tmpdir(), 'signet-bench-import-'));
const file = path.join(dir, 'people.csv');
const bin = path.join(import.meta.dirname, '..', 'bin', 'signet.js');

async function writeCsv(): Promise<void> {
  const bcrypt = hashSync('bench password', 10);
  const salt = randomBytes(16);
  const b64 = (b: Buffer) => b.toString('base64').replace(/=+$/, '');
  const pbkdf2 = `"$pbkdf2-sha256$i=27500,l=64$${b64(salt)}$${b64(pbkdf2Sync('bench password', salt, 27500, 64, 'sha256'))}"`;
  const out = createWriteStream(file);
  out.write('email,phone,name,email_verified,password_hash\n');
  for (let i = 0; i < lines; i++) {
    const hash = i % 3 === 0 ? bcrypt : i % 3 === 1 ? pbkdf2 : '';
    if (!out.write(`person${i}@example.com,,Person Number ${i},${i % 2 === 0},${hash}\n`)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'close');
}

type Run = { seconds: number; peakRssMb: number; summary: { created: number; updated: number; skipped: number; errors: unknown[] } };

function importOnce(): Promise<Run> {
  const useTime = existsSync('/usr/bin/time');
  const args = useTime ? ['-v', process.execPath, bin, 'import', file, '--json'] : [bin, 'import', file, '--json'];
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(useTime ? '/usr/bin/time' : process.execPath, args, {
      env: { ...process.env, SIGNET_DATA_DIR: path.join(dir, 'data'), SIGNET_SECRET: 'bench-secret-bench-secret-bench-secret-0', SIGNET_LOG_LEVEL: 'silent' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`signet import exited ${code}: ${stderr}`));
      const seconds = (performance.now() - started) / 1000;
      const kb = Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(stderr)?.[1] ?? NaN);
      resolve({ seconds, peakRssMb: Math.round(kb / 1024), summary: JSON.parse(stdout) as Run['summary'] });
    });
  });
}

await writeCsv();
const init = spawn(process.execPath, [bin, 'migrate'], { env: { ...process.env, SIGNET_DATA_DIR: path.join(dir, 'data'), SIGNET_SECRET: 'bench-secret-bench-secret-bench-secret-0', SIGNET_LOG_LEVEL: 'silent' }, stdio: 'ignore' });
await once(init, 'close');
const first = await importOnce();
const second = await importOnce();
const report = {
  lines,
  file_mb: Math.round((statSync(file).size / 1024 / 1024) * 10) / 10,
  first: { seconds: Math.round(first.seconds * 10) / 10, peak_rss_mb: first.peakRssMb, created: first.summary.created, updated: first.summary.updated, errors: first.summary.errors.length },
  second: { seconds: Math.round(second.seconds * 10) / 10, peak_rss_mb: second.peakRssMb, created: second.summary.created, updated: second.summary.updated, errors: second.summary.errors.length },
};
console.log(JSON.stringify(report, null, 2));
if (first.summary.created !== lines || second.summary.updated !== lines) {
  console.error('the import did not create (then update) every line');
  process.exitCode = 1;
}
if (!values.keep) rmSync(dir, { recursive: true, force: true });
