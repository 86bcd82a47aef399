#!/usr/bin/env node
// Entry point. Signet's sources are TypeScript, run by Node 24's built-in type stripping: no build
// step, no loader. An older Node would fail inside a native add-on, so say what to do instead.
import module from 'node:module';

const [major] = process.versions.node.split('.').map(Number);
if (major < 24) {
  process.stderr.write(
    `signet: needs Node.js 24 or newer, this is ${process.version}; run it through npm, which uses the Node 24 the project installs: npm start, or npx signet …\n`,
  );
  process.exit(1);
}

// The long-running commands start with a smaller young generation: V8 lets each of its semi-spaces
// grow to 16 MB under load, resident memory that mostly holds garbage between scavenges. At 4 MB the
// benchmark's requests per CPU-second stayed within its noise of the default (at 2 MB, scavenges took
// 8 % of a refresh's CPU instead of 3 %) and the server is ~20 MB smaller under load (bench/README.md).
// Node reads heap sizes only at launch, so the process replaces itself (execve: same pid, no second
// process) with the flag added, unless the operator chose a size (flag or NODE_OPTIONS).
const LONG_RUNNING = new Set(['serve', 'worker']);
const SEMI_SPACE = '--max-semi-space-size';
const semiSpaceChosen = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)].some((arg) => arg.startsWith(SEMI_SPACE));
//
// For `serve` the same re-launch sets MALLOC_ARENA_MAX=1 (unless the operator set it): glibc gives every thread
// that allocates (V8's GC helpers, libuv's pool) an arena of its own, each holding a few MB of freed
// memory it does not return; under the benchmark's mixed load one arena kept the server ~14 MB smaller
// at peak with requests per CPU-second unchanged (issue 20, bench/README.md). glibc reads it only at
// start, hence here.
//
// And the old generation grows by half its live size between full collections (--heap-growing-percent=50)
// instead of up to 4×: requests waiting on a commit outlive two scavenges and are promoted, so under
// load the old space filled with ~100 MB of such garbage (live ~35 MB, collected at ~140 MB) before a
// mark-compact ran. With 50 % peak RSS under the benchmark's refresh and mixed loads fell from 220–256
// to 163–172 MB with requests per CPU-second within the noise (at 25 %: 157–159 MB, refresh slower).
if (LONG_RUNNING.has(process.argv[2] ?? '') && !semiSpaceChosen && typeof process.execve === 'function') {
  const env = process.argv[2] === 'serve' && process.env.MALLOC_ARENA_MAX === undefined ? { ...process.env, MALLOC_ARENA_MAX: '1' } : process.env;
  process.execve(process.execPath, [process.execPath, `${SEMI_SPACE}=4`, '--heap-growing-percent=50', ...process.execArgv, ...process.argv.slice(1)], env);
}

// Node's compile cache keeps each module's stripped JavaScript and V8 code, keyed by the source's hash,
// so a start after the first neither strips types nor compiles again, and never loads the type
// stripper (a WebAssembly build of swc, ~17 MB resident): `serve` answers sooner, CLI commands return
// sooner. The cache lives in the checkout's node_modules/.cache, writable by whoever may change the
// code anyway (a shared temporary directory would let another local user plant code); when it cannot
// be written, Node runs without it. NODE_COMPILE_CACHE picks another directory, NODE_DISABLE_COMPILE_CACHE=1 turns it off.
module.enableCompileCache?.(process.env.NODE_COMPILE_CACHE || new URL('../node_modules/.cache/signet-compile/', import.meta.url).pathname);
// `signet parse` loads only its own command (src/cli/parse-main.ts), not the sign-in service; with
// SIGNET_SERVE_BUNDLE=1 `serve` runs from a bundle of the same sources (bin/serve-bundle.js: ~15 MB less
// memory, ~10 % more CPU per userinfo request).
const serveBundle = process.argv[2] === 'serve' ? (await import('./serve-bundle.js')).serveBundleEntry() : undefined;
await import(process.argv[2] === 'parse' ? '../src/cli/parse-main.ts' : (serveBundle ?? '../src/cli/main.ts'));
