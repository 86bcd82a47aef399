// Issue 17's table and text-role rules, each on a generated PDF whose structure is known by
// construction, read through the whole pipeline (reader process → layout → exports).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { DoclingDocument } from '../../src/documents/export/docling.ts';
import { runDocparse } from '../../src/documents/parse.ts';
import type { Block, ParsedDocument } from '../../src/documents/document.ts';
import type { TextRun } from '../../src/documents/layout/geometry.ts';
import { readFromRule } from '../../src/documents/pdf/ocr-page.ts';
import { skipUnlessAvailable } from '../helpers/services.ts';
import { scanPdf, scanToolsMissing, tesseractMissing } from '../helpers/scans.ts';
import { BOOKTABS, columnsWithFigurePdf, FIGURE_COLUMNS, RULED, ruledTablePdf, ruleOnlyTablePdf, STREAM, streamTablePdf, TITLED, titledPdf, twoColumnProsePdf } from '../helpers/layout-pdfs.ts';

async function parse(pdf: Buffer): Promise<{ document: ParsedDocument; markdown: string; json: DoclingDocument }> {
  const { document, markdown, json } = await runDocparse(pdf, { name: 'case' });
  return { document, markdown, json: JSON.parse(json) as DoclingDocument };
}

const blocksOf = (doc: ParsedDocument): Block[] => doc.pages.flatMap((p) => p.blocks);
const tablesOf = (doc: ParsedDocument) => blocksOf(doc).filter((b) => b.label === 'table');

describe('tables, all three kinds (issue 17 item 1)', () => {
  test('rule-only table: "horizontal rules only … the rules bound the table, columns come from the alignment of the text between them"; "numbers stay in their row"', async () => {
    const { document, markdown } = await parse(await ruleOnlyTablePdf());
    const [table, ...more] = tablesOf(document);
    assert.equal(more.length, 0, 'one table');
    assert.deepEqual(table?.cells, [[BOOKTABS.group, '', ''], BOOKTABS.header, ...BOOKTABS.body]);
    // The group heading spans two columns, so the Markdown table is HTML (issue 25: "spanning header cells … as HTML tables in Markdown").
    assert.match(markdown, /<tr><td>Gnat<\/td><td>per gram<\/td><td>13\.65<\/td><\/tr>/);
  });

  test('rule-only table: "partial rules under a group heading" make a spanning header cell (col_span 2), and rows above the mid-rule are column headers', async () => {
    const { document, json } = await parse(await ruleOnlyTablePdf());
    const cells = tablesOf(document)[0]?.table?.cells ?? [];
    const group = cells.find((c) => c.text === BOOKTABS.group);
    assert.deepEqual([group?.row, group?.col, group?.colSpan], [0, 0, 2]);
    assert.ok(cells.filter((c) => c.row <= 1 && c.text !== '').every((c) => c.columnHeader), 'header rows');
    assert.ok(cells.filter((c) => c.row > 1).every((c) => !c.columnHeader), 'body rows');
    const docling = json.tables[0]?.data.table_cells.find((c) => c.text === BOOKTABS.group);
    assert.deepEqual([docling?.col_span, docling?.start_col_offset_idx, docling?.end_col_offset_idx, docling?.column_header], [2, 0, 2, true]);
  });

  test('caption attached: "caption (attached to its table or picture)"', async () => {
    const { document, json } = await parse(await ruleOnlyTablePdf());
    const blocks = document.pages[0]?.blocks ?? [];
    const caption = blocks.find((b) => b.text === BOOKTABS.caption);
    assert.equal(caption?.label, 'caption');
    assert.equal(blocks[caption?.captionOf?.index ?? -1]?.label, 'table');
    const ref = json.tables[0]?.captions[0]?.$ref ?? '';
    assert.equal(json.texts[Number(ref.split('/').at(-1))]?.text, BOOKTABS.caption);
  });

  test('ruled table with a column rule: "every drawn rule that separates text is a cell boundary" (gram | $13.65 are two cells)', async () => {
    const { document } = await parse(await ruledTablePdf());
    const [table, ...more] = tablesOf(document);
    assert.equal(more.length, 0);
    assert.deepEqual(table?.cells, RULED.rows);
  });

  test('stream table: "no rules at all: columns found from aligned whitespace gaps over several consecutive lines"', async () => {
    const { document, markdown } = await parse(await streamTablePdf());
    const [table, ...more] = tablesOf(document);
    assert.equal(more.length, 0);
    assert.deepEqual(table?.cells, STREAM.rows);
    assert.match(markdown, /\| South \| 987 \| 38,002 \| -1\.4% \|/);
    assert.ok(table?.table?.cells.filter((c) => c.row === 0).every((c) => c.columnHeader), 'the first row, without numbers over rows of numbers, is the header');
  });

  test('no table from two-column prose: "ordinary paragraphs and two-column text never become tables"', async () => {
    const { document } = await parse(await twoColumnProsePdf());
    assert.equal(tablesOf(document).length, 0);
    assert.equal(blocksOf(document).filter((b) => b.label === 'text').length, 6, 'three paragraphs in each column');
  });
});

