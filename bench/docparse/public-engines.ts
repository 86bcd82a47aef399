// The three programs the public benchmark runs on the same files, each as a user would run it, the
// whole batch timed from process start to exit: Signet (one `node` process over all files),
// opendataloader-pdf (its npm CLI: one JVM over all files, in the configuration opendataloader-bench
// runs it with) and poppler's pdftotext (one process per file: it takes one file at a time).
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

export type EngineName = 'signet' | 'opendataloader' | 'pdftotext';

/**
 * One engine's run over a batch: each input's Markdown (or text) by input base name, the wall time and
 * the CPU time of the processes it ran (user + system of every reaped descendant: on a machine shared
 * with other work the wall time moves with the neighbours, the CPU time much less).
 */
export type BatchRun = { outputs: Map<string, string>; seconds: number; cpuSeconds: number | undefined; command: string; failures: string[]; memory?: TreeMemory };

/**
 * Resident memory of a command's processes, sampled every 100 ms from /proc (Linux): the most the
 * whole tree (the command and every process it started, reader processes included) held at once,
 * and the most any one of its processes held (what \`/usr/bin/time -v\` calls maximum resident set size).
 */
export type TreeMemory = { peakTreeBytes: number; peakProcessBytes: number };

const PAGE_BYTES = 4096;

/** pid → [parent pid, resident bytes] of every process, from /proc. */
function processTable(): Map<number, [number, number]> {
  const table = new Map<number, [number, number]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      table.set(Number(name), [Number(fields[1]), Number(fields[21]) * PAGE_BYTES]);
    } catch {
      // gone meanwhile
    }
  }
  return table;
}

/** Samples the resident memory of `pid` and its descendants until stop() is called. */
function watchMemory(pid: number | undefined): { stop: () => TreeMemory } {
  const memory: TreeMemory = { peakTreeBytes: 0, peakProcessBytes: 0 };
  const sample = () => {
    if (pid === undefined) return;
    const table = processTable();
    const tree = new Set([pid]);
    for (let grew = true; grew; ) {
      grew = false;
      for (const [child, [parent]] of table) {
        if (!tree.has(parent) || tree.has(child)) continue;
        tree.add(child);
        grew = true;
      }
    }
    let sum = 0;
    for (const member of tree) {
      const rss = table.get(member)?.[1] ?? 0;
      sum += rss;
      memory.peakProcessBytes = Math.max(memory.peakProcessBytes, rss);
    }
    memory.peakTreeBytes = Math.max(memory.peakTreeBytes, sum);
  };
  const timer = setInterval(sample, 100);
  return {
    stop: () => {
      clearInterval(timer);
      return memory;
    },
  };
}

const ROOT = path.join(import.meta.dirname, '..', '..');

const TICKS_PER_SECOND = 100;

/** CPU seconds of this process's reaped children so far (cutime + cstime of /proc/self/stat), or undefined off Linux. */
export function childrenCpuSeconds(): number | undefined {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[13]) + Number(fields[14])) / TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

function run(command: string, args: string[], options: { cwd?: string } = {}): Promise<{ code: number | null; stderr: string; seconds: number; memory: TreeMemory }> {
  const start = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd ?? ROOT, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, SIGNET_LOG_LEVEL: 'silent' } });
    const watch = watchMemory(child.pid);
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < 64_000) stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr, seconds: (performance.now() - start) / 1000, memory: watch.stop() }));
  });
}

/** The Markdown files a batch wrote, by base name. */
function readOutputs(dir: string, extension: string): Map<string, string> {
  const outputs = new Map<string, string>();
  for (const name of readdirSync(dir)) if (name.endsWith(extension)) outputs.set(name.slice(0, -extension.length), readFileSync(path.join(dir, name), 'utf8'));
  return outputs;
}

const cpuSince = (before: number | undefined) => {
  const now = childrenCpuSeconds();
  return before === undefined || now === undefined ? undefined : now - before;
};

const base = (file: string) => path.basename(file, '.pdf');

function failuresOf(inputs: string[], outputs: Map<string, string>, stderr: string): string[] {
  const missing = inputs.filter((f) => !outputs.has(base(f))).map((f) => `${base(f)}: no output`);
  return missing.length > 0 && stderr.trim() !== '' ? [...missing, `stderr: ${stderr.trim().split('\n').slice(-3).join(' / ')}`] : missing;
}

