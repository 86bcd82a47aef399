// The tools bound to a person's tasks (src/agents/task-backend.ts) without HTTP: a real SQLite
// database and file storage, the registry on the SDK's server, called by the SDK's client through its
// in-memory transport (so inputs and outputs are checked against the tools' schemas). What /mcp's end-to-end
// test cannot reach cheaply: a task no worker takes (the wait ends, the task goes on), and a server
// with no translation engine.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createAccount } from '../../src/accounts/accounts.ts';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createAgentServer } from '../../src/agents/registry.ts';
import { createTaskBackend, type TaskBackendOptions } from '../../src/agents/task-backend.ts';
import { manualClock } from '../../src/config/clock.ts';
import { listTasks, type TaskContext } from '../../src/tasks/tasks.ts';
import { openObjectStore, parseStorageUrl } from '../../src/storage/open.ts';
import { sqliteDatabase } from '../helpers/databases.ts';

const PDF = readFileSync(path.resolve(import.meta.dirname, '../fixtures/public/libtasn1-contents-p3.pdf')).toString('base64');
const text = (result: CallToolResult) => (result.content[0] as { type: 'text'; text: string }).text;

/** The registry bound to the person's tasks, and an SDK client connected to it in memory. */
async function connect(options: TaskBackendOptions, unexpected: (error: unknown) => string = () => 'The server could not complete the call. Try again later.'): Promise<Client> {
  const server = createAgentServer(createTaskBackend(options), { name: 'signet', version: 'test', instructions: '', unexpected });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'test', version: '1' });
  await client.connect(clientSide);
  return client;
}
const call = async (client: Client, name: string, args: Record<string, unknown>, onprogress?: (p: { message?: string }) => void) =>
  (await client.callTool({ name, arguments: args }, undefined, onprogress ? { onprogress } : {})) as CallToolResult;

describe('agents: the tools on a person\'s tasks', () => {
  let database: Awaited<ReturnType<typeof sqliteDatabase>>;
  let ctx: TaskContext;
  let sub: string;

  before(async () => {
    database = await sqliteDatabase();
    const clock = manualClock();
    ctx = { db: database.db, dialect: database.dialect, clock, objects: openObjectStore(parseStorageUrl(`file:${mkdtempSync(path.join(tmpdir(), 'signet-agents-'))}`)), translator: undefined, uploadMaxBytes: 1024 * 1024 };
    sub = (await createAccount(database.db, clock, { email: 'agent-owner@example.com', password: 'a long password here' })).sub;
  });
  after(() => database?.dispose());

  test('"the task goes on": when no worker finishes it within the wait, parse_pdf answers with the task as it is and how to pick it up, not an error', async () => {
    const client = await connect({ ctx, sub, locale: 'en', pollMs: 5, maxWaitMs: 30 });
    const progress: string[] = [];
    const result = await call(client, 'parse_pdf', { data: PDF, filename: 'later.pdf' }, (p) => progress.push(p.message ?? ''));
    assert.equal(result.isError, undefined, text(result));
    assert.match(text(result), /still queued .*Call get_task with this task_id later/);
    const { task_id, status, markdown } = result.structuredContent as { task_id: string; status: string; markdown: string };
    assert.deepEqual([status, markdown], ['queued', ''], 'the output schema\'s shape, with status');
    assert.deepEqual(progress, ['queued: waiting for a worker'], 'one notification: progress is sent only when it increases');
    const listed = await listTasks(ctx, sub, 'docparse', {});
    assert.deepEqual(listed.tasks.map((t) => t.id), [task_id], 'in the person\'s task list');
    const looked = await call(client, 'get_task', { task_id });
    assert.equal((looked.structuredContent as { status: string }).status, 'queued');
  });

  test('a server shutting down does not wait for tool calls that wait on tasks: they answer at once with the task as it is, which runs on', async () => {
    const stopping = new AbortController();
    const client = await connect({ ctx, sub, locale: 'en', pollMs: 5, maxWaitMs: 10 * 60_000, stopping: stopping.signal });
    const answer = call(client, 'parse_pdf', { data: PDF, filename: 'during-shutdown.pdf' }, () => stopping.abort());
    const result = await answer;
    assert.equal(result.isError, undefined, text(result));
    assert.equal((result.structuredContent as { status: string }).status, 'queued');
    assert.match(text(result), /Call get_task with this task_id later/);
  });

  test('a parse with ocr off or force is refused with the reason while tasks record no OCR mode (never silently ignored)', async () => {
    const client = await connect({ ctx, sub, locale: 'en', pollMs: 5, maxWaitMs: 30 });
    const result = await call(client, 'parse_pdf', { data: PDF, filename: 'x.pdf', ocr: 'force' });
    assert.equal(result.isError, true);
    assert.match(text(result), /ocr force is not available on this server yet/);
  });

  test('translate_pdf on a server with no translation engine: the task fails at once "with a message that names the setting to add", as a tool error', async () => {
    const client = await connect({ ctx, sub, locale: 'en', pollMs: 5, maxWaitMs: 1000 });
    const result = await call(client, 'translate_pdf', { data: PDF, filename: 'x.pdf', target_lang: 'es' });
    assert.equal(result.isError, true);
    assert.match(text(result), /SIGNET_TRANSLATE_ENGINE/);
  });

  test('an unexpected failure (here the database closed under the tools) is a tool error in words for the agent, never the internal message; the error itself goes to the operator', async () => {
    const closed = await sqliteDatabase();
    await closed.dispose();
    const seen: unknown[] = [];
    const client = await connect({ ctx: { ...ctx, db: closed.db }, sub, locale: 'en', pollMs: 5, maxWaitMs: 30 }, (error) => {
      seen.push(error);
      return 'The server could not complete the call. Try again later.';
    });
    const result = await call(client, 'list_tasks', {});
    assert.equal(result.isError, true);
    assert.equal(text(result), 'The server could not complete the call. Try again later.');
    assert.equal(seen.length, 1, 'the operator\'s side got the error');
    await assert.rejects(client.readResource({ uri: 'signet://tasks/00000000-0000-4000-8000-000000000000/files/document.md' }), /could not complete the call/);
  });

  test('an upload over SIGNET_UPLOAD_MAX_MB is refused before any task is made', async () => {
    const client = await connect({ ctx, sub, locale: 'en', pollMs: 5, maxWaitMs: 30 });
    const before = (await listTasks(ctx, sub, 'docparse', {})).tasks.length;
    const result = await call(client, 'parse_pdf', { data: Buffer.alloc(1024 * 1024 + 1).toString('base64'), filename: 'big.pdf' });
    assert.equal(result.isError, true);
    assert.match(text(result), /larger than 1 MB/);
    assert.equal((await listTasks(ctx, sub, 'docparse', {})).tasks.length, before);
  });
});
