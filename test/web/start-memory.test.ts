// Issue 44, memory: what `signet serve` loads at start that serving does not need (bench/README.md, "Memory").
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';

/** Node's own modules loaded once the given module of src/ and everything it imports are evaluated. */
function builtinsLoadedBy(module: string): string[] {
  const url = new URL(`../../src/${module}`, import.meta.url).href;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', `await import(${JSON.stringify(url)}); process.stdout.write(JSON.stringify(process.moduleLoadList));`], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '' },
  });
  assert.equal(run.status, 0, run.stderr);
  return (JSON.parse(run.stdout) as string[]).filter((m) => m.startsWith('NativeModule ')).map((m) => m.slice('NativeModule '.length));
}

test("the server's code loads no fetch stack at start: node:http as an ES module namespace would load undici (~12 MB with TLS and HTTP/2)", () => {
  const builtins = builtinsLoadedBy('web/server.ts');
  assert.ok(builtins.includes('http'), 'the server uses node:http');
  assert.deepEqual(
    builtins.filter((m) => m.includes('undici')),
    [],
  );
});

test('an outbound fetch loads node:https on first use, not with the server', () => {
  const builtins = builtinsLoadedBy('net/guarded-fetch.ts');
  assert.deepEqual(
    builtins.filter((m) => m === 'https' || m.includes('undici')),
    [],
  );
});
