// Tagged PDFs (issue 31, item 3): on real PDF/UA pages the blocks take their role, level and order
// from the structure tree, each test quoting the tag a block came from; a badly tagged page falls
// back to layout analysis; the outline gives heading levels where there are no tags.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import type { Block, ParsedDocument } from '../../src/documents/document.ts';
import type { PageContent } from '../../src/documents/layout/geometry.ts';
import { headingKey, headingsFromOutline } from '../../src/documents/layout/outline-headings.ts';
import { layoutPage } from '../../src/documents/layout/page.ts';
import { labelDocument } from '../../src/documents/layout/roles.ts';
import type { StructNode } from '../../src/documents/layout/structure-tree.ts';
import { judgeTags } from '../../src/documents/layout/tagged.ts';
import { extractDocument } from '../../src/documents/pdf/extract.ts';
import { PdfReader } from '../../src/documents/pdf/reader-client.ts';
import { PDFDocument, PDFName, PDFNumber, PDFString, StandardFonts } from 'pdf-lib';

const ROOT = path.join(import.meta.dirname, '..', '..');
const CORPUS = path.join(ROOT, 'bench', 'docparse', 'public');
const FIXTURES = path.join(ROOT, 'test', 'fixtures', 'tagged');
const BOOK_DE = path.join(CORPUS, 'pages', 'pdfua-bookchapter-de.pdf');
const ACADEMIC = path.join(CORPUS, 'pages', 'pdfua-academic.pdf');
const INVOICE = path.join(FIXTURES, 'pdfua-invoice.pdf');
const AMT = path.join(CORPUS, 'docling', 'amt_handbook_sample.pdf');
const ARXIV_P3 = path.join(FIXTURES, 'arxiv-1901.03003-p3.pdf');
const WARN = path.join(CORPUS, 'pages', 'warn-report.pdf');
const FORM = path.join(CORPUS, 'pages', 'dsp-milw-505.pdf');

const parse = (file: string) => extractDocument(readFileSync(file), { ocr: null });
const blocksOf = (doc: ParsedDocument) => doc.pages.flatMap((page) => page.blocks);
const find = (blocks: Block[], start: string) => {
  const block = blocks.find((b) => b.text.startsWith(start));
  assert.ok(block, `a block starting ${JSON.stringify(start)} in:\n${blocks.map((b) => `${b.tag ?? '-'} ${b.label}: ${b.text.slice(0, 60)}`).join('\n')}`);
  return block;
};

/** Page `pageNo` of a PDF as the reader hands it to layout. */
async function readContent(file: string, pageNo = 1): Promise<PageContent> {
  const reader = await PdfReader.open(file);
  try {
    const { rotate: _rotate, ...content } = await reader.page(pageNo);
    return { ...content, textSource: 'text-layer' };
  } finally {
    reader.close();
  }
}

