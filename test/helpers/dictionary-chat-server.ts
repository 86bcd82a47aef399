// An OpenAI-compatible chat-completions server on loopback that translates from a dictionary of
// whole segments or, failing that, of their sentences (issue 26: layout checks of en→zh and zh→en pages need real text of the other
// script, deterministic, never the source echoed). A segment it has no entry for is refused (422)
// with the segment named, so a test or the benchmark fails loudly instead of laying out an echo.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export type DictionaryServer = { url: string; missing: string[]; close(): Promise<void> };

const normal = (text: string) => text.replace(/\s+/g, ' ').trim();

export async function startDictionaryChatServer(dictionary: Record<string, string>): Promise<DictionaryServer> {
  const entries = new Map(Object.entries(dictionary).map(([source, target]) => [normal(source), target]));
  const missing: string[] = [];
  // A text whose formulas, numbers and URLs came as tokens (ZQV0QZ, translate/verbatim.ts), as a
  // language model keeps them: the entry whose source matches with each token standing for some
  // text, answered with that text in its translation put back as the token.
  const withTokens = (text: string): string | undefined => {
    if (!/ZQV\d+QZ/.test(text)) return undefined;
    const order = [...text.matchAll(/ZQV\d+QZ/g)].map((m) => m[0]);
    const pattern = new RegExp(`^${text.split(/ZQV\d+QZ/).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('(.+?)')}$`, 'u');
    for (const [source, target] of entries) {
      const match = pattern.exec(source);
      if (!match) continue;
      let answer = target;
      order.forEach((tokenText, k) => { const value = match[k + 1]!; if (answer.includes(value)) answer = answer.replace(value, tokenText); });
      return answer;
    }
    return undefined;
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') return send(404, { error: { message: 'Not Found' } });
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { model?: string; messages: Array<{ content: string }> };
      const items = JSON.parse(body.messages[1]!.content) as Array<{ id: number; text: string }>;
      // Chinese and Japanese join sentences without a space.
      const joiner = /into (Chinese|Japanese)/.test(body.messages[0]!.content) ? '' : ' ';
      // Markup (issue 34: style tags around words) is looked up as its plain text: a dictionary of
      // whole sentences cannot place the tags, so it answers plain text and the tags count as lost.
      const markup = /Each text is HTML/.test(body.messages[0]!.content);
      const plain = (text: string) => (markup ? text.replace(/<[^>]*>/g, '').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&') : text);
      const translate = (source: string): string | undefined => {
        const text = plain(source);
        const whole = entries.get(normal(text)) ?? withTokens(normal(text));
        if (whole !== undefined) return whole;
        // A parser may join or cut paragraphs differently: sentence by sentence, when all are known.
        const sentences = normal(text).split(/(?<=[.!?])\s+|(?<=[。！？])\s*/u).filter((s) => s !== '');
        const parts = sentences.map((sentence) => entries.get(sentence) ?? withTokens(sentence));
        return sentences.length > 1 && parts.every((p) => p !== undefined) ? parts.join(joiner) : undefined;
      };
      const unknown = items.filter((item) => translate(item.text) === undefined);
      if (unknown.length > 0) {
        missing.push(...unknown.map((item) => plain(item.text)));
        return send(422, { error: { message: `no dictionary entry for ${JSON.stringify(unknown[0]!.text.slice(0, 80))}` } });
      }
      const escape = (text: string) => (markup ? text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;') : text);
      const answer = items.map((item) => ({ id: item.id, text: escape(translate(item.text)!) }));
      send(200, { id: 'chatcmpl-dictionary', object: 'chat.completion', model: body.model, choices: [{ index: 0, message: { role: 'assistant', content: JSON.stringify(answer) }, finish_reason: 'stop' }] });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, missing, close: () => new Promise((resolve) => server.close(() => resolve())) };
}
