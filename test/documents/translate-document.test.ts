import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import path from 'node:path';
import { test } from 'node:test';
import type { Block, ParsedDocument } from '../../src/documents/document.ts';
import { batches, needsTranslation, translateDocument } from '../../src/documents/translate/translate-document.ts';
import { UnsupportedLanguagePairError, type LanguagePair, type Translator } from '../../src/documents/translate/translator.ts';

const A4 = { width: 595, height: 842 };
const EN_ES = { source: 'en', target: 'es' };

function block(label: Block['label'], text: string, extra: Partial<Block> = {}): Block {
  return { label, text, bbox: { l: 72, t: 770, r: 523, b: 750 }, fontSize: 11, bold: false, ...extra };
}

/** A translator that upper-cases and records each batch it is sent. */
function recordingTranslator(pairs: LanguagePair[] | undefined = [EN_ES]): Translator & { batches: string[][] } {
  const sent: string[][] = [];
  return {
    engine: 'libretranslate',
    batches: sent,
    async languagePairs() {
      return pairs;
    },
    async translate(segments) {
      sent.push(segments);
      return segments.map((s) => s.toUpperCase());
    },
  };
}

/** The PDF's text per page, as pdf.js extracts it. */
async function pdfText(pdf: Buffer): Promise<{ title: unknown; producer: unknown; pages: string[] }> {
  const pdfjs = await import('pdfjs-dist/legacy/build/pdf.mjs');
  const cMapUrl = `${path.join(path.dirname(createRequire(import.meta.url).resolve('pdfjs-dist/package.json')), 'cmaps')}/`;
  const task = pdfjs.getDocument({ data: new Uint8Array(pdf), cMapUrl, cMapPacked: true });
  const loaded = await task.promise;
  try {
    const pages: string[] = [];
    for (let n = 1; n <= loaded.numPages; n++) {
      const content = await (await loaded.getPage(n)).getTextContent();
      pages.push(content.items.map((item) => ('str' in item ? item.str + (item.hasEOL ? '\n' : '') : '')).join(''));
    }
    const { info } = await loaded.getMetadata();
    const fields = (typeof info === 'object' && info !== null ? info : {}) as Record<string, unknown>;
    return { title: fields.Title, producer: fields.Producer, pages };
  } finally {
    await task.destroy();
  }
}

/** Extracted text with line breaks and wrapping spaces removed, for "did every word survive" checks. */
const squash = (text: string) => text.replace(/\s+/g, '');

const SAMPLE: ParsedDocument = {
  pages: [
    {
      pageNo: 1,
      ...A4,
      blocks: [
        block('page_header', 'Informe trimestral — 文档'),
        block('title', '文档已翻译', { fontSize: 22, bold: true }),
        block('section_header', 'Resumen de la traducción', { level: 1, bold: true }),
        block('text', 'La traducción automática conserva la estructura: títulos, listas y tablas. 这是一个测试段落，用于检查中文字形是否正确显示。'),
        block('list_item', 'Primer punto: señalización y corrección'),
        block('list_item', '第二点：中文列表项'),
        block('table', 'Idioma | Estado', {
          cells: [
            ['Idioma', 'Estado'],
            ['Español', 'Traducción completa'],
            ['中文', '已完成'],
          ],
        }),
        block('page_footer', 'Página 1'),
      ],
    },
  ],
};

test('translateDocument keeps every block (label, box, level, table shape) and translates its text and cells', async () => {
  const translated = await translateDocument(SAMPLE, recordingTranslator(), EN_ES);
  const source = SAMPLE.pages[0]!.blocks;
  const result = translated.pages[0]!.blocks;
  assert.equal(result.length, source.length);
  result.forEach((b, i) => {
    assert.equal(b.label, source[i]!.label);
    assert.deepEqual(b.bbox, source[i]!.bbox);
    assert.equal(b.level, source[i]!.level);
    assert.equal(b.text, source[i]!.text.toUpperCase(), 'page headers and footers are translated too');
  });
  assert.deepEqual(result[6]!.cells, source[6]!.cells!.map((row) => row.map((c) => c.toUpperCase())));
  assert.equal(SAMPLE.pages[0]!.blocks[1]!.text, '文档已翻译', 'the source document is left unchanged');
});

test('translateDocument reports progress once per page, after that page is translated', async () => {
  const pages = [1, 2, 3].map((pageNo) => ({ pageNo, ...A4, blocks: [block('text', `Page ${pageNo} text`)] }));
  const reports: Array<[number, number]> = [];
  const translator = recordingTranslator();
  await translateDocument({ pages }, translator, EN_ES, { onProgress: (done, total) => void reports.push([done, total]) });
  assert.deepEqual(reports, [[1, 3], [2, 3], [3, 3]]);
  // Issue 42: numbers go to the engine as tokens ("Page ZQV0QZ text") and come back as the source's.
  assert.deepEqual(translator.batches, [['Page ZQV0QZ text'], ['Page ZQV0QZ text'], ['Page ZQV0QZ text']]);
});

test('empty, whitespace-only and number-only segments are not sent, and keep their text', async () => {
  const translator = recordingTranslator();
  const doc = { pages: [{ pageNo: 1, ...A4, blocks: [block('text', '   '), block('page_footer', '12'), block('text', '3.2 %'), block('text', 'Words')] }] };
  const translated = await translateDocument(doc, translator, EN_ES);
  assert.deepEqual(translator.batches, [['Words']]);
  assert.deepEqual(translated.pages[0]!.blocks.map((b) => b.text), ['   ', '12', '3.2 %', 'WORDS']);
  assert.equal(needsTranslation('(iv)'), true);
  assert.equal(needsTranslation('— 4 —'), false);
});

test('segments are sent in batches of at most batchChars characters, and a repeated header only once', async () => {
  const translator = recordingTranslator();
  const blocks = [block('page_header', 'Header'), ...Array.from({ length: 5 }, (_, i) => block('text', `${'x'.repeat(35)}${i}`))];
  const doc = { pages: [1, 2].map((pageNo) => ({ pageNo, ...A4, blocks })) };
  await translateDocument(doc, translator, EN_ES, { batchChars: 100 });
  assert.ok(translator.batches.every((b) => b.join('').length <= 100 || b.length === 1));
  assert.deepEqual(translator.batches.flat().filter((s) => s === 'Header'), ['Header']);
  assert.deepEqual(batches(['a'.repeat(150), 'b'], 100), [['a'.repeat(150)], ['b']]);
});

test('a pair the engine does not list is refused before anything is sent', async () => {
  const translator = recordingTranslator([EN_ES]);
  await assert.rejects(translateDocument(SAMPLE, translator, { source: 'en', target: 'zh' }), UnsupportedLanguagePairError);
  assert.deepEqual(translator.batches, []);
});
