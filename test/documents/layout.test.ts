import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Block, Page } from '../../src/documents/document.ts';
import { groupBlocks, listMarker } from '../../src/documents/layout/blocks.ts';
import { readingOrder } from '../../src/documents/layout/columns.ts';
import type { Line, Ruling, TextRun } from '../../src/documents/layout/geometry.ts';
import { groupLines } from '../../src/documents/layout/lines.ts';
import { labelDocument } from '../../src/documents/layout/roles.ts';
import { findTables } from '../../src/documents/layout/tables/find.ts';
import { findGrids } from '../../src/documents/layout/tables/grids.ts';
import PDFDocument from 'pdfkit';
import { openPdf, readPage } from '../../src/documents/pdf/reader.ts';

/** A run as pdf.js would report it; width estimated at half an em per character. */
function run(text: string, x: number, y: number, options: Partial<TextRun> = {}): TextRun {
  const size = options.size ?? 10;
  return { text, x, y, width: text.length * size * 0.5, size, bold: false, hasEOL: false, ...options };
}

/** A line of body text at baseline y. */
function line(text: string, x: number, y: number, options: Partial<Line> = {}): Line {
  const size = options.size ?? 10;
  return { text, baseline: y, size, bold: false, bbox: { l: x, r: x + text.length * size * 0.5, t: y + 8, b: y - 2 }, ...options };
}

function block(text: string, l: number, t: number, r: number, b: number, options: Partial<Block> = {}): Block {
  return { label: 'text', text, bbox: { l, t, r, b }, fontSize: 10, bold: false, ...options };
}

const texts = (items: Array<{ text: string }>) => items.map((i) => i.text);

describe('runs → lines', () => {
  test('runs on one baseline (within tolerance) join in x order, with a space where the gap is a word gap', () => {
    const lines = groupLines([run('world', 40, 100.8), run('Hello', 10, 100), run('again', 70, 100)]);
    assert.deepEqual(texts(lines), ['Hello world again']);
  });

  test('runs that touch join without an inserted space', () => {
    assert.deepEqual(texts(groupLines([run('Sig', 10, 100), run('net', 25, 100)])), ['Signet']);
  });

  test('a column-wide gap on one baseline splits it into two lines', () => {
    const lines = groupLines([run('left column', 10, 100), run('right column', 200, 100)]);
    assert.deepEqual(texts(lines), ['left column', 'right column']);
  });

  test("a run pdf.js marked hasEOL ends its line at a gap narrower than a column gap", () => {
    const withEol = groupLines([run('cell one', 10, 100, { hasEOL: true }), run('cell two', 62, 100)]);
    const without = groupLines([run('cell one', 10, 100), run('cell two', 62, 100)]);
    assert.deepEqual(texts(withEol), ['cell one', 'cell two']);
    assert.deepEqual(texts(without), ['cell one cell two']);
  });

  test('whitespace-only runs (pdf.js spacers and end-of-line markers) are dropped', () => {
    assert.deepEqual(texts(groupLines([run('a', 10, 100), run(' ', 15, 100), run('', 0, 90, { hasEOL: true })])), ['a']);
  });

  test('Chinese runs join without spaces', () => {
    assert.deepEqual(texts(groupLines([run('文档', 10, 100), run('解析', 22, 100)])), ['文档解析']);
  });

  test('a line is bold when most of its characters are', () => {
    const [mixed] = groupLines([run('Note:', 10, 100, { bold: true }), run('this line is mostly regular', 40, 100)]);
    assert.equal(mixed?.bold, false);
  });
});

