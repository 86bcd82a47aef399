// `signet translate FILE.pdf … --to LANG --remote` (issue 43): a translation task on the signed-in
// server (the first-party task API, `POST /api/v1/translate/tasks`, as the person `signet login`
// signed in), followed until it ends; its translated.pdf and bilingual.pdf are written as the local
// command writes its results — NAME.LANG.pdf and NAME.LANG.bilingual.pdf, each renamed into place.
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { readInput, resultName, runEachInput, type ProgressLine } from '../local-files.ts';
import { currentCredentials, refusalText, serverFetch } from './server-session.ts';

export type RemoteTranslateOptions = { out?: string; to: string; from?: string; glossary?: string };

export type RemoteTranslated = { input: string; outputs: string[]; from: string; to: string; engine: string; pages: number; seconds: number; check: { skipped: string }; notes: string[] };

type Task = { id: string; status: string; progress?: { done?: number; total?: number } | number; error?: string | null; options?: { source_lang?: string }; files?: Array<{ name: string }>; notes?: string[] | null };

/** How often the task is asked about while it runs. */
const POLL_MS = 2000;

async function translateRemotely(input: string, options: RemoteTranslateOptions, signal: AbortSignal, progress: ProgressLine): Promise<RemoteTranslated> {
  const began = performance.now();
  const data = await readInput(input);
  let credentials = await currentCredentials();
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(data)], { type: 'application/pdf' }), path.basename(input));
  form.append('target_lang', options.to);
  if (options.from) form.append('source_lang', options.from);
  if (options.glossary) form.append('glossary', options.glossary);
  progress.show(`${input}: sending to ${credentials.server}`);
  const created = await serverFetch(credentials, '/api/v1/translate/tasks', { method: 'POST', body: form, headers: { accept: 'application/json' } });
  if (created.status !== 201 && created.status !== 200) throw new Error(`${credentials.server} refused it: ${await refusalText(created)}`);
  let task = (await created.json()) as Task;
  while (task.status === 'queued' || task.status === 'running') {
    if (signal.aborted) {
      await serverFetch(credentials, `/api/v1/translate/tasks/${task.id}`, { method: 'DELETE' }).catch(() => undefined);
      throw signal.reason;
    }
    await sleep(POLL_MS);
    credentials = await currentCredentials();
    const res = await serverFetch(credentials, `/api/v1/translate/tasks/${task.id}`, { headers: { accept: 'application/json' } });
    if (!res.ok) throw new Error(`${credentials.server} lost the task: ${await refusalText(res)}`);
    task = (await res.json()) as Task;
    const p = typeof task.progress === 'object' && task.progress ? task.progress : undefined;
    progress.show(`${input}: ${task.status} on ${credentials.server}${p?.total ? ` ${p.done ?? 0}/${p.total} pages` : ''}`);
  }
  if (task.status !== 'finished') throw new Error(`the task ${task.status} on ${credentials.server}${task.error ? `: ${task.error}` : ''}`);
  const outDir = options.out ?? path.dirname(input);
  await mkdir(outDir, { recursive: true });
  const name = resultName(input);
  const wanted: Array<[string, string]> = [
    ['translated.pdf', path.join(outDir, `${name}.${options.to}.pdf`)],
    ['bilingual.pdf', path.join(outDir, `${name}.${options.to}.bilingual.pdf`)],
  ];
  const outputs: string[] = [];
  for (const [file, target] of wanted) {
    const res = await serverFetch(credentials, `/api/v1/translate/tasks/${task.id}/files/${file}`);
    if (!res.ok) throw new Error(`${credentials.server} has no ${file} for it: ${await refusalText(res)}`);
    const partial = path.join(outDir, `.${path.basename(target)}.${process.pid}.partial`);
    try {
      await writeFile(partial, new Uint8Array(await res.arrayBuffer()));
      await rename(partial, target);
    } finally {
      await rm(partial, { force: true });
    }
    outputs.push(target);
  }
  const pages = typeof task.progress === 'object' && task.progress?.total ? task.progress.total : 0;
  return { input, outputs, from: task.options?.source_lang || options.from || '', to: options.to, engine: `server ${credentials.server}`, pages, seconds: Math.round((performance.now() - began) / 100) / 10, check: { skipped: 'translated on the server (its task page shows the check)' }, notes: task.notes ?? [] };
}

export function translateRemoteFiles(inputs: string[], options: RemoteTranslateOptions) {
  return runEachInput(inputs, { out: options.out, verb: 'translate', past: 'translated' }, (input, signal, progress) => translateRemotely(input, options, signal, progress), (r) => `${r.input}: ${r.from}→${r.to} on the server in ${r.seconds.toFixed(1)} s`);
}
