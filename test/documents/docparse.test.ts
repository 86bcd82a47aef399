import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { before, describe, test } from 'node:test';
import type { DoclingDocument } from '../../src/documents/export/docling.ts';
import { pipeTable, toMarkdown } from '../../src/documents/export/markdown.ts';
import { runDocparse } from '../../src/documents/parse.ts';
import type { Block, ParsedDocument } from '../../src/documents/document.ts';
import { fontPaths } from '../../src/documents/fonts.ts';
import { NotAPdfError, UnreadablePdfError } from '../../src/documents/pdf/errors.ts';
import { extractDocument, inspectPdf } from '../../src/documents/pdf/extract.ts';
import { corruptPdf, notAPdf, passwordPdf, plainPdf, SAMPLE, samplePdf } from '../helpers/pdfs.ts';

/** Asserts that every needle occurs in haystack, each after the previous one. */
function assertInOrder(haystack: string, needles: readonly string[]): void {
  let from = 0;
  for (const needle of needles) {
    const at = haystack.indexOf(needle, from);
    assert.ok(at >= 0, `expected ${JSON.stringify(needle)} after offset ${from} in:\n${haystack}`);
    from = at + needle.length;
  }
}

/** The Markdown section of one page: from its `<!-- page N -->` marker to the next. */
function pageSection(markdown: string, pageNo: number): string {
  const start = markdown.indexOf(`<!-- page ${pageNo} -->`);
  const next = markdown.indexOf(`<!-- page ${pageNo + 1} -->`);
  assert.ok(start >= 0, `page ${pageNo} has a section`);
  return markdown.slice(start, next < 0 ? undefined : next);
}

