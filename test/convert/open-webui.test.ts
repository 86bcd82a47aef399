// Open WebUI's "Docling" content-extraction engine, reproduced byte for byte from its source: the
// DoclingLoader of open-webui/open-webui, backend/open_webui/retrieval/loaders/main.py (as of commit
// 005d55056529485abea144f0f0ca1046a5e22c29), calls
//   requests.post(f'{self.url}/v1/convert/file',
//                 files={'files': (self.file_path, f, self.mime_type or 'application/octet-stream')},
//                 data={'image_export_mode': 'placeholder', **self.params},
//                 headers={'X-Api-Key': self.api_key})
// and reads `result.get('document', {}).get('md_content', '<No text content found>')` when `r.ok`, else
// raises with `detail` from the JSON body. `self.params` is DOCLING_PARAMS (booleans and lists as JSON
// text, as its own test_docling_loader.py shows). python-requests (via urllib3) writes that as below;
// where python3 with requests is installed, the test also has requests prepare the same call and
// checks the bytes are the same.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createAccount } from '../../src/accounts/accounts.ts';
import { createApiKey } from '../../src/accounts/api-keys/api-keys.ts';
import { startTaskRunner } from '../../src/worker/task-runner.ts';
import { sqliteDatabase } from '../helpers/databases.ts';
import { startSignet, type RunningSignet } from '../helpers/live-server.ts';
import { SAMPLE, samplePdf } from '../helpers/pdfs.ts';

/** Where Open WebUI keeps an upload (its file_path, which it sends as the file name). */
const FILE_PATH = '/app/backend/data/uploads/4f1c2a9e-0b7d-4c1e-9a51-2f8d6c3b7e10_quarterly report.pdf';
const MIME_TYPE = 'application/pdf';
/** DOCLING_PARAMS as an operator sets them in Open WebUI's admin panel. */
const DOCLING_PARAMS: Array<[string, string]> = [
  ['do_ocr', 'true'],
  ['force_ocr', 'false'],
  ['ocr_engine', 'tesseract'],
  ['ocr_lang', '["en"]'],
  ['pdf_backend', 'dlparse_v4'],
  ['table_mode', 'accurate'],
];
const REQUESTS_VERSION = '2.34.2';

