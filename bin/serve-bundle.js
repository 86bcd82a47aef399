// With SIGNET_SERVE_BUNDLE=1, `signet serve` runs from one bundle of the code it loads, built by esbuild into
// node_modules/.cache/signet-serve/ — comments and whitespace dropped, names kept: a stack trace names
// the functions, and the source map beside each file leads back to the source line (Node applies them
// with NODE_OPTIONS=--enable-source-maps, at ~9 MB more; or reproduce with SIGNET_SERVE_BUNDLE=0). Run from the
// sources, the service held ~1,000 module records and the full text of every module it loaded: its
// own heavily commented TypeScript and zod, kysely, fastify…, ~7 MB of V8 heap, with Node reading each
// file. The bundle is ~15 MB smaller idle and 15–22 MB smaller at peak under the benchmark's mixed load
// (both memory bars met), but it answered userinfo with ~10 % more CPU per request (below the userinfo
// ≥ 3× bar), so it is not the default (bench/README.md, "Memory"; `npm run bench -- --bundle` measures it).
//
// The bundle is a cache, never a build step: at each start the files it was made from (listed with
// size and mtime in latest.json) are compared, and any change — an edit, a package upgrade — builds it
// again in a child process (a few seconds, once), so the server itself never loads esbuild. Without
// esbuild installed, when the build fails or without SIGNET_SERVE_BUNDLE=1, serve runs from the sources
// as every other command and the tests do. Builds live in directories named by their inputs and are
// not replaced in place: a server still running from one keeps loading its lazily imported chunks.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = path.join(import.meta.dirname, '..');
const CACHE = path.join(ROOT, 'node_modules/.cache/signet-serve');
const ENTRY = 'src/cli/main.ts';
// One record per checkout: node_modules may be shared by several (git worktrees), and a bundle holds its checkout's paths.
const LATEST = path.join(CACHE, `latest-${createHash('sha256').update(ROOT).digest('hex').slice(0, 8)}.json`);
/** Builds no server started from for this long are removed when a new one is made. */
const PRUNE_AFTER_MS = 7 * 24 * 3600 * 1000;

// Loaded from node_modules as they are: native add-ons, worker-thread entry files, and what only the
// document engine, mail, object storage and the MCP server use (loaded on first use, as from the sources).
const EXTERNAL = [
  'better-sqlite3', '@node-rs/*', 'pg', 'pg-native', 'pino', 'thread-stream', 'prom-client', 'libphonenumber-js',
  '@embedpdf/*', 'pdf-lib', '@pdf-lib/*', 'fontkit', 'brotli', 'pdfkit', 'postcss', 'dom-serializer',
  'nodemailer', '@smithy/*', '@aws-sdk/*', 'yaml', '@modelcontextprotocol/*',
];

const stamp = (file) => {
  const s = statSync(path.join(ROOT, file), { throwIfNoEntry: false });
  return s ? [s.size, s.mtimeMs] : null;
};

/** The bundle's entry file when an up-to-date build exists or could be made; otherwise undefined (run the sources). */
export function serveBundleEntry() {
  if (process.env.SIGNET_SERVE_BUNDLE !== '1') return undefined;
  const current = currentBuild();
  if (current) return current;
  const built = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--build'], { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  if (built.status !== 0) {
    // Said only when unexpected: esbuild not installed (a checkout that has not run `npm install` since it
    // was added) and a read-only node_modules (as for Node's compile cache) are normal.
    if (!/Cannot find (package|module) 'esbuild'|EACCES|EROFS|EPERM/.test(built.stderr ?? '')) process.stderr.write(`signet: serving from the sources (the bundle could not be built: ${(built.stderr || built.error?.message || '').trim().split('\n')[0]})\n`);
    return undefined;
  }
  return currentBuild();
}

function currentBuild() {
  let latest;
  try {
    latest = JSON.parse(readFileSync(LATEST, 'utf8'));
  } catch {
    return undefined;
  }
  const main = path.join(CACHE, latest.key, 'main.js');
  if (!existsSync(main)) return undefined;
  for (const [file, was] of Object.entries(latest.inputs)) {
    const now = stamp(file);
    if (!now || now[0] !== was[0] || now[1] !== was[1]) return undefined;
  }
  // Marked as in use, so a later build does not prune it (see PRUNE_AFTER_MS).
  const now = new Date();
  try {
    utimesSync(path.dirname(main), now, now);
  } catch {}
  return pathToFileURL(main).href;
}

