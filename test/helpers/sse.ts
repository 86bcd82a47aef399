// A small text/event-stream reader over Node's fetch, for tests that hold a live stream open against a
// real listening server: it parses frames as EventSource does and lets a test wait for events.

export type SseEvent = { id: string | undefined; event: string; data: string };

/**
 * Parses text/event-stream text as it arrives, as EventSource does: fields gathered until a blank
 * line dispatch an event (if it had data); `retry:` values and comment lines are reported as read.
 * Returns the function to feed each decoded chunk to.
 */
export function sseFrameReader(on: { event(event: SseEvent): void; retry(ms: number): void; comment(text: string): void }): (chunk: string) => void {
  let buffer = '';
  let fields: { id?: string; event?: string; data: string[] } = { data: [] };
  return (chunk) => {
    buffer += chunk;
    let newline: number;
    while ((newline = buffer.search(/\r\n|\r|\n/)) >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + (buffer.startsWith('\r\n', newline) ? 2 : 1));
      if (line === '') {
        if (fields.data.length > 0) on.event({ id: fields.id, event: fields.event ?? 'message', data: fields.data.join('\n') });
        fields = { data: [] };
        continue;
      }
      if (line.startsWith(':')) {
        on.comment(line.slice(1).trim());
        continue;
      }
      const colon = line.indexOf(':');
      const name = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (name === 'data') fields.data.push(value);
      else if (name === 'id') fields.id = value;
      else if (name === 'event') fields.event = value;
      else if (name === 'retry') on.retry(Number(value));
    }
  };
}

export type SseConnection = {
  status: number;
  headers: Headers;
  /** every event so far, in arrival order */
  events: SseEvent[];
  /** comment lines so far (heartbeats), without the leading colon */
  comments: string[];
  /** `retry:` values so far */
  retries: number[];
  /** the body, when the answer was not a stream */
  text: string;
  /** resolves with the first event (from `from` on) that matches, or rejects after `timeoutMs` */
  waitFor(match: (event: SseEvent) => boolean, timeoutMs?: number, from?: number): Promise<SseEvent>;
  /** resolves when the server ends the stream */
  ended: Promise<void>;
  /** disconnects (as a closed tab does) */
  close(): void;
};

export async function openSse(url: string, headers: Record<string, string> = {}): Promise<SseConnection> {
  const abort = new AbortController();
  const response = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: abort.signal });
  const events: SseEvent[] = [];
  const comments: string[] = [];
  const retries: number[] = [];
  const waiters = new Set<() => void>();
  const connection: SseConnection = {
    status: response.status,
    headers: response.headers,
    events,
    comments,
    retries,
    text: '',
    waitFor(match, timeoutMs = 10_000, from = 0) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = events.slice(from).find(match);
          if (found) {
            clearTimeout(timer);
            waiters.delete(check);
            resolve(found);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no matching event within ${timeoutMs} ms; got ${JSON.stringify(events)}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    ended: Promise.resolve(),
    close: () => abort.abort(),
  };
  if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    connection.text = await response.text();
    return connection;
  }

  connection.ended = (async () => {
    const decoder = new TextDecoder();
    const read = sseFrameReader({
      event(event) {
        events.push(event);
        for (const waiter of [...waiters]) waiter();
      },
      retry: (ms) => retries.push(ms),
      comment: (text) => comments.push(text),
    });
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) read(decoder.decode(chunk, { stream: true }));
    } catch (error) {
      if (!abort.signal.aborted) throw error;
    }
  })();
  connection.ended.catch(() => {});
  return connection;
}
