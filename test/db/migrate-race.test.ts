// Several processes starting at once on a new SQLite file (two `signet serve`, `serve --processes 2`,
// a server and a worker): Kysely takes no migration lock on SQLite, so each ran the migrations and all
// but one failed with "table … already exists". Real processes, since the race is between them.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { SIGNET_BIN } from '../helpers/cli.ts';

function signetMigrate(dataDir: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [SIGNET_BIN, 'migrate', '--json'], {
      env: { PATH: process.env.PATH ?? '', SIGNET_DATA_DIR: dataDir, SIGNET_SECRET: 'm'.repeat(40) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) => resolve({ code, out }));
  });
}

test('four `signet migrate` processes started at once on a new SQLite data dir all succeed, and each migration is applied exactly once (the one that ran them says so)', async () => {
  for (let round = 0; round < 3; round++) {
    const dir = mkdtempSync(path.join(tmpdir(), 'signet-migrate-race-'));
    try {
      const results = await Promise.all([1, 2, 3, 4].map(() => signetMigrate(path.join(dir, 'data'))));
      for (const { code, out } of results) assert.equal(code, 0, out);
      const applied = results.flatMap(({ out }) => (JSON.parse(out) as { applied: string[] }).applied);
      assert.ok(applied.length > 0, 'some process reports the migrations it applied');
      assert.deepEqual(applied, [...new Set(applied)], 'no migration applied twice');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
});