describe('lines → blocks', () => {
  test("consecutive lines with the same size and a line's spacing form one paragraph", () => {
    const blocks = groupBlocks([line('The first line of a', 10, 700), line('paragraph ends here.', 10, 688)]);
    assert.deepEqual(texts(blocks), ['The first line of a paragraph ends here.']);
  });

  test('a larger vertical gap (a paragraph break) starts a new block', () => {
    const blocks = groupBlocks([line('One paragraph.', 10, 700), line('Another paragraph.', 10, 670)]);
    assert.deepEqual(texts(blocks), ['One paragraph.', 'Another paragraph.']);
  });

  test('a change of font size or weight starts a new block', () => {
    const blocks = groupBlocks([line('Heading', 10, 700, { size: 16 }), line('Bold lead', 10, 686, { bold: true }), line('Body text', 10, 674)]);
    assert.deepEqual(texts(blocks), ['Heading', 'Bold lead', 'Body text']);
  });

  test('"hyphenation undone" (issue 25, replacing issue 17\'s "kept as printed"): a word hyphenated at the line end closes up', () => {
    assert.deepEqual(texts(groupBlocks([line('sed diam nonumy eir-', 10, 700), line('mod tempor', 10, 688)])), ['sed diam nonumy eirmod tempor']);
  });

  test('a hyphen left hanging before a conjunction, or after a single letter, stays', () => {
    assert.deepEqual(texts(groupBlocks([line('both pre-', 10, 700), line('and post-processing', 10, 688)])), ['both pre- and post-processing']);
    assert.deepEqual(texts(groupBlocks([line('send an e-', 10, 700), line('mail to us', 10, 688)])), ['send an e-mail to us']);
  });

  test('a soft hyphen at a line end closes the word up and disappears', () => {
    assert.deepEqual(texts(groupBlocks([line('manip\u00ad', 10, 700), line('ulation here', 10, 688)])), ['manipulation here']);
  });

  test('a list marker starts a list item; its wrapped lines are indented under the text; the paragraph after is not part of it', () => {
    const blocks = groupBlocks([
      line('• First item', 10, 700),
      line('• Second item that', 10, 688),
      line('wraps here', 22, 676),
      line('Not part of the list.', 10, 664),
    ]);
    assert.deepEqual(
      blocks.map((b) => [b.label, b.text, b.marker]),
      [
        ['list_item', 'First item', '•'],
        ['list_item', 'Second item that wraps here', '•'],
        ['text', 'Not part of the list.', undefined],
      ],
    );
  });

  const MARKERS: Array<[string, string | undefined]> = [
    ['• bullet', '•'],
    ['- dash', '-'],
    ['* star', '*'],
    ['– en dash', '–'],
    ['1. numbered', '1.'],
    ['12) numbered', '12)'],
    ['a) lettered', 'a)'],
    ['-5 degrees is cold', undefined],
    ['3.14 is not a list', undefined],
    ['Mr. Smith', undefined],
  ];
  for (const [text, marker] of MARKERS) {
    test(`list items start with •, -, *, –, 1., 1) or a): ${JSON.stringify(text)}`, () => {
      assert.equal(listMarker(text)?.marker, marker);
    });
  }
});

describe('reading order', () => {
  // A title over two columns whose paragraph breaks line up, then a full-width closing paragraph.
  const title = block('Title', 50, 800, 400, 780);
  const a1 = block('A1', 50, 760, 280, 700);
  const a2 = block('A2', 50, 690, 280, 640);
  const b1 = block('B1', 310, 760, 540, 700);
  const b2 = block('B2', 310, 690, 540, 640);
  const closing = block('Closing', 50, 620, 540, 600);

  test('a two-column page reads the whole left column before the right; the title and closing paragraph keep their places', () => {
    const shuffled = [b2, closing, a1, title, b1, a2];
    assert.deepEqual(texts(readingOrder(shuffled)), ['Title', 'A1', 'A2', 'B1', 'B2', 'Closing']);
  });

  test('a left column longer than the right is read to its end before the right column', () => {
    const a3 = block('A3', 50, 630, 280, 610);
    assert.deepEqual(texts(readingOrder([a1, b1, a2, b2, a3])), ['A1', 'A2', 'A3', 'B1', 'B2']);
  });

  test('three columns read left to right, each top to bottom', () => {
    const cols = [0, 1, 2].flatMap((c) => [block(`C${c}a`, 50 + c * 170, 700, 200 + c * 170, 650), block(`C${c}b`, 50 + c * 170, 640, 200 + c * 170, 600)]);
    assert.deepEqual(texts(readingOrder(cols.reverse())), ['C0a', 'C0b', 'C1a', 'C1b', 'C2a', 'C2b']);
  });

  test('a single-column page reads top to bottom', () => {
    const blocks = [block('Second', 50, 700, 540, 650), block('First', 50, 760, 300, 720), block('Third', 60, 640, 200, 620)];
    assert.deepEqual(texts(readingOrder(blocks)), ['First', 'Second', 'Third']);
  });

  test('a block to the right but wholly below another is read after it, not as a second column', () => {
    const blocks = [block('Lower right', 320, 600, 540, 580), block('Upper left', 50, 700, 280, 680)];
    assert.deepEqual(texts(readingOrder(blocks)), ['Upper left', 'Lower right']);
  });
});

