// `signet mcp` (issue 39, item 3: "the same tools over stdio for a desktop agent on local files … no
// server, no database, no sign-in; parse_pdf and translate_pdf also take a path"), driven by the
// official SDK's Client through its StdioClientTransport, as Claude Desktop or VS Code start it. One
// process for the file; real PDFs from the public fixtures; Debian's Apertium for the translation.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { SIGNET_BIN } from '../helpers/cli.ts';
import { apertiumMissing, skipUnlessAvailable } from '../helpers/services.ts';

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/public');
const CORPUS = path.resolve(import.meta.dirname, '../../bench/translate-pdf/corpus');
const FOUR_PAGES = path.join(FIXTURES, 'normal_4pages.pdf');

const text = (result: CallToolResult, index = 0) => {
  const item = result.content[index];
  assert.equal(item?.type, 'text');
  return (item as { text: string }).text;
};
const links = (result: CallToolResult) => result.content.filter((c) => c.type === 'resource_link') as Array<{ uri: string; name: string; mimeType?: string }>;

describe('signet mcp over stdio (the SDK\'s StdioClientTransport)', () => {
  let client: Client;
  let out: string;
  let work: string;
  let stderr = '';
  const transportErrors: Error[] = [];

  before(async () => {
    work = mkdtempSync(path.join(tmpdir(), 'signet-mcp-test-'));
    out = path.join(work, 'results');
    // --max-mb 1: the amt handbook (0.6 MB) passes, the Debian reference (2.7 MB) is too large.
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [SIGNET_BIN, 'mcp', '--out', out, '--max-mb', '1', '--threads', '1'],
      cwd: work,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    client = new Client({ name: 'signet-test', version: '1.0.0' });
    client.onerror = (error) => transportErrors.push(error);
    await client.connect(transport);
  });

  after(async () => {
    await client?.close();
  });

  test('"the same tools over stdio": tools/list names parse_pdf, translate_pdf, list_tasks, get_task; "parse_pdf and translate_pdf also take a path"', async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name), ['parse_pdf', 'translate_pdf', 'list_tasks', 'get_task']);
    for (const name of ['parse_pdf', 'translate_pdf']) {
      const tool = tools.find((t) => t.name === name)!;
      assert.ok('path' in (tool.inputSchema.properties ?? {}), `${name} takes a path`);
      assert.ok('data' in (tool.inputSchema.properties ?? {}) && 'filename' in (tool.inputSchema.properties ?? {}));
    }
    assert.equal(tools.find((t) => t.name === 'list_tasks')!.annotations?.readOnlyHint, true);
  });

  test('parse_pdf by path: "returns the Markdown as its first text content, with structuredContent {task_id, pages, markdown}"; progress notifications while it runs; the JSON as a file:// link readable through resources/read', async () => {
    const progress: number[] = [];
    const result = (await client.callTool({ name: 'parse_pdf', arguments: { path: path.relative(work, FOUR_PAGES) } }, undefined, { onprogress: (p) => progress.push(p.progress) })) as CallToolResult;
    assert.equal(result.isError, undefined, JSON.stringify(result.content[0]));
    const markdown = text(result);
    const structured = result.structuredContent as { task_id: string; pages: number; markdown: string };
    assert.equal(structured.pages, 4);
    assert.equal(structured.markdown, markdown);
    assert.match(markdown, /코로나-19/, 'the Korean text of the fixture');
    assert.ok(progress.length > 0 && progress.every((p, i) => i === 0 || p > progress[i - 1]!), `progress increases: ${progress.join(',')}`);

    const json = links(result).find((l) => l.name === 'document.json')!;
    assert.ok(json.uri.startsWith('file://'));
    assert.ok(fileURLToPath(json.uri).startsWith(out + path.sep), 'results are in --out');
    const read = await client.readResource({ uri: json.uri });
    const content = read.contents[0] as { text: string; mimeType: string };
    assert.equal(content.mimeType, 'application/json');
    assert.equal((JSON.parse(content.text) as { schema_name: string }).schema_name, 'DoclingDocument');
    const picture = links(result).find((l) => l.name.startsWith('pictures/'))!;
    const png = (await client.readResource({ uri: picture.uri })).contents[0] as { blob: string; mimeType: string };
    assert.equal(png.mimeType, 'image/png');
    assert.deepEqual([...Buffer.from(png.blob, 'base64').subarray(1, 4)], [...Buffer.from('PNG')], 'binary as a base64 blob');

    // task_id of a finished parse: the same Markdown again.
    const again = (await client.callTool({ name: 'parse_pdf', arguments: { task_id: structured.task_id } })) as CallToolResult;
    assert.equal(text(again), markdown);
  });

  test('parse_pdf with base64 data and filename, ocr off: the same engine, the task listed under its filename', async () => {
    const data = readFileSync(path.join(FIXTURES, 'libtasn1-contents-p3.pdf')).toString('base64');
    const result = (await client.callTool({ name: 'parse_pdf', arguments: { data, filename: 'contents.pdf', ocr: 'off' } })) as CallToolResult;
    assert.equal(result.isError, undefined, JSON.stringify(result.content[0]));
    const { task_id } = result.structuredContent as { task_id: string };
    const task = (await client.callTool({ name: 'get_task', arguments: { task_id } })) as CallToolResult;
    assert.equal((task.structuredContent as { source: { name: string } }).source.name, 'contents.pdf');
  });

  const refusals: Array<[string, Record<string, unknown>, RegExp]> = [
    ['not a PDF', { data: Buffer.from('hello, not a pdf').toString('base64'), filename: 'hello.pdf' }, /not a PDF/],
    ['a PDF cut short', { data: readFileSync(FOUR_PAGES).subarray(0, 2000).toString('base64'), filename: 'cut.pdf' }, /cut\.pdf: /],
    ['larger than --max-mb', { path: path.join(CORPUS, 'debian-reference-zh.pdf') }, /larger than 1 MB/],
    ['base64 with foreign characters', { data: '%%%not base64%%%', filename: 'x.pdf' }, /not base64/],
    ['no PDF at all', {}, /Send the PDF: data \(base64\) with filename, or path/],
    ['data without filename', { data: 'JVBERi0=' }, /filename is missing/],
    ['data and path together', { data: 'JVBERi0=', filename: 'x.pdf', path: FOUR_PAGES }, /one way only/],
    ['a path that names nothing', { path: 'missing.pdf' }, /No file at .*missing\.pdf/],
    ['an ocr mode not offered', { path: FOUR_PAGES, ocr: 'sometimes' }, /ocr/],
  ];
  for (const [what, args, reason] of refusals) {
    test(`"A broken or oversized PDF is a tool error with the reason, never a 500": ${what}`, async () => {
      const result = (await client.callTool({ name: 'parse_pdf', arguments: args })) as CallToolResult;
      assert.equal(result.isError, true);
      assert.match(text(result), reason);
    });
  }

  test('translate_pdf by path, source_lang left out: "returns the task and its files (translated.pdf, bilingual.pdf, translated.md) as resource links readable through resources/read (binary as blob)"', { skip: skipUnlessAvailable('Apertium (eng-spa)', apertiumMissing()) }, async () => {
    const result = (await client.callTool({ name: 'translate_pdf', arguments: { path: path.join(CORPUS, 'amt-handbook.pdf'), target_lang: 'es' } }, undefined, { timeout: 240_000 })) as CallToolResult;
    assert.equal(result.isError, undefined, JSON.stringify(result.content[0]));
    const structured = result.structuredContent as { task_id: string; status: string; files: Array<{ name: string; uri: string }> };
    assert.equal(structured.status, 'finished');
    for (const name of ['translated.pdf', 'bilingual.pdf', 'translated.md']) assert.ok(structured.files.some((f) => f.name === name), name);
    assert.ok(!structured.files.some((f) => f.name === 'layout-check.json' || f.name === 'source.pdf'), 'only the translation\'s own files');
    assert.deepEqual(links(result).map((l) => l.uri).sort(), structured.files.map((f) => f.uri).sort());
    const pdf = (await client.readResource({ uri: structured.files.find((f) => f.name === 'translated.pdf')!.uri })).contents[0] as { blob: string; mimeType: string };
    assert.equal(pdf.mimeType, 'application/pdf');
    assert.equal(Buffer.from(pdf.blob, 'base64').subarray(0, 5).toString(), '%PDF-');
    const md = (await client.readResource({ uri: structured.files.find((f) => f.name === 'translated.md')!.uri })).contents[0] as { text: string };
    assert.ok(md.text.length > 200);
    const task = (await client.callTool({ name: 'get_task', arguments: { task_id: structured.task_id } })) as CallToolResult;
    assert.deepEqual((task.structuredContent as { options: object }).options, { source_lang: 'en', target_lang: 'es' }, 'the source language told from the text is recorded');
  });

  test('a call the agent cancels (notifications/cancelled) stops the engine; the local task is recorded as cancelled, not left running', async () => {
    const controller = new AbortController();
    const call = client.callTool({ name: 'parse_pdf', arguments: { path: FOUR_PAGES } }, undefined, { signal: controller.signal, onprogress: () => controller.abort() });
    await assert.rejects(call, /abort/i);
    // The server records the cancellation once its engine has stopped; list_tasks then shows it.
    let status = '';
    for (let i = 0; i < 100 && status !== 'cancelled'; i++) {
      const listed = (await client.callTool({ name: 'list_tasks', arguments: { kind: 'docparse' } })) as CallToolResult;
      status = (listed.structuredContent as { tasks: Array<{ status: string }> }).tasks[0]!.status;
      if (status !== 'cancelled') await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.equal(status, 'cancelled');
  });

  test('list_tasks: newest first, kind filters; get_task of an unknown id is "not found"', async () => {
    const all = (await client.callTool({ name: 'list_tasks', arguments: {} })) as CallToolResult;
    const tasks = (all.structuredContent as { tasks: Array<{ kind: string; created_at: string }> }).tasks;
    assert.ok(tasks.length >= 2);
    assert.deepEqual(tasks.map((t) => t.created_at), tasks.map((t) => t.created_at).sort().reverse());
    const parses = (await client.callTool({ name: 'list_tasks', arguments: { kind: 'docparse' } })) as CallToolResult;
    assert.ok((parses.structuredContent as { tasks: Array<{ kind: string }> }).tasks.every((t) => t.kind === 'docparse'));
    const missing = (await client.callTool({ name: 'get_task', arguments: { task_id: '00000000-0000-4000-8000-000000000000' } })) as CallToolResult;
    assert.equal(missing.isError, true);
    assert.match(text(missing), /No such task/);
  });

  test('resources/read reads only files the tools handed out: a file beside them, or elsewhere on the disk, is "resource not found"', async () => {
    const secret = path.join(work, 'secret.txt');
    writeFileSync(secret, 'not for agents');
    for (const uri of [`file://${secret}`, `file://${out}/tasks/../../secret.txt`, 'file:///etc/passwd', 'signet://tasks/x/files/document.md']) {
      await assert.rejects(client.readResource({ uri }), (error: Error & { code?: number }) => error.code === -32002 && /No such resource/.test(error.message), uri);
    }
  });

  test('"stdout is the protocol": every line the process wrote there was a JSON-RPC message; its words went to stderr', () => {
    assert.deepEqual(transportErrors, []);
    assert.match(stderr, /signet mcp: ready on stdio/);
  });
});