/** The request python-requests sends for DoclingLoader.load(): headers in its order, then the multipart body. */
function openWebUiRequest(host: string, apiKey: string, pdf: Buffer, boundary: string): { head: string; body: Buffer; headers: Array<[string, string]> } {
  const fields: Array<[string, string]> = [['image_export_mode', 'placeholder'], ...DOCLING_PARAMS];
  const chunks: Buffer[] = [];
  for (const [name, value] of fields) chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="${FILE_PATH}"\r\nContent-Type: ${MIME_TYPE}\r\n\r\n`), pdf, Buffer.from(`\r\n--${boundary}--\r\n`));
  const body = Buffer.concat(chunks);
  const headers: Array<[string, string]> = [
    ['User-Agent', `python-requests/${REQUESTS_VERSION}`],
    ['Accept-Encoding', 'gzip, deflate'],
    ['Accept', '*/*'],
    ['Connection', 'keep-alive'],
    ['X-Api-Key', apiKey],
    ['Content-Length', String(body.length)],
    ['Content-Type', `multipart/form-data; boundary=${boundary}`],
  ];
  // http.client writes the request line and Host first, then the prepared headers in order.
  const head = `POST /v1/convert/file HTTP/1.1\r\nHost: ${host}\r\n${headers.map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`;
  return { head, body, headers };
}

/** Sends raw bytes and reads one HTTP/1.1 answer (status and JSON body). */
function sendRaw(port: number, bytes: Buffer): Promise<{ status: number; reason: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    socket.on('data', (chunk) => {
      received.push(chunk);
      const text = Buffer.concat(received).toString('utf8');
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) return;
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(text.slice(0, end))?.[1] ?? NaN);
      const body = Buffer.concat(received).subarray(Buffer.byteLength(text.slice(0, end + 4)));
      if (body.length >= length) {
        socket.end();
        const [, status, reason] = /^HTTP\/1\.1 (\d{3}) ([^\r]*)/.exec(text)!;
        resolve({ status: Number(status), reason: reason!, body: body.toString('utf8') });
      }
    });
    socket.on('error', reject);
    socket.write(bytes);
  });
}

/** What DoclingLoader.load() makes of an answer: the page content, or the exception it raises. */
function readAsOpenWebUi(answer: { status: number; reason: string; body: string }): { page_content: string } | { raised: string } {
  if (answer.status < 400) {
    const result = JSON.parse(answer.body) as { document?: { md_content?: string } };
    const document = result.document ?? {};
    return { page_content: document.md_content ?? '<No text content found>' };
  }
  let message = `Error calling Docling API: ${answer.reason}`;
  const data = JSON.parse(answer.body) as { detail?: unknown };
  if ('detail' in data) message += ` - ${String(data.detail)}`;
  return { raised: `Error calling Docling: ${message}` };
}

const PYTHON_REQUESTS = `
import base64, json, os, sys, requests, urllib3.filepost
urllib3.filepost.choose_boundary = lambda: os.environ['BOUNDARY']
data = {'image_export_mode': 'placeholder', **dict(json.loads(os.environ['PARAMS']))}
pdf = base64.b64decode(sys.stdin.read())
prepared = requests.Session().prepare_request(requests.Request('POST', os.environ['URL'] + '/v1/convert/file',
    files={'files': (os.environ['FILE_PATH'], pdf, os.environ['MIME'])}, data=data, headers={'X-Api-Key': os.environ['KEY']}))
print(json.dumps({'version': requests.__version__, 'headers': list(prepared.headers.items()), 'body': base64.b64encode(prepared.body).decode()}))
`;

describe('Open WebUI\'s docling loader against Signet', () => {
  let database: Awaited<ReturnType<typeof sqliteDatabase>>;
  let signet: RunningSignet;
  let runner: { stop(): Promise<void> };
  let key: string;
  let pdf: Buffer;

  before(async () => {
    database = await sqliteDatabase();
    signet = await startSignet(database);
    const { db, clock, keys, dialect, objects, translator, logger } = signet.deps;
    const person = await createAccount(db, clock, { email: 'owui@example.com', password: 'a long owui password' });
    key = (await createApiKey(db, clock, keys.tokenHash, { sub: person.sub, name: 'Open WebUI' })).key;
    runner = startTaskRunner({ db, dialect, clock: () => Date.now(), objects, translator, logger }, { pollMs: 50, heartbeatMs: 200 });
    pdf = await samplePdf();
  });
  after(async () => {
    await runner.stop();
    await signet.close();
    await database.dispose();
  });

  test('python-requests prepares DoclingLoader\'s call exactly as reproduced here (headers in order, body byte for byte)', (t) => {
    const probe = spawnSync('python3', ['-c', 'import requests'], { encoding: 'utf8' });
    if (probe.status !== 0) return t.skip('python3 with requests is not installed here, so the reproduction is checked against the source only');
    const boundary = randomBytes(16).toString('hex');
    const ours = openWebUiRequest('ignored', 'sgk_0123456789abcdef.secret', pdf, boundary);
    const run = spawnSync('python3', ['-c', PYTHON_REQUESTS], {
      input: pdf.toString('base64'),
      encoding: 'utf8',
      env: { ...process.env, BOUNDARY: boundary, PARAMS: JSON.stringify(DOCLING_PARAMS), URL: signet.baseUrl, FILE_PATH, MIME: MIME_TYPE, KEY: 'sgk_0123456789abcdef.secret' },
    });
    assert.equal(run.status, 0, run.stderr);
    const python = JSON.parse(run.stdout) as { version: string; headers: Array<[string, string]>; body: string };
    assert.ok(Buffer.from(python.body, 'base64').equals(ours.body), 'the multipart body, byte for byte');
    const expected = ours.headers.map(([k, v]) => [k, k === 'User-Agent' ? `python-requests/${python.version}` : v]);
    assert.deepEqual(python.headers, expected, 'the headers, in order');
  });

  test('"Open WebUI\'s docling loader request byte for byte" → 200; it reads document.md_content as its page content', async () => {
    const port = Number(new URL(signet.baseUrl).port);
    const request = openWebUiRequest(`127.0.0.1:${port}`, key, pdf, randomBytes(16).toString('hex'));
    const answer = await sendRaw(port, Buffer.concat([Buffer.from(request.head), request.body]));
    assert.equal(answer.status, 200, answer.body);
    const loaded = readAsOpenWebUi(answer);
    assert.ok('page_content' in loaded, JSON.stringify(loaded));
    assert.ok(loaded.page_content.includes(SAMPLE.title), 'the Markdown of the PDF');
    assert.ok(!loaded.page_content.includes('](pictures/'), 'image_export_mode placeholder: no links to files Open WebUI cannot fetch');
    const parsed = JSON.parse(answer.body) as { document: { filename: string } };
    assert.equal(parsed.document.filename, FILE_PATH.split('/').pop(), 'the file name as sent, without its folders');
  });

  test('with a revoked or wrong key, the loader raises with Signet\'s `detail` in its message (then falls back, as Open WebUI does)', async () => {
    const port = Number(new URL(signet.baseUrl).port);
    const request = openWebUiRequest(`127.0.0.1:${port}`, `${key.slice(0, -4)}AAAA`, pdf, randomBytes(16).toString('hex'));
    const loaded = readAsOpenWebUi(await sendRaw(port, Buffer.concat([Buffer.from(request.head), request.body])));
    assert.ok('raised' in loaded);
    assert.match(loaded.raised, /^Error calling Docling: Error calling Docling API: Unauthorized - The API key is unknown, expired or revoked/);
  });
});