describe('text roles (issue 17 item 2)', () => {
  test('title once: "title (once, from the first page\'s largest text)", its footnote mark part of its line', async () => {
    const { document, markdown } = await parse(await titledPdf());
    const titles = blocksOf(document).filter((b) => b.label === 'title');
    assert.deepEqual(titles.map((b) => b.text.replace(/\s*\*$/, '')), [TITLED.title]);
    assert.equal(markdown.split('\n').filter((line) => /^# /.test(line)).length, 1, 'one # heading');
  });

  test('no tiny headings: "no heading is ever one or two characters"; the author and address lines of the title page are text', async () => {
    const { document } = await parse(await titledPdf());
    const headings = blocksOf(document).filter((b) => b.label === 'section_header' || b.label === 'title');
    assert.ok(headings.every((b) => b.text.replace(/[\s\p{P}\p{S}]/gu, '').length > 2), JSON.stringify(headings.map((b) => b.text)));
    for (const line of [TITLED.author, TITLED.address]) assert.equal(blocksOf(document).find((b) => b.text.includes(line))?.label, 'text', line);
  });

  test('"numbered headings such as 2.1 … get their depth from the number"', async () => {
    const { document, markdown } = await parse(await titledPdf());
    const sections = blocksOf(document).filter((b) => b.label === 'section_header');
    assert.deepEqual(sections.map((b) => [b.text, b.level]), TITLED.sections.map((s) => [s.text, s.level]));
    assert.match(markdown, /^## 1 Introduction$/m);
    assert.match(markdown, /^### 1\.1 A note on terminology$/m);
  });

  test('page numbers in furniture: "running heads and page numbers go to furniture, never the body"', async () => {
    const { document, markdown, json } = await parse(await titledPdf());
    for (const page of document.pages) assert.equal(page.blocks.find((b) => b.text === String(page.pageNo))?.label, 'page_footer', `page ${page.pageNo}`);
    assert.doesNotMatch(markdown, /^\d$/m);
    assert.ok(json.texts.filter((t) => t.text === '2').every((t) => t.content_layer === 'furniture'));
  });

  test('"footnote" below the body, with its mark', async () => {
    const { document } = await parse(await titledPdf());
    const footnote = document.pages[0]?.blocks.find((b) => b.text.includes(TITLED.footnote));
    assert.equal(footnote?.label, 'footnote');
  });
});

describe('reading order (issue 17 item 3)', () => {
  test('reading order: full-width figure between columns placed where it belongs — "full-width titles and figures in between columns placed where they belong"', async () => {
    const pictures: string[] = [];
    const options = { name: 'case', onPicture: async (name: string) => void pictures.push(name) };
    const { markdown } = await runDocparse(await columnsWithFigurePdf(), options);
    const expected = [`# ${FIGURE_COLUMNS.title}`, `## ${FIGURE_COLUMNS.headings[0]}`, FIGURE_COLUMNS.upper[0], FIGURE_COLUMNS.upper[1], `## ${FIGURE_COLUMNS.headings[1]}`, FIGURE_COLUMNS.upper[2], FIGURE_COLUMNS.upper[3], `![${FIGURE_COLUMNS.caption}](pictures/page-1-1.png)`, ...FIGURE_COLUMNS.lower];
    const at = expected.map((text) => markdown.indexOf(text ?? ''));
    assert.ok(at.every((i) => i >= 0), `every part found: ${JSON.stringify(expected.filter((_, i) => (at[i] ?? -1) < 0))}\n${markdown}`);
    assert.deepEqual([...at].sort((a, b) => a - b), at, `in reading order:\n${markdown}`);
    assert.deepEqual(pictures, ['pictures/page-1-1.png']);
  });
});

const ocrSkip = skipUnlessAvailable('poppler (pdftoppm)', scanToolsMissing()) || skipUnlessAvailable('tesseract (eng)', tesseractMissing());

describe('headings on scanned pages (issue 17 items 2 and 4)', { skip: ocrSkip }, () => {
  test('numbered heading on a scan: "numbered headings such as 2.1 … get their depth from the number" even where OCR cannot see that the line is bold', async () => {
    const { document, markdown } = await parse(await scanPdf(await titledPdf(), 300));
    assert.ok(document.pages.every((p) => p.textSource === 'ocr'));
    const sections = blocksOf(document).filter((b) => b.label === 'section_header');
    assert.deepEqual(sections.map((b) => [b.text, b.level]), TITLED.sections.map((s) => [s.text, s.level]), markdown);
    assert.match(markdown, /^### 1\.1 A note on terminology$/m, 'the heading set only one point larger than the body, in bold, is its own block');
  });
});

describe('rules on scanned pages (issue 17 items 1 and 4)', () => {
  test('a drawn vertical rule read by OCR as "|" is the rule, not text: it never joins two table cells ("armadillo | frozen")', () => {
    const rule = { x1: 200, x2: 200.4, y1: 100, y2: 160 };
    const bar: TextRun = { text: '|', x: 198.5, y: 110, width: 3, size: 10, bold: false, hasEOL: false };
    assert.equal(readFromRule(bar, [rule]), true);
    assert.equal(readFromRule({ ...bar, text: 'll' }, [rule]), true, 'a double rule read as two letters');
    assert.equal(readFromRule({ ...bar, x: 300 }, [rule]), false, 'a bar away from any rule is text');
    assert.equal(readFromRule({ ...bar, y: 300 }, [rule]), false, 'beyond the rule\'s ends it is text');
    assert.equal(readFromRule({ ...bar, text: 'frozen' }, [rule]), false, 'a word is never dropped');
    assert.equal(readFromRule(bar, [{ x1: 150, x2: 250, y1: 110, y2: 110.5 }]), false, 'a horizontal rule does not count');
  });
});