describe('tagged PDF/UA pages take their roles from the structure tree', () => {
  test('spec (issue 31): "headings (with levels) … come from it" — the German book chapter\'s H2 elements are its section headers, its P elements paragraphs', async () => {
    const blocks = blocksOf(await parse(BOOK_DE));
    for (const heading of ['3.2.1 Die Ansätze im kurzen Vergleich', '3.2.2 Der konzeptionelle Ansatz des Buches']) {
      const block = find(blocks, heading);
      assert.equal(block.tag, 'H2');
      assert.equal(block.label, 'section_header');
      assert.equal(block.level, 2);
    }
    const paragraph = find(blocks, 'Die meist gängige Praxis');
    assert.equal(paragraph.tag, 'P');
    assert.equal(paragraph.label, 'text');
    // Bold phrases set in the body size are Span elements inside the P: part of the paragraph, never headings.
    assert.equal(blocks.filter((b) => b.label === 'section_header').length, 2);
  });

  test('spec (issue 31): "the reading order come[s] from it" — blocks follow the tree: H2, its four… paragraphs, the next H2; the running head, an artifact outside the tags, is furniture', async () => {
    const blocks = blocksOf(await parse(BOOK_DE));
    const tagged = blocks.filter((b) => b.tag !== undefined).map((b) => b.tag);
    assert.deepEqual(tagged, ['H2', 'P', 'P', 'P', 'P', 'P', 'P', 'H2', 'P', 'P', 'P']);
    const head = find(blocks, '2019/04, Online-Kapitel');
    assert.equal(head.tag, undefined);
    assert.equal(head.label, 'page_header');
  });

  test('spec (issue 31): "list items" — the ACM abstract\'s LI elements are list items with their Lbl as marker; a P running from the left column into the right is one paragraph in two pieces', async () => {
    const blocks = blocksOf(await parse(ACADEMIC));
    const item = find(blocks, 'accessibility');
    assert.equal(item.tag, 'LI');
    assert.equal(item.label, 'list_item');
    const topics = find(blocks, 'Tagged PDF: Embedding logical structure');
    assert.equal(topics.tag, 'LI');
    assert.ok(topics.marker !== undefined && topics.marker.length > 0, 'the Lbl gives the marker');
    const abstract = find(blocks, 'ABSTRACT');
    assert.equal(abstract.tag, 'H1');
    assert.equal(abstract.label, 'section_header');
    // The title is tagged P but set far above the body: it is the document's title, and H1 the level below it.
    const title = find(blocks, 'More than just digital paper');
    assert.equal(title.tag, 'P');
    assert.equal(title.label, 'title');
    assert.equal(abstract.level, 2);
    const summary = blocks.findIndex((b) => b.text.startsWith('PDF is the most common'));
    assert.equal(blocks[summary]?.tag, 'P');
    assert.equal(blocks[summary + 1]?.tag, 'P');
    assert.equal(blocks[summary + 1]?.continues, true, 'the piece in the right column continues the paragraph');
  });

  test('spec (issue 31): "tables (with row and column spans and header cells)" — the invoice\'s Table: TH cells (Scope Column) head the columns, TD cells hold the items', async () => {
    const blocks = blocksOf(await parse(INVOICE));
    const table = blocks.find((b) => b.label === 'table');
    assert.ok(table?.table);
    assert.equal(table.tag, 'Table');
    assert.equal(table.table.numCols, 5);
    const header = table.table.cells.filter((c) => c.row === 0);
    assert.deepEqual(
      header.map((c) => c.text),
      ['ITEM', 'DESCRIPTION', 'QUANTITY', 'PRICE (€)', 'AMOUNT (€)'],
    );
    assert.ok(header.every((c) => c.columnHeader && !c.rowHeader));
    assert.deepEqual(table.cells?.[1], ['1', 'Super Kite', '2', '20.00', '40.00']);
    assert.ok(table.table.cells.filter((c) => c.row > 0).every((c) => !c.columnHeader));
    // The total is its row's only TD: it stands under AMOUNT on the page, and goes there.
    assert.deepEqual(table.cells?.at(-1), ['', '', '', '', '845.00']);
  });

  test('spec (issue 31): "figures with alt text" — the invoice\'s Figure is a picture; the Caption beside it in the tree is its caption', async () => {
    const [page] = (await parse(INVOICE)).pages;
    assert.ok(page);
    assert.equal(page.pictures?.length, 1);
    const caption = find(page.blocks, 'Local sales rep');
    assert.equal(caption.tag, 'Caption');
    assert.equal(caption.label, 'caption');
    assert.deepEqual(caption.captionOf, { kind: 'picture', index: 0 });
    assert.equal(page.pictures?.[0]?.caption, 'Local sales rep: Lucy Irwin');
  });

  test('spec (issue 31): a Figure without a Caption gets its /Alt as the picture\'s text', async () => {
    const content = await readContent(INVOICE);
    // The same page with the Caption element left out of its tree.
    const withoutCaption = (node: StructNode): StructNode => ({ ...node, kids: node.kids.filter((k) => typeof k === 'number' || k.type !== 'Caption').map((k) => (typeof k === 'number' ? k : withoutCaption(k))) });
    const page = layoutPage({ ...content, structure: content.structure?.map(withoutCaption) });
    assert.equal(page.pictures?.[0]?.caption, 'Photo of sales rep.');
  });
});