/**
 * How Signet is run: `signet parse FILE… --out DIR --format md --no-pictures`, a fresh Node process
 * over all files, its start included in the time — as opendataloader-pdf runs with `--image-output off`.
 */
export function signetCommand(): { args: (outDir: string, files: string[]) => string[]; label: string } {
  const cli = path.join(ROOT, 'bin', 'signet.js');
  return { args: (outDir, files) => [cli, 'parse', ...files, '--out', outDir, '--format', 'md', '--no-pictures'], label: 'node bin/signet.js parse FILE… --out DIR --format md --no-pictures' };
}

export async function runSignet(files: string[], outDir: string): Promise<BatchRun> {
  mkdirSync(outDir, { recursive: true });
  const command = signetCommand();
  const cpu = childrenCpuSeconds();
  const result = await run(process.execPath, command.args(outDir, files));
  const outputs = readOutputs(outDir, '.md');
  return { outputs, seconds: result.seconds, cpuSeconds: cpuSince(cpu), command: command.label, failures: failuresOf(files, outputs, result.stderr), memory: result.memory };
}

/** Why opendataloader-pdf cannot run here (no Java, or the package is not installed), or undefined. */
export function opendataloaderMissing(): string | undefined {
  const java = spawnSync('java', ['-version'], { encoding: 'utf8' });
  if (java.error || java.status !== 0) return 'Java is not installed (apt-get install default-jre-headless): opendataloader-pdf runs on a JVM';
  try {
    opendataloaderCli();
    return undefined;
  } catch {
    return '@opendataloader/pdf is not installed (npm install)';
  }
}

/** The package's `opendataloader-pdf` command (dist/cli.js beside its main module). */
const opendataloaderCli = () => path.join(path.dirname(createRequire(import.meta.url).resolve('@opendataloader/pdf')), 'cli.js');

/**
 * opendataloader-pdf's CLI over all files in one JVM, with the options opendataloader-bench uses for
 * it (src/pdf_parser_opendataloader.py: Markdown, `table_method="cluster"`, `image_output="off"`),
 * plus a page separator in Signet's form so both are cut into pages the same way.
 */
export const OPENDATALOADER_ARGS = ['--format', 'markdown', '--table-method', 'cluster', '--image-output', 'off', '--quiet', '--markdown-page-separator', '<!-- page %page-number% -->'];

export async function runOpendataloader(files: string[], outDir: string): Promise<BatchRun> {
  mkdirSync(outDir, { recursive: true });
  const cli = opendataloaderCli();
  const cpu = childrenCpuSeconds();
  const result = await run(process.execPath, [cli, ...OPENDATALOADER_ARGS, '--output-dir', outDir, ...files]);
  const outputs = readOutputs(outDir, '.md');
  return { outputs, seconds: result.seconds, cpuSeconds: cpuSince(cpu), memory: result.memory, command: `opendataloader-pdf ${OPENDATALOADER_ARGS.map((a) => (a.includes(' ') ? `'${a}'` : a)).join(' ')} --output-dir DIR FILE…`, failures: failuresOf(files, outputs, result.stderr) };
}

/** Why pdftotext cannot run here, or undefined. */
export function pdftotextMissing(): string | undefined {
  const probe = spawnSync('pdftotext', ['-v'], { encoding: 'utf8' });
  return probe.error ? 'poppler-utils (pdftotext) is not installed' : undefined;
}

/** pdftotext in its default (reading-order) mode, one process per file, pages cut at its form feeds. */
export async function runPdftotext(files: string[], outDir: string): Promise<BatchRun> {
  mkdirSync(outDir, { recursive: true });
  const start = performance.now();
  const cpu = childrenCpuSeconds();
  let stderr = '';
  for (const file of files) {
    const result = await run('pdftotext', ['-enc', 'UTF-8', file, path.join(outDir, `${base(file)}.txt`)]);
    if (result.code !== 0) stderr += `${base(file)}: ${result.stderr}`;
  }
  const seconds = (performance.now() - start) / 1000;
  const outputs = readOutputs(outDir, '.txt');
  return { outputs, seconds, cpuSeconds: cpuSince(cpu), command: 'pdftotext -enc UTF-8 FILE OUT (one process per file)', failures: failuresOf(files, outputs, stderr) };
}

/** pdftotext's text cut into pages at its form feeds, as Markdown-like page texts by page number. */
export function textPages(text: string): Map<number, string> {
  const pages = new Map<number, string>();
  text.split('\f').forEach((page, i) => pages.set(i + 1, page.trim()));
  return pages;
}
