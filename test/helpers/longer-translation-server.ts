// A LibreTranslate-compatible server on loopback whose output runs about a third longer than its
// input (issue 42: "a LibreTranslate-compatible engine whose output runs about a third longer than
// the source" — Spanish and German translations of short English cells do: "Qty" → "Cantidad").
// Each word of three letters or more is stretched by a third of its own letters ("Animal" →
// "Animalani"), numbers and punctuation stay as they are, and HTML tags (format "html", the markup
// of inline styles) are kept around their stretched words, as a markup-keeping engine keeps them.
// Deterministic, so a layout test on a real page fails the same way every time.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export type LongerServer = { url: string; requests: number; close(): Promise<void> };

/** A word stretched by a third of its letters (rounded up); shorter words and numbers unchanged. */
export function stretchWord(word: string): string {
  const letters = [...word];
  if (letters.length < 3 || !/^\p{L}+$/u.test(word)) return word;
  return word + letters.slice(0, Math.ceil(letters.length / 3)).join('').toLowerCase();
}

/** The "translation": every word stretched, tags (and what is inside them) untouched. */
export function stretchText(text: string): string {
  return text.split(/(<[^>]*>)/).map((part) => (part.startsWith('<') ? part : part.replace(/\p{L}+/gu, stretchWord))).join('');
}

export async function startLongerTranslationServer(languages = [{ code: 'en', name: 'English', targets: ['es'] }, { code: 'es', name: 'Spanish', targets: ['en'] }]): Promise<LongerServer> {
  const state = { requests: 0 };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (req.method === 'GET' && req.url === '/languages') return send(200, languages);
      if (req.method !== 'POST' || req.url !== '/translate') return send(404, { error: 'Not Found' });
      let body: { q?: unknown; target?: unknown };
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof body;
      } catch {
        return send(400, { error: 'Invalid request: body is not JSON' });
      }
      if (typeof body.target !== 'string' || (!Array.isArray(body.q) && typeof body.q !== 'string')) return send(400, { error: 'Invalid request: missing q or target' });
      state.requests++;
      const q = body.q;
      send(200, { translatedText: Array.isArray(q) ? q.map((t) => stretchText(String(t))) : stretchText(q) });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get requests() { return state.requests; },
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}