test('spec (issue 31): a Caption inside its Figure (as LaTeX\'s tagpdf writes it) is the figure\'s caption, not a label in the picture', async () => {
  const content = await readContent(INVOICE);
  // The invoice's tree with its Caption moved into the Figure before it.
  const nest = (node: StructNode): StructNode => {
    const kids = node.kids.map((k) => (typeof k === 'number' ? k : nest(k)));
    const figure = kids.findIndex((k) => typeof k !== 'number' && k.type === 'Figure');
    const caption = kids.findIndex((k) => typeof k !== 'number' && k.type === 'Caption');
    if (figure < 0 || caption < 0) return { ...node, kids };
    const [f, c] = [kids[figure] as StructNode, kids[caption] as StructNode];
    return { ...node, kids: kids.filter((_, i) => i !== caption).map((k) => (k === f ? { ...f, kids: [...f.kids, c] } : k)) };
  };
  const page = layoutPage({ ...content, structure: content.structure?.map(nest) });
  const caption = find(page.blocks, 'Local sales rep');
  assert.equal(caption.tag, 'Caption');
  assert.equal(caption.label, 'caption');
  assert.notEqual(caption.inPicture, true);
  assert.equal(page.pictures?.[0]?.caption, 'Local sales rep: Lucy Irwin');
});

describe('what Word and Excel tag', () => {
  test('spec (issue 31): an Excel sheet\'s Table — its TD cells are ordered as drawn (Excel writes "Layoff/Closure" second, it is printed last) and its title rows come out above the table as paragraphs', async () => {
    const blocks = blocksOf(await parse(WARN));
    const table = blocks.find((b) => b.label === 'table');
    assert.ok(table?.table);
    assert.equal(table.tag, 'Table');
    assert.deepEqual(table.cells?.[0], ['Notice Date', 'Effective', 'Received', 'Company', 'City', 'No. Of', 'Layoff/Closure']);
    const title = find(blocks, 'WARN Report*');
    assert.equal(title.tag, 'TD');
    assert.ok(blocks.indexOf(title) < blocks.indexOf(table));
  });

  test('spec (issue 31): "layout analysis fills in what the tags leave out" — a Word form laid out in Table elements (cells of prose, rows of one filled cell) is read as paragraphs, not as a table of data', async () => {
    const blocks = blocksOf(await parse(FORM));
    const description = find(blocks, 'On January 10, 2015, the agency received a report');
    assert.equal(description.tag, 'TD');
    assert.equal(description.label, 'text');
    assert.ok(!blocks.some((b) => b.label === 'table' && b.text.includes('On January 10, 2015')), 'the prose is no table cell');
  });
});

describe('badly tagged pages fall back to layout analysis', () => {
  test('spec (issue 31): "takes over when the tags are … clearly wrong (e.g. everything tagged P)" — the FAA handbook page (InDesign, every text block a P)', async () => {
    const content = await readContent(AMT);
    assert.ok(content.structure, 'the page has a structure tree');
    const verdict = judgeTags(content);
    assert.equal(verdict.usable, false);
    assert.equal(!verdict.usable && verdict.reason, 'everything on it is tagged P');
    const blocks = blocksOf(await parse(AMT));
    assert.ok(blocks.every((b) => b.tag === undefined), 'no block claims a tag');
    assert.ok(blocks.some((b) => b.label === 'section_header'), 'layout finds the headings the tags do not name');
  });

  test('spec (issue 31): "tags that cover a third of the page\'s text" — the book chapter page with only its first elements left in the tree is laid out as untagged', async () => {
    const content = await readContent(BOOK_DE);
    const cut = (node: StructNode, keep: { left: number }): StructNode => ({
      ...node,
      kids: node.kids.flatMap((kid): Array<StructNode | number> => (typeof kid === 'number' ? [kid] : /^(?:P|H\d)$/.test(kid.type) ? (keep.left-- > 0 ? [kid] : []) : [cut(kid, keep)])),
    });
    const partial = { ...content, structure: content.structure?.map((root) => cut(root, { left: 3 })) };
    const verdict = judgeTags(partial);
    assert.equal(verdict.usable, false);
    assert.match(!verdict.usable ? verdict.reason : '', /^its tags hold \d+ % of its text$/);
    const untagged = layoutPage({ ...content, structure: undefined });
    assert.deepEqual(layoutPage(partial), untagged);
  });

  test('spec (issue 31): tags are not used on a page read by OCR (the text there has no marked content)', async () => {
    const content = await readContent(BOOK_DE);
    const verdict = judgeTags({ ...content, textSource: 'ocr' });
    assert.equal(verdict.usable, false);
  });
});

