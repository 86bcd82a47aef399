import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import path from 'node:path';
import { test } from 'node:test';
import type { Block, ParsedDocument } from '../../src/tasks/engines/document.ts';
import { renderTranslatedPdf } from '../../src/tasks/engines/translate/translated-pdf.ts';
import { batches, needsTranslation, translateDocument } from '../../src/tasks/engines/translate/translate-document.ts';
import { UnsupportedLanguagePairError, type LanguagePair, type Translator } from '../../src/tasks/engines/translate/translator.ts';

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
  assert.deepEqual(translator.batches, [['Page 1 text'], ['Page 2 text'], ['Page 3 text']]);
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

test('the translated PDF opens in pdf.js, keeps Chinese and Spanish accents, and carries Title and Producer "Signet"', async () => {
  const pdf = await renderTranslatedPdf(SAMPLE, { title: 'Informe traducido' });
  assert.equal(pdf.subarray(0, 5).toString('latin1'), '%PDF-');
  const { title, producer, pages } = await pdfText(pdf);
  assert.equal(pages.length, 1, 'one output page for one source page');
  assert.equal(title, 'Informe traducido');
  assert.equal(producer, 'Signet');
  const text = squash(pages[0]!);
  for (const expected of ['文档已翻译', 'Resumendelatraducción', '这是一个测试段落', 'señalizaciónycorrección', '第二点：中文列表项', 'Traduccióncompleta', '已完成', 'Página1', 'Informetrimestral—文档']) {
    assert.ok(text.includes(expected), `"${expected}" extracts back from:\n${pages[0]}`);
  }
});

test("a page whose translation is longer than the page flows on to an extra page of the same size without losing text", async () => {
  const paragraphs = Array.from({ length: 40 }, (_, i) => block('text', `Párrafo ${i + 1}: la traducción continúa en la página siguiente cuando no cabe. 第${i + 1}段。`));
  const doc: ParsedDocument = {
    pages: [
      { pageNo: 1, ...A4, blocks: [block('title', 'Documento largo'), ...paragraphs] },
      { pageNo: 2, ...A4, blocks: [block('text', 'Segunda página de origen')] },
    ],
  };
  const pdf = await renderTranslatedPdf(doc, {});
  const { pages, title } = await pdfText(pdf);
  assert.ok(pages.length >= 3, `expected an extra page, got ${pages.length}`);
  assert.equal(title, 'Documento largo', 'without a title option the first title block names the document');
  const all = squash(pages.join(''));
  for (let i = 1; i <= 40; i++) assert.ok(all.includes(squash(`Párrafo ${i}:`)) && all.includes(`第${i}段。`), `paragraph ${i} is in the PDF`);
  assert.ok(squash(pages.at(-1)!).includes('Segundapáginadeorigen'), 'the next source page starts on its own page');
  const pdfjs = await import('pdfjs-dist/legacy/build/pdf.mjs');
  const task = pdfjs.getDocument({ data: new Uint8Array(pdf) });
  const { view } = await (await task.promise).getPage(2);
  assert.deepEqual(view, [0, 0, A4.width, A4.height], 'the overflow page has the source page size');
  await task.destroy();
});

test('a table longer than the page continues on the next page, its header row repeated, without losing a row', async () => {
  const rows = [['Nombre', 'Valor'], ...Array.from({ length: 80 }, (_, i) => [`Fila ${i + 1}`, `Valor número ${i + 1}`])];
  const pdf = await renderTranslatedPdf({ pages: [{ pageNo: 1, ...A4, blocks: [block('table', '', { cells: rows })] }] }, {});
  const { pages } = await pdfText(pdf);
  assert.ok(pages.length >= 2, `expected the table to need two pages, got ${pages.length}`);
  for (const page of pages) assert.ok(page.includes('Nombre'), 'each page starts with the header row');
  const all = squash(pages.join(''));
  for (let i = 1; i <= 80; i++) assert.ok(all.includes(`Fila${i}Valornúmero${i}`), `row ${i} is in the PDF`);
});

test('renderTranslatedPdf stops when the signal is aborted', async () => {
  await assert.rejects(renderTranslatedPdf(SAMPLE, { signal: AbortSignal.abort(new Error('stopped')) }), /stopped/);
});