describe('the sample PDF', () => {
  let pdf: Buffer;
  let markdown: string;
  let json: DoclingDocument;
  let document: ParsedDocument;
  let progress: Array<[number, number]>;
  const blocks = (pageNo: number): Block[] => document.pages[pageNo - 1]?.blocks ?? [];

  before(async () => {
    pdf = await samplePdf();
    progress = [];
    const result = await runDocparse(pdf, { onProgress: (done, total) => void progress.push([done, total]), name: 'sample' });
    ({ markdown, document } = result);
    json = JSON.parse(result.json) as DoclingDocument;
  });

  test("every page's text is present, in reading order", () => {
    assertInOrder(pageSection(markdown, 1), [SAMPLE.title, SAMPLE.intro, SAMPLE.listHeading, ...SAMPLE.listItems, SAMPLE.notesHeading, SAMPLE.notes]);
    assertInOrder(pageSection(markdown, 2), [SAMPLE.columnsHeading, ...SAMPLE.leftColumn, ...SAMPLE.rightColumn, SAMPLE.closing]);
    assertInOrder(pageSection(markdown, 3), [SAMPLE.tableHeading, SAMPLE.tableIntro, ...SAMPLE.table.flat(), ...SAMPLE.steps, SAMPLE.afterTable]);
    assertInOrder(pageSection(markdown, 4), [SAMPLE.chineseHeading, SAMPLE.chinese]);
  });

  test('the large bold heading on page 1 becomes a Markdown heading (# …), smaller subheadings ##', () => {
    assert.match(markdown, new RegExp(`^# ${SAMPLE.title}$`, 'm'));
    for (const subheading of [SAMPLE.listHeading, SAMPLE.notesHeading, SAMPLE.columnsHeading, SAMPLE.tableHeading, SAMPLE.chineseHeading]) {
      assert.match(markdown, new RegExp(`^## ${subheading}$`, 'm'));
    }
    const [title] = blocks(1).filter((b) => b.label === 'title');
    assert.deepEqual([title?.text, title?.bold, title?.level], [SAMPLE.title, true, 1]);
  });

  test('the two-column page reads the whole left column before the right, then the full-width paragraph', () => {
    const order = blocks(2).filter((b) => b.label === 'text').map((b) => b.text);
    assert.deepEqual(order, [...SAMPLE.leftColumn, ...SAMPLE.rightColumn, SAMPLE.closing]);
    const markers = pageSection(markdown, 2).match(/\b[AB][1-8]\b/g);
    assert.deepEqual(markers, ['A1', 'A2', 'A3', 'A4', 'A5', 'A6', 'A7', 'A8', 'B1', 'B2', 'B3', 'B4', 'B5', 'B6', 'B7', 'B8']);
  });

  test('the ruled table becomes a table block with the right cells, and a pipe table in Markdown', () => {
    const tables = blocks(3).filter((b) => b.label === 'table');
    assert.equal(tables.length, 1);
    assert.deepEqual(tables[0]?.cells, SAMPLE.table);
    assert.ok(markdown.includes(['| Name | Score | Grade |', '| --- | --- | --- |', '| Alice | 91 | A |', '| Bob | 78 | C |'].join('\n')));
  });

  test("the table's cell text is not repeated as paragraphs", () => {
    assert.ok(!blocks(3).some((b) => b.label !== 'table' && /\bAlice\b/.test(b.text)));
  });

  test('bulleted items become `- ` list items, a wrapped item stays one item; numbered items keep their numbers', () => {
    assert.ok(markdown.includes(SAMPLE.listItems.map((item) => `- ${item}`).join('\n')));
    assert.ok(markdown.includes(SAMPLE.steps.map((step, i) => `${i + 1}. ${step}`).join('\n')));
    assert.deepEqual(blocks(1).filter((b) => b.label === 'list_item').map((b) => b.text), SAMPLE.listItems);
  });

  test('the repeated header and footer are labelled page_header / page_footer and left out of the Markdown body', () => {
    for (const page of document.pages) {
      const label = (text: string) => page.blocks.find((b) => b.text === text)?.label;
      assert.equal(label(SAMPLE.header), 'page_header', `page ${page.pageNo}`);
      assert.equal(label(SAMPLE.footer(page.pageNo)), 'page_footer', `page ${page.pageNo}`);
    }
    assert.ok(!markdown.includes(SAMPLE.header));
    assert.doesNotMatch(markdown, /Page \d/);
  });

  test('Chinese text set in the embedded Noto Sans SC extracts exactly', () => {
    assert.ok(markdown.includes('文档解析测试'));
    assert.deepEqual(blocks(4).filter((b) => b.label === 'text').map((b) => b.text), [SAMPLE.chinese]);
    assert.equal(blocks(4).find((b) => b.text === SAMPLE.chineseHeading)?.bold, true, 'NotoSansSC-Bold reads as bold');
  });

  test('document.json is a DoclingDocument whose texts carry a label and prov with page_no and a BOTTOMLEFT bbox', () => {
    assert.equal(json.schema_name, 'DoclingDocument');
    assert.equal(json.name, 'sample');
    assert.deepEqual(Object.keys(json.pages), ['1', '2', '3', '4']);
    assert.equal(json.pages['1']?.size.width, 595.28);
    const title = json.texts.find((t) => t.text === SAMPLE.title);
    assert.equal(title?.label, 'title');
    assert.equal(title?.prov[0]?.page_no, 1);
    const box = title?.prov[0]?.bbox;
    assert.ok(box && box.coord_origin === 'BOTTOMLEFT' && box.l < box.r && box.b < box.t && box.t <= 841.89, JSON.stringify(box));
    for (const text of json.texts) assert.ok(text.label && text.prov[0] && text.prov[0].page_no >= 1 && text.self_ref.startsWith('#/texts/'));
  });

  test('document.json keeps headers and footers under furniture, lists in groups and the table with its grid', () => {
    const byRef = new Map(json.texts.map((t) => [t.self_ref, t]));
    const furniture = json.furniture.children.map((ref) => byRef.get(ref.$ref)?.label);
    assert.deepEqual(new Set(furniture), new Set(['page_header', 'page_footer']));
    assert.equal(furniture.length, 8);
    assert.ok(!json.body.children.some((ref) => furniture.includes(byRef.get(ref.$ref)?.label)));
    assert.equal(json.groups[0]?.children.length, SAMPLE.listItems.length);
    const table = json.tables[0];
    assert.deepEqual([table?.data.num_rows, table?.data.num_cols], [3, 3]);
    assert.deepEqual(table?.data.grid.map((row) => row.map((cell) => cell.text)), SAMPLE.table);
    assert.equal(table?.prov[0]?.page_no, 3);
  });

  test('progress is reported once per page: (done, total)', () => {
    assert.deepEqual(progress, [[1, 4], [2, 4], [3, 4], [4, 4]]);
  });

  test('inspectPdf returns the page count of a readable PDF', async () => {
    assert.deepEqual(await inspectPdf(pdf), { pages: 4 });
  });

  test("parsing leaves the caller's buffer usable", async () => {
    assert.equal((await inspectPdf(pdf)).pages, 4);
    assert.equal(pdf.subarray(0, 5).toString('latin1'), '%PDF-');
  });
});

