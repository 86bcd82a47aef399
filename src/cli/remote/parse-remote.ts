// `signet parse FILE.pdf … --remote` (issue 43): the file goes to the signed-in server's
// docling-serve-compatible conversion (`POST /v1/convert/file`, contract "Agents and document APIs")
// as the person `signet login` signed in, and the answer is written as the local command writes its
// results — NAME.md, NAME.json (NAME.html, NAME.txt with --format), through a staging folder, beside the input or in --out.
import path from 'node:path';
import { readInput, resultName, runEachInput } from '../local-files.ts';
import { stageResults } from '../parse-output.ts';
import { currentCredentials, refusalText, serverFetch } from './server-session.ts';

export type RemoteParseOptions = { out?: string; formats: Array<'md' | 'json' | 'html' | 'text'>; ocr: 'auto' | 'off' | 'force'; lang?: string };

export type RemoteParsed = { input: string; outputs: string[]; pictures: string[]; pages: number; ocr_pages: number; seconds: number; notes: string[]; server: string };

type ConvertAnswer = { document?: { md_content?: string | null; json_content?: unknown; html_content?: string | null; text_content?: string | null }; status?: string; errors?: Array<{ error_message?: string } | string> };

async function parseRemotely(input: string, options: RemoteParseOptions): Promise<RemoteParsed> {
  const began = performance.now();
  const data = await readInput(input);
  const credentials = await currentCredentials();
  const form = new FormData();
  form.append('files', new Blob([new Uint8Array(data)], { type: 'application/pdf' }), path.basename(input));
  for (const format of options.formats) form.append('to_formats', format);
  form.append('do_ocr', options.ocr === 'off' ? 'false' : 'true');
  if (options.ocr === 'force') form.append('force_ocr', 'true');
  for (const lang of options.lang?.split('+') ?? []) form.append('ocr_lang', lang);
  form.append('image_export_mode', 'placeholder');
  const res = await serverFetch(credentials, '/v1/convert/file', { method: 'POST', body: form, headers: { accept: 'application/json' } });
  if (!res.ok) throw new Error(`${credentials.server} refused it: ${await refusalText(res)}`);
  const answer = (await res.json()) as ConvertAnswer;
  const errors = (answer.errors ?? []).map((e) => (typeof e === 'string' ? e : (e.error_message ?? JSON.stringify(e))));
  if (answer.status === 'failure' || !answer.document) throw new Error(`${credentials.server} could not parse it${errors.length > 0 ? `: ${errors.join('; ')}` : ''}`);
  const name = resultName(input);
  const staged = stageResults(options.out ?? path.dirname(input), name);
  try {
    if (options.formats.includes('md')) await staged.writeFile(`${name}.md`, answer.document.md_content ?? '');
    if (options.formats.includes('json')) await staged.writeFile(`${name}.json`, `${JSON.stringify(answer.document.json_content ?? null, null, 2)}\n`);
    if (options.formats.includes('html')) await staged.writeFile(`${name}.html`, answer.document.html_content ?? '');
    if (options.formats.includes('text')) await staged.writeFile(`${name}.txt`, answer.document.text_content ?? '');
    const { outputs } = await staged.commit();
    const json = answer.document.json_content as { pages?: Record<string, unknown> } | null | undefined;
    return { input, outputs, pictures: [], pages: json?.pages ? Object.keys(json.pages).length : 0, ocr_pages: 0, seconds: Math.round((performance.now() - began) / 100) / 10, notes: errors, server: credentials.server };
  } finally {
    await staged.discard();
  }
}

export function parseRemoteFiles(inputs: string[], options: RemoteParseOptions) {
  return runEachInput(inputs, { out: options.out, verb: 'parse', past: 'parsed' }, (input) => parseRemotely(input, options), (r) => `${r.input}: ${r.pages} pages on ${r.server} in ${r.seconds.toFixed(1)} s`);
}
