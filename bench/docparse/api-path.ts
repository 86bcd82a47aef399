// The API path's row of `npm run bench:docparse` (issue 40): the same batch of PDFs parsed two ways —
// `signet parse FILES… --out DIR` (the engine on local files, one process) and one docling-serve request
// `POST /v1/convert/file` with every file (a real `signet serve` and a real `signet worker`, each file a
// docparse task, the answer converted_docs.zip) — so the HTTP path's overhead (upload, storage, queue,
// the worker's poll, the sync wait's poll, the zip) is visible beside the engine's own time. The server
// and worker are started (and warmed with one conversion) before the clock starts; `signet parse`'s
// time includes its own start, as a person running it sees it.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';

const ROOT = path.join(import.meta.dirname, '../..');
const BIN = path.join(ROOT, 'bin/signet.js');
/** Text-layer PDFs of other projects' corpora (test/fixtures/public/README.md): no scan, no password. */
const BATCH = ['2305.03393v1-pg9.pdf', 'amt_handbook_sample.pdf', 'code_and_formula.pdf', 'multi_page.pdf', 'normal_4pages.pdf', 'picture_classification.pdf', 'redbook-contents-p2.pdf', 'right_to_left_01.pdf'].map((name) => path.join(ROOT, 'test/fixtures/public', name));

export type ApiPathRow = { path: string; files: number; pages: number; seconds: number; pagesPerSecond: number };

function pagesOf(file: string): number {
  const info = execFileSync('pdfinfo', [file], { encoding: 'utf8' });
  return Number(/^Pages:\s+(\d+)/m.exec(info)?.[1] ?? 0);
}

async function waitFor(url: string, deadline: number): Promise<void> {
  while (Date.now() < deadline) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not answer in time`);
}

/** One multipart request with every file, as docling-serve's clients send several files. */
async function convertBatch(baseUrl: string, key: string, files: string[]): Promise<void> {
  const form = new FormData();
  for (const file of files) form.append('files', new Blob([readFileSync(file)], { type: 'application/pdf' }), path.basename(file));
  form.append('to_formats', 'md');
  form.append('to_formats', 'json');
  const res = await fetch(`${baseUrl}/v1/convert/file`, { method: 'POST', headers: { 'x-api-key': key }, body: form });
  if (res.status !== 200) throw new Error(`/v1/convert/file answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
  await res.arrayBuffer();
}

/** Runs both paths on the batch; returns their rows (signet parse first). */
export async function apiPathRows(): Promise<ApiPathRow[]> {
  const pages = BATCH.reduce((sum, file) => sum + pagesOf(file), 0);
  const dir = mkdtempSync(path.join(tmpdir(), 'signet-bench-api-'));
  const children: ChildProcess[] = [];
  try {
    let start = performance.now();
    execFileSync(process.execPath, [BIN, 'parse', ...BATCH, '--out', path.join(dir, 'parse-out'), '--format', 'md,json', '--json'], { stdio: ['ignore', 'ignore', 'inherit'] });
    const parseSeconds = (performance.now() - start) / 1000;

    const port = 18000 + Math.floor(Math.random() * 2000);
    const env = { ...process.env, SIGNET_DATA_DIR: path.join(dir, 'data'), SIGNET_PORT: String(port), SIGNET_BASE_URL: `http://127.0.0.1:${port}`, SIGNET_METRICS_ADDR: 'off', SIGNET_ADMIN_ADDR: 'off', SIGNET_LOG_LEVEL: 'warn' };
    const cli = (args: string[], input?: string) => execFileSync(process.execPath, [BIN, ...args, '--json'], { env, encoding: 'utf8', ...(input === undefined ? {} : { input }) });
    execFileSync(process.execPath, [BIN, '--init', 'migrate'], { env, stdio: 'ignore' });
    cli(['user', 'create', '--email', 'bench@example.com', '--password-stdin'], 'a long bench password');
    const { key } = JSON.parse(cli(['api-key', 'create', '--email', 'bench@example.com', '--name', 'bench'])) as { key: string };
    children.push(spawn(process.execPath, [BIN, 'serve'], { env, stdio: 'ignore' }), spawn(process.execPath, [BIN, 'worker', '--only', 'tasks'], { env, stdio: 'ignore' }));
    const baseUrl = `http://127.0.0.1:${port}`;
    await waitFor(`${baseUrl}/readyz`, Date.now() + 30_000);
    await convertBatch(baseUrl, key, BATCH.slice(0, 1)); // warm-up: the worker's reader process and pdf.js
    start = performance.now();
    await convertBatch(baseUrl, key, BATCH);
    const apiSeconds = (performance.now() - start) / 1000;
    return [
      { path: '`signet parse` (one process, its start included)', files: BATCH.length, pages, seconds: parseSeconds, pagesPerSecond: pages / parseSeconds },
      { path: '`POST /v1/convert/file` (serve + one worker, zip answer)', files: BATCH.length, pages, seconds: apiSeconds, pagesPerSecond: pages / apiSeconds },
    ];
  } finally {
    for (const child of children) child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The rows as a Markdown table, with the machine's load average (the machine may be shared). */
export function apiPathTable(rows: ApiPathRow[]): string {
  const [parse, api] = rows;
  const overhead = parse && api ? `\nThe HTTP path took ${(api.seconds - parse.seconds).toFixed(1)} s more (${((100 * (api.seconds - parse.seconds)) / parse.seconds).toFixed(0)} %) for ${api.files} files, ${api.pages} pages. Load average ${loadavg().map((n) => n.toFixed(1)).join(', ')}.\n` : '';
  return ['| path | files | pages | seconds (wall) | pages/s |', '|---|---:|---:|---:|---:|', ...rows.map((r) => `| ${r.path} | ${r.files} | ${r.pages} | ${r.seconds.toFixed(1)} | ${r.pagesPerSecond.toFixed(1)} |`)].join('\n') + overhead;
}