// Each source file keeps its own import.meta.url (templates, static files, package.json are found
// relative to it) — in the bundle it would be the bundle's.
const keepImportMeta = {
  name: 'keep-import-meta',
  setup(build) {
    build.onLoad({ filter: /[/\\]src[/\\].*\.ts$/ }, (args) => {
      const url = JSON.stringify(pathToFileURL(args.path).href);
      const text = readFileSync(args.path, 'utf8')
        .replaceAll('import.meta.resolve(', `((specifier) => import.meta.resolve(specifier, ${url}))(`)
        .replaceAll('import.meta.dirname', JSON.stringify(path.dirname(args.path)))
        .replaceAll('import.meta.url', url);
      return { contents: text, loader: 'ts' };
    });
  },
};

// Fastify loads node:https and node:http2 at start for the servers it may be asked to make; Signet makes
// a plain HTTP one (TLS ends at the proxy), and the two with TLS cost ~4 MB resident. In the bundle they
// are loaded when fastify first makes such a server. Matched exactly: another fastify version's file is
// bundled unchanged.
const EAGER_SERVER_MODULES = "const https = require('node:https')\nconst http2 = require('node:http2')\n";
const LAZY_SERVER_MODULES =
  "const https = { createServer: (...a) => require('node:https').createServer(...a) }\n" +
  "const http2 = { createServer: (...a) => require('node:http2').createServer(...a), createSecureServer: (...a) => require('node:http2').createSecureServer(...a) }\n";
const lazyServerModules = {
  name: 'lazy-server-modules',
  setup(build) {
    build.onLoad({ filter: /[/\\]fastify[/\\]lib[/\\]server\.js$/ }, (args) => ({ contents: readFileSync(args.path, 'utf8').replace(EAGER_SERVER_MODULES, LAZY_SERVER_MODULES), loader: 'js' }));
  },
};

async function build() {
  const esbuild = await import('esbuild');
  mkdirSync(CACHE, { recursive: true });
  const tmp = path.join(CACHE, `tmp-${process.pid}-${Date.now()}`);
  const result = await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: [ENTRY],
    outdir: tmp,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node24',
    minifyWhitespace: true,
    minifySyntax: true,
    sourcemap: 'linked',
    sourcesContent: false,
    external: EXTERNAL,
    // CommonJS packages inside the ES module bundle call require() for Node's own modules.
    banner: { js: "import{createRequire as __signetRequire}from'node:module';const require=__signetRequire(import.meta.url);" },
    plugins: [keepImportMeta, lazyServerModules],
    metafile: true,
    logLevel: 'error',
  });
  // A package is represented by its package.json (an upgrade or reinstall rewrites it), so a start
  // compares ~700 files rather than every file of every package (~1,500; ~100 ms on a busy machine).
  const inputs = {};
  for (const input of [...Object.keys(result.metafile.inputs), path.relative(ROOT, fileURLToPath(import.meta.url))]) {
    const inPackage = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input);
    const file = inPackage ? `${inPackage[1]}/package.json` : input;
    const s = stamp(file);
    if (s) inputs[file] = s;
  }
  const key = createHash('sha256').update(ROOT).update(JSON.stringify(inputs)).digest('hex').slice(0, 16);
  const dir = path.join(CACHE, key);
  try {
    if (!existsSync(path.join(dir, 'main.js'))) {
      rmSync(dir, { recursive: true, force: true });
      renameSync(tmp, dir);
    }
  } catch (error) {
    // Another start built the same inputs at the same moment: theirs is as good.
    if (!existsSync(path.join(dir, 'main.js'))) throw error;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  writeFileSync(`${LATEST}.${process.pid}`, JSON.stringify({ key, inputs }));
  renameSync(`${LATEST}.${process.pid}`, LATEST);
  for (const name of readdirSync(CACHE)) {
    const other = path.join(CACHE, name);
    if (name !== key && !name.startsWith('latest-') && Date.now() - statSync(other).mtimeMs > PRUNE_AFTER_MS) rmSync(other, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--build' && import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await build();