describe('ruled tables', () => {
  // A 3×2 grid: horizontal rules at y = 300, 280, 260; vertical rules at x = 50, 150, 250.
  const h = (y: number): Ruling => ({ x1: 50, y1: y, x2: 250, y2: y });
  const v = (x: number): Ruling => ({ x1: x, y1: 260, x2: x, y2: 300 });
  const grid = [h(300), h(280), h(260), v(50), v(150), v(250)];

  test('crossing horizontal and vertical rules form a grid of rows and columns', () => {
    assert.deepEqual(findGrids(grid), [{ xs: [50, 150, 250], ys: [300, 280, 260] }]);
  });

  test("each run goes to the cell holding its centre, and the table's runs leave the text flow", () => {
    const runs = [run('Name', 55, 286), run('Score', 155, 286), run('Ada', 55, 266), run('99', 155, 266), run('Below', 50, 200)];
    const { tables, rest } = findTables(grid, runs);
    assert.deepEqual(tables[0]?.cells, [['Name', 'Score'], ['Ada', '99']]);
    assert.equal(tables[0]?.label, 'table');
    assert.deepEqual(texts(rest), ['Below']);
  });

  test('a table ruled only inside (no outer border) still has its outer rows and columns', () => {
    const inner = [{ x1: 50, y1: 280, x2: 250, y2: 280 }, { x1: 150, y1: 260, x2: 150, y2: 300 }];
    assert.deepEqual(findGrids(inner), [{ xs: [50, 150, 250], ys: [300, 280, 260] }]);
  });

  test('a box drawn around a paragraph is not a table', () => {
    const box = [h(300), h(260), v(50), v(250)];
    const { tables, rest } = findTables(box, [run('Boxed note', 55, 280)]);
    assert.equal(tables.length, 0);
    assert.equal(rest.length, 1);
  });

  test('rules come from the page\'s painted paths in page space: the current transform applies, save/restore scopes it, a clip path is never painted', async () => {
    // pdfkit draws with a top-left origin (it sets [1 0 0 -1 0 800] first on an 800-point page).
    const doc = new PDFDocument({ size: [600, 800], margin: 0 });
    const chunks: Buffer[] = [];
    doc.on('data', (chunk: Buffer) => chunks.push(chunk));
    const done = new Promise<Buffer>((resolve) => doc.on('end', () => resolve(Buffer.concat(chunks))));
    doc.save().translate(100, 0).moveTo(0, 100).lineTo(50, 100).stroke().restore();
    doc.moveTo(10, 20).lineTo(10, 60).stroke();
    doc.save().rect(0, 0, 500, 500).clip().restore();
    doc.end();
    const open = await openPdf(await done);
    try {
      assert.deepEqual(readPage(open, 1).rulings, [
        { x1: 100, y1: 700, x2: 150, y2: 700 },
        { x1: 10, y1: 740, x2: 10, y2: 780 },
      ]);
    } finally {
      open.close();
    }
  });
});

