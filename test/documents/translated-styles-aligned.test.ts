// Issue 42: "Inline styles for the zh pairs: where the engine drops the tags, align styled words by
// dictionary alignment (a translation of the styled source word found in the output), counted as
// kept only when found". Debian Reference's Chinese page (blue links, bold terms) zh→en through the
// OpenAI-compatible dictionary server on loopback, which answers plain text and so drops every tag.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { extractDocument } from '../../src/documents/pdf/extract.ts';
import { createOpenAi } from '../../src/documents/translate/openai.ts';
import { alignStyles, toMarkup } from '../../src/documents/translate/styles.ts';
import { translateDocument } from '../../src/documents/translate/translate-document.ts';
import { startDictionaryChatServer, type DictionaryServer } from '../helpers/dictionary-chat-server.ts';

const corpus = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../bench/translate-pdf/corpus');

describe('inline styles kept by dictionary alignment when the engine drops the tags (issue 42)', () => {
  let server: DictionaryServer;
  before(async () => { server = await startDictionaryChatServer(JSON.parse(readFileSync(path.join(corpus, 'zh-en.json'), 'utf8')) as Record<string, string>); });
  after(() => server.close());

  test('"a translation of the styled source word found in the output": Debian Reference p. 100 zh→en keeps every styled word, the link in its blue', async () => {
    const parsed = await extractDocument(new Uint8Array(readFileSync(path.join(corpus, 'debian-reference-zh.pdf'))));
    const translated = await translateDocument(parsed, createOpenAi({ url: server.url, model: 'dictionary' }), { source: 'zh', target: 'en' });
    const blocks = translated.pages.flatMap((p) => p.blocks).filter((b) => b.styledWords);
    const styled = blocks.reduce((n, b) => n + b.styledWords!, 0);
    const lost = blocks.reduce((n, b) => n + (b.stylesLost ?? 0), 0);
    assert.ok(styled >= 20, `the page has styled words (${styled})`);
    assert.equal(lost, 0, 'every styled word found in the translation');
    const link = parsed.pages.flatMap((p) => p.blocks).find((b) => b.spans?.some((s) => s.text.includes('Debian Linux 内核手册')))!;
    const linkStyle = link.spans!.find((s) => s.text.includes('Debian Linux 内核手册'))!;
    const out = translated.pages.flatMap((p) => p.blocks).find((b) => b.text.includes('Debian Linux Kernel Handbook'))!;
    assert.deepEqual(out.spans?.find((s) => s.text.includes('Debian Linux Kernel Handbook'))?.color, linkStyle.color);
    assert.equal(server.missing.length, 0, 'the dictionary answered every segment');
  });

  test('"counted as kept only when found": a styled word whose translation is not in the output stays in the block\'s style and counts as lost', () => {
    const block = { spans: [{ text: 'Read the ' }, { text: 'manual', bold: true }, { text: ' and the ' }, { text: 'guide', italic: true }, { text: ' now.' }] };
    const markup = toMarkup(block)!;
    const stretches = [{ text: 'manual', bold: true }, { text: 'guide', italic: true }];
    const aligned = alignStyles('Lea el manual y la guía ahora.', stretches, markup, new Map([['manual', 'manual'], ['guide', 'guida']]));
    assert.deepEqual(aligned.spans, [{ text: 'Lea el ' }, { text: 'manual', bold: true }, { text: ' y la guía ahora.' }]);
    assert.equal(aligned.stylesLost, 1);
  });
});
