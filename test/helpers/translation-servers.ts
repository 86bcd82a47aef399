// Fake translation services on loopback, shaped like LibreTranslate and like OpenAI's chat
// completions. They "translate" deterministically by prefixing the target code — "[es] The house" —
// record every request, and can be told to fail, stall or misbehave for the next N requests.
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type RecordedRequest = { method: string; path: string; headers: IncomingHttpHeaders; body: unknown };

/** What the next request(s) should meet instead of a good answer. */
export type Trouble =
  | { kind: 'status'; status: number; retryAfter?: string; body?: string }
  | { kind: 'stall' }
  | { kind: 'drop-id' }
  | { kind: 'extra-id' }
  | { kind: 'fence' }
  | { kind: 'wrong-shape' };

export type FakeServer = {
  url: string;
  requests: RecordedRequest[];
  /** Requests to `path` only (e.g. '/translate'), in order. */
  requestsTo(path: string): RecordedRequest[];
  /** The next `times` translation requests meet `trouble`; later ones are answered normally. */
  troubleNext(trouble: Trouble, times?: number): void;
  /** The most translation requests held at the same moment (with `holdUntil`). */
  peakInFlight(): number;
  close(): Promise<void>;
};

/**
 * `holdUntil`: translation requests are held, as a slow remote engine would hold them, until that many
 * are waiting at once — or `holdMs` (default 10 s) after the first of them arrived — then all answered.
 * A test of concurrency then does not depend on how busy the machine is.
 */
export type FakeOptions = { holdUntil?: number; holdMs?: number; /** every translation answer comes this long after its request (a remote engine's latency) */ latencyMs?: number };

type Handler = (request: RecordedRequest, trouble: Trouble | undefined, response: ServerResponse) => void;

export const fakeTranslation = (text: string, target: string): string => `[${target}] ${text}`;

/** `troubled` says which requests the trouble queue applies to (the translation endpoint, not the language list). */
async function startFake(troubled: (path: string) => boolean, handle: Handler, options: FakeOptions = {}): Promise<FakeServer> {
  const requests: RecordedRequest[] = [];
  const queue: Trouble[] = [];
  let peak = 0;
  let held: Array<() => void> = [];
  let holdTimer: NodeJS.Timeout | undefined;
  const release = () => {
    clearTimeout(holdTimer);
    holdTimer = undefined;
    const waiting = held;
    held = [];
    for (const answer of waiting) answer();
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown = raw;
      try {
        body = raw === '' ? undefined : (JSON.parse(raw) as unknown);
      } catch {
        // keep the raw text
      }
      const recorded = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body };
      requests.push(recorded);
      const trouble = troubled(recorded.path) ? queue.shift() : undefined;
      if (trouble?.kind === 'stall') return; // never answer; close() drops the connection
      if (trouble?.kind === 'status') {
        res.writeHead(trouble.status, { 'content-type': 'application/json', ...(trouble.retryAfter ? { 'retry-after': trouble.retryAfter } : {}) });
        res.end(trouble.body ?? JSON.stringify({ error: `fake failure ${trouble.status}` }));
        return;
      }
      if (troubled(recorded.path) && options.latencyMs) {
        setTimeout(() => handle(recorded, trouble, res), options.latencyMs);
        return;
      }
      if (!troubled(recorded.path) || !options.holdUntil) return handle(recorded, trouble, res);
      held.push(() => handle(recorded, trouble, res));
      peak = Math.max(peak, held.length);
      if (held.length >= options.holdUntil) release();
      else holdTimer ??= setTimeout(release, options.holdMs ?? 10_000);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    requestsTo: (path) => requests.filter((r) => r.path === path),
    troubleNext(trouble, times = 1) {
      for (let i = 0; i < times; i++) queue.push(trouble);
    },
    peakInFlight: () => peak,
    close: () =>
      new Promise((resolve) => {
        release();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function field(body: unknown, name: string): unknown {
  return typeof body === 'object' && body !== null && name in body ? (body as Record<string, unknown>)[name] : undefined;
}

export type LibreLanguage = { code: string; name: string; targets: string[] };

const DEFAULT_LANGUAGES: LibreLanguage[] = [
  { code: 'en', name: 'English', targets: ['es', 'zh-Hans'] },
  { code: 'es', name: 'Spanish', targets: ['en'] },
  { code: 'zh-Hans', name: 'Chinese (Simplified)', targets: ['en'] },
];

/** LibreTranslate's /languages and /translate (array q in, array translatedText out). */
export function startLibreTranslateServer(options: { languages?: LibreLanguage[] } = {}): Promise<FakeServer> {
  const languages = options.languages ?? DEFAULT_LANGUAGES;
  return startFake((path) => path === '/translate', (request, trouble, res) => {
    if (request.method === 'GET' && request.path === '/languages') return json(res, 200, languages);
    if (request.method !== 'POST' || request.path !== '/translate') return json(res, 404, { error: 'Not Found' });
    const q = field(request.body, 'q');
    const target = field(request.body, 'target');
    if (!Array.isArray(q) || typeof target !== 'string') return json(res, 400, { error: 'Invalid request: missing q or target' });
    if (trouble?.kind === 'wrong-shape') return json(res, 200, { translation: 'not what LibreTranslate sends' });
    const translated = q.map((text) => fakeTranslation(String(text), target));
    if (trouble?.kind === 'drop-id') translated.pop();
    json(res, 200, { translatedText: translated });
  });
}

/** OpenAI's /v1/chat/completions, answering the JSON array of {id, text} the system prompt asks for. */
export function startOpenAiServer(options: FakeOptions = {}): Promise<FakeServer> {
  return startFake(() => true, (request, trouble, res) => {
    if (request.method !== 'POST' || request.path !== '/v1/chat/completions') return json(res, 404, { error: { message: 'Not Found' } });
    const messages = field(request.body, 'messages');
    const system = Array.isArray(messages) ? String(field(messages[0], 'content')) : '';
    const user = Array.isArray(messages) ? String(field(messages[1], 'content')) : '[]';
    const target = /into [^(\n]*\(([a-zA-Z-]+)\)/.exec(system)?.[1] ?? '??';
    const items = JSON.parse(user) as Array<{ id: number; text: string }>;
    if (trouble?.kind === 'wrong-shape') return json(res, 200, { output: 'not a chat completion' });
    let answer = items.map((item) => ({ id: item.id, text: fakeTranslation(item.text, target) }));
    if (trouble?.kind === 'drop-id') answer = answer.slice(0, -1);
    if (trouble?.kind === 'extra-id') answer.push({ id: items.length + 7, text: 'invented' });
    const content = trouble?.kind === 'fence' ? `\`\`\`json\n${JSON.stringify(answer, null, 2)}\n\`\`\`` : JSON.stringify(answer);
    json(res, 200, {
      id: 'chatcmpl-fake',
      object: 'chat.completion',
      model: field(request.body, 'model'),
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    });
  }, options);
}