describe('the outline gives heading levels', () => {
  test('spec (issue 31): "the outline\'s entries, matched to text on their pages, give heading levels where the tags don\'t" — the untagged arXiv page: "3.1. Multi-Object Rectification Network" one level below "3. Methodology"', async () => {
    const reader = await PdfReader.open(ARXIV_P3);
    const outline = reader.outline;
    reader.close();
    assert.ok(outline.some((e) => e.title === '3.1 . Multi-Object Rectification Network' && e.depth === 2 && e.pageNo === 1));
    const doc = await parse(ARXIV_P3);
    const blocks = blocksOf(doc);
    assert.equal(find(blocks, '2. Related Work').level, 1);
    assert.equal(find(blocks, '3. Methodology').level, 1);
    assert.equal(find(blocks, '3.1. Multi-Object Rectification Network').level, 2);
    // Without the outline the numbering alone sets them one level lower (it assumes a title above).
    const guessed = blocksOf(headingsFromOutline(labelDocument({ pages: doc.pages.map((p) => ({ ...p, blocks: p.blocks.map((b) => ({ ...b, label: b.label === 'section_header' ? 'text' : b.label })) })) }), []));
    assert.equal(find(guessed, '3. Methodology').level, 2);
  });

  test('spec (issue 31): an outline entry matches its heading "tolerant to whitespace/case/numbering"', () => {
    assert.equal(headingKey('3.1 . Multi-Object  Rectification Network'), headingKey('3.1. Multi-Object Rectification Network'));
    assert.equal(headingKey('Chapter 3 Results'), headingKey('RESULTS'));
    assert.equal(headingKey('IV. Discussion'), headingKey('Discussion'));
    assert.notEqual(headingKey('Methods'), headingKey('Results'));
  });

  test('spec (issue 31): a level from the tags is kept over the outline\'s — the German chapter\'s H2 stays 2 though its bookmarks sit at depth 2 below a chapter', async () => {
    const doc = await parse(BOOK_DE);
    const shifted = headingsFromOutline(doc, [{ title: '3.2.1 Die Ansätze im kurzen Vergleich', depth: 4, pageNo: 1 }]);
    assert.equal(find(blocksOf(shifted), '3.2.1 Die Ansätze').level, 2);
  });
});

describe('a hostile outline stays harmless', () => {
  test('spec (issue 31, item 5): "hostile files stay harmless" — a bookmark list that loops back on itself is read once, and the page parses', async () => {
    const pdf = await PDFDocument.create();
    const page = pdf.addPage([400, 400]);
    page.drawText('Introduction', { x: 40, y: 340, size: 18, font: await pdf.embedFont(StandardFonts.HelveticaBold) });
    page.drawText('Some body text under the heading.', { x: 40, y: 300, size: 10, font: await pdf.embedFont(StandardFonts.Helvetica) });
    const { context } = pdf;
    const outlines = context.nextRef();
    const first = context.nextRef();
    const second = context.nextRef();
    const dest = context.obj([page.ref, PDFName.of('XYZ'), PDFNumber.of(0), PDFNumber.of(360), PDFNumber.of(0)]);
    context.assign(first, context.obj({ Title: PDFString.of('Introduction'), Parent: outlines, Next: second, Dest: dest }));
    // The second entry's Next points back to the first: a loop.
    context.assign(second, context.obj({ Title: PDFString.of('Again'), Parent: outlines, Prev: first, Next: first, Dest: dest }));
    context.assign(outlines, context.obj({ Type: 'Outlines', First: first, Last: second, Count: PDFNumber.of(2) }));
    pdf.catalog.set(PDFName.of('Outlines'), outlines);
    const dir = await mkdtemp(path.join(tmpdir(), 'signet-outline-'));
    const file = path.join(dir, 'loop.pdf');
    await writeFile(file, await pdf.save());
    try {
      const reader = await PdfReader.open(file);
      const outline = reader.outline;
      reader.close();
      assert.deepEqual(
        outline.map((e) => e.title),
        ['Introduction', 'Again'],
      );
      const heading = find(blocksOf(await parse(file)), 'Introduction');
      assert.ok(heading.label === 'section_header' || heading.label === 'title', heading.label);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