describe('stopping and bad input', () => {
  test('an aborted signal stops extraction between pages with the signal’s reason', async () => {
    const controller = new AbortController();
    const reason = new Error('cancelled by the owner');
    const seen: number[] = [];
    const extraction = extractDocument(await plainPdf(5), {
      signal: controller.signal,
      onProgress: (done) => {
        seen.push(done);
        if (done === 2) controller.abort(reason);
      },
    });
    await assert.rejects(extraction, (error) => error === reason);
    assert.deepEqual(seen, [1, 2]);
  });

  test('a signal aborted before the start stops extraction before any page', async () => {
    const seen: number[] = [];
    await assert.rejects(extractDocument(await plainPdf(2), { signal: AbortSignal.abort(), onProgress: (done) => void seen.push(done) }), { name: 'AbortError' });
    assert.deepEqual(seen, []);
  });

  test('inspectPdf: a file without %PDF- in its first 1024 bytes is NotAPdfError', async () => {
    await assert.rejects(inspectPdf(notAPdf()), NotAPdfError);
    await assert.rejects(inspectPdf(Buffer.from('just some text')), NotAPdfError);
    await assert.rejects(extractDocument(notAPdf()), NotAPdfError);
  });

  test('inspectPdf: %PDF- followed by garbage is UnreadablePdfError, and the message says what to do', async () => {
    await assert.rejects(inspectPdf(corruptPdf()), (error: unknown) => error instanceof UnreadablePdfError && /damaged.*re-export or repair/.test(error.message));
  });

  test('inspectPdf: a password-protected PDF is UnreadablePdfError asking to remove the password', async () => {
    await assert.rejects(inspectPdf(await passwordPdf()), (error: unknown) => error instanceof UnreadablePdfError && /password/.test(error.message));
  });

  test('%PDF- may come after leading bytes, within the first 1024', async () => {
    const shifted = Buffer.concat([Buffer.alloc(100, 0x20), await plainPdf(1)]);
    assert.deepEqual(await inspectPdf(shifted), { pages: 1 });
  });
});

describe('Markdown', () => {
  const page = (blocks: Block[]) => ({ pages: [{ pageNo: 1, width: 600, height: 800, blocks }] });
  const text = (value: string): Block => ({ label: 'text', text: value, bbox: { l: 0, t: 10, r: 10, b: 0 }, fontSize: 10, bold: false });

  test('text that would start a Markdown heading, list or numbered item is escaped', () => {
    const md = toMarkdown(page([text('# not a heading'), text('- not a list'), text('3. not numbered')]));
    assert.ok(md.includes('\\# not a heading\n\n\\- not a list\n\n3\\. not numbered'));
  });

  test('a pipe in a table cell is escaped, and short rows are padded to the header width', () => {
    assert.equal(pipeTable([['a|b', 'c'], ['d']]), '| a\\|b | c |\n| --- | --- |\n| d |  |');
  });

  test('an empty page still has its section', () => {
    assert.equal(toMarkdown(page([])), '<!-- page 1 -->\n');
  });
});

test('fontPaths resolves the bundled Noto Sans SC Regular and Bold', () => {
  const { regular, bold } = fontPaths();
  assert.match(regular, /NotoSansSC_400Regular\.ttf$/);
  assert.match(bold, /NotoSansSC_700Bold\.ttf$/);
  assert.ok(existsSync(regular) && existsSync(bold));
});