describe('labels across the document', () => {
  const A4 = { width: 595, height: 842 };
  const page = (pageNo: number, blocks: Block[]): Page => ({ pageNo, ...A4, blocks });
  const body = (text: string, t: number) => block(text, 50, t, 540, t - 40, { fontSize: 10 });
  const header = () => block('Annual report', 50, 820, 200, 810, { fontSize: 8 });
  const footer = (n: number) => block(`Page ${n} of 3`, 250, 30, 320, 20, { fontSize: 8 });
  const labelsOf = (doc: { pages: Page[] }) => doc.pages.map((p) => p.blocks.map((b) => b.label));

  test('text in the top or bottom 8% that repeats on at least half the pages (page numbers may change) is page_header / page_footer', () => {
    const doc = labelDocument({ pages: [1, 2, 3].map((n) => page(n, [header(), body(`Body ${n} with plenty of words.`, 700), footer(n)])) });
    assert.deepEqual(labelsOf(doc), [1, 2, 3].map(() => ['page_header', 'text', 'page_footer']));
  });

  test('top-of-page text that does not repeat stays body text; on a one-page document only the page number is furniture ("page numbers go to furniture, never the body")', () => {
    const once = labelDocument({ pages: [page(1, [header(), body('Body.', 700)]), page(2, [body('Body.', 700)]), page(3, [body('Body.', 700)])] });
    assert.equal(once.pages[0]?.blocks[0]?.label, 'text');
    const single = labelDocument({ pages: [page(1, [header(), body('Body text, longer than the header and footer together.', 700), footer(1)])] });
    assert.deepEqual(labelsOf(single), [['text', 'text', 'page_footer']]);
  });

  test('section_header by a font larger than the body size; level by distinct heading sizes, largest → 1; the one largest heading on page 1 is the title', () => {
    const doc = labelDocument({
      pages: [
        page(1, [block('Report', 50, 800, 300, 780, { fontSize: 24 }), block('Scope', 50, 760, 300, 745, { fontSize: 16 }), body('Body text that sets the body size.', 700)]),
        page(2, [block('Details', 50, 800, 300, 788, { fontSize: 13 }), body('More body text at the body size.', 700)]),
      ],
    });
    const headings = doc.pages.flatMap((p) => p.blocks).filter((b) => b.label !== 'text');
    assert.deepEqual(headings.map((b) => [b.label, b.text, b.level]), [['title', 'Report', 1], ['section_header', 'Scope', 2], ['section_header', 'Details', 3]]);
  });

  test('title matter under a bold title (DocBook style): the bold centred group and author lines, centred on the off-centre title, are text; the first numbered heading ends the title matter', () => {
    const doc = labelDocument({
      pages: [
        page(1, [
          block('Shared MIME-info Database', 166, 720, 492, 695, { fontSize: 24, bold: true }),
          block('X Desktop Group (http://www.freedesktop.org)', 137, 681, 520, 664, { fontSize: 17, bold: true }),
          block('Thomas Leonard', 260, 631, 398, 614, { fontSize: 17, bold: true }),
          block('1. Introduction', 50, 553, 191, 536, { fontSize: 17, bold: true }),
          body('Body text that sets the body size, the most common style of the document by far.', 500),
          body('More body text: the paragraphs of a page outweigh its few heading lines.', 440),
        ]),
      ],
    });
    assert.deepEqual(labelsOf(doc), [['title', 'text', 'text', 'section_header', 'text', 'text']]);
  });

  test('a short bold line at the body size is a section_header (never the title); a bold sentence or a bold bullet is not', () => {
    const doc = labelDocument({
      pages: [
        page(1, [
          block('Background', 50, 760, 120, 750, { bold: true }),
          block('Bold sentence.', 50, 740, 150, 730, { bold: true }),
          block('Bold bullet', 50, 720, 150, 710, { bold: true, label: 'list_item', marker: '•' }),
          body('Regular body text, the most common style in the document by far.', 700),
        ]),
      ],
    });
    assert.deepEqual(labelsOf(doc), [['section_header', 'text', 'list_item', 'text']]);
  });

  test('a numbered heading read as a list item becomes a section_header and keeps its number', () => {
    const doc = labelDocument({ pages: [page(1, [block('Introduction', 50, 760, 200, 745, { fontSize: 16, label: 'list_item', marker: '1.' }), body('Body text here.', 700), body('More body.', 600)])] });
    const [heading] = doc.pages[0]?.blocks ?? [];
    assert.equal(heading?.text, '1. Introduction');
    assert.equal(heading?.marker, undefined);
  });
});
