// Issue 40, part 3: "HTML and plain-text outputs … The HTML is a standalone, accessible document
// (tables as <table> with header cells and spans, headings as <h1>…, pictures with their captions as
// <figure>), sanitised." Real pages of other projects' corpora (test/fixtures/public/README.md) read
// through the whole engine; the HTML read back by a real HTML parser (htmlparser2) and compared with
// the parsed model and with the Markdown; axe-core on the HTML in real Chromium (one launch).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { AxeBuilder } from '@axe-core/playwright';
import { DomUtils, parseDocument } from 'htmlparser2';
import type { Element } from 'domhandler';
import type { Browser } from 'playwright-core';
import type { Block, ParsedDocument, Table } from '../../src/documents/document.ts';
import { toHtml, withImageMode } from '../../src/documents/export/html.ts';
import { guessLanguage } from '../../src/documents/export/language.ts';
import { toText } from '../../src/documents/export/text.ts';
import { runDocparse, type DocparseResult } from '../../src/documents/parse.ts';
import { chromiumSkip, launchChromium } from '../helpers/browser.ts';
import { tableGrid } from '../helpers/table-grid.ts';

const fixture = (name: string) => readFileSync(new URL(`../fixtures/public/${name}`, import.meta.url));

/** Every public page with a text layer (the encrypted one and the scan are other tests' business). */
const CORPUS = [
  '2305.03393v1-pg9.pdf',
  'amt_handbook_sample.pdf',
  'code_and_formula.pdf',
  'issue11656.pdf',
  'legal-aid-spread-checkbox-table.pdf',
  'libtasn1-contents-p3.pdf',
  'multi_page.pdf',
  'normal_4pages.pdf',
  'picture_classification.pdf',
  'redbook-contents-p2.pdf',
  'right_to_left_01.pdf',
  'right_to_left_03.pdf',
];

type Parsed = DocparseResult & { pictures: Map<string, Uint8Array> };
const parsed = new Map<string, Parsed>();
async function parse(name: string): Promise<Parsed> {
  const known = parsed.get(name);
  if (known) return known;
  const pictures = new Map<string, Uint8Array>();
  const result = { ...(await runDocparse(fixture(name), { name, ocrMode: 'off', onPicture: async (file, png) => void pictures.set(file, png) })), pictures };
  parsed.set(name, result);
  return result;
}

const elements = (html: string, name: string) => DomUtils.getElementsByTagName(name, parseDocument(html).children, true);
const text = (node: Element) => DomUtils.textContent(node);

/** An HTML <table> laid out as the HTML table model does: each cell at its row and column, with its spans. */
function htmlCells(table: Element): Array<{ text: string; row: number; col: number; rowSpan: number; colSpan: number; th: boolean; scope: string | undefined }> {
  const taken = new Set<string>();
  const cells = [];
  const rows = DomUtils.getElementsByTagName('tr', table, true);
  for (const [row, tr] of rows.entries()) {
    let col = 0;
    for (const cell of tr.children.filter((c): c is Element => c.type === 'tag' && (c.name === 'td' || c.name === 'th'))) {
      while (taken.has(`${row},${col}`)) col += 1;
      const rowSpan = Number(cell.attribs.rowspan ?? 1);
      const colSpan = Number(cell.attribs.colspan ?? 1);
      for (let r = row; r < row + rowSpan; r += 1) for (let c = col; c < col + colSpan; c += 1) taken.add(`${r},${c}`);
      cells.push({ text: text(cell), row, col, rowSpan, colSpan, th: cell.name === 'th', scope: cell.attribs.scope });
      col += colSpan;
    }
  }
  return cells;
}

/** The model's table cells in reading order (row, then column), as the HTML must have them. */
const modelCells = (table: Table) =>
  [...table.cells].sort((a, b) => a.row - b.row || a.col - b.col).map((c) => ({ text: c.text.replace(/\s+/g, ' ').trim(), row: c.row, col: c.col, rowSpan: c.rowSpan, colSpan: c.colSpan }));

/** The Markdown's tables as grids: pipe tables cell by cell, HTML tables (where cells span) by the table model. */
function markdownTables(markdown: string): string[][][] {
  const tables: string[][][] = [];
  let pipe: string[][] | undefined;
  for (const line of markdown.split('\n')) {
    if (/^\| /.test(line)) {
      if (/^\|( --- \|)+$/.test(line)) continue;
      const cells = line.slice(2, -2).split(/ (?<!\\)\| /).map((cell) => cell.replace(/\\\|/g, '|'));
      (pipe ??= []).push(cells);
      continue;
    }
    if (pipe) tables.push(pipe);
    pipe = undefined;
  }
  if (pipe) tables.push(pipe);
  // The HTML tables of the Markdown stand where they are; order them back among the pipe tables by position.
  const positioned = [
    ...[...markdown.matchAll(/^<table>[\s\S]*?^<\/table>$/gm)].map((m) => ({ at: m.index, grid: gridOf(htmlCells(elements(m[0], 'table')[0]!)) })),
    ...tables.map((grid) => ({ at: markdown.indexOf(`| ${grid[0]!.map((c) => c.replace(/\|/g, '\\|')).join(' | ')} |`), grid })),
  ];
  return positioned.sort((a, b) => a.at - b.at).map((p) => p.grid);
}

/** Cells as rows of texts, a spanning cell's text in every position it covers, '·' where no cell is. */
function gridOf(cells: ReturnType<typeof htmlCells>): string[][] {
  const rows: string[][] = [];
  const width = Math.max(0, ...cells.map((c) => c.col + c.colSpan));
  for (const cell of cells)
    for (let r = cell.row; r < cell.row + cell.rowSpan; r += 1) {
      rows[r] ??= Array.from({ length: width }, () => '·');
      for (let c = cell.col; c < cell.col + cell.colSpan; c += 1) rows[r]![c] = cell.text;
    }
  return rows;
}

const tablesOf = (doc: ParsedDocument) => doc.pages.flatMap((page) => page.blocks).filter((b): b is Block & { table: Table } => b.label === 'table' && b.table !== undefined);

describe('HTML export (issue 40, part 3)', () => {
  test('"a standalone … document": <!DOCTYPE html>, lang, <meta charset>, a <title>, the body in <main>; page headers and footers left out as in the Markdown', async () => {
    const { html, markdown, document } = await parse('multi_page.pdf');
    assert.match(html, /^<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">/);
    const [title] = elements(html, 'title');
    assert.ok(title && text(title).length > 0);
    assert.equal(elements(html, 'main').length, 1);
    assert.equal(elements(html, 'script').length, 0);
    for (const block of document.pages.flatMap((p) => p.blocks).filter((b) => b.label === 'page_header' || b.label === 'page_footer')) {
      assert.equal(markdown.includes(block.text), html.includes(block.text), `furniture "${block.text}" is in both or neither`);
    }
  });

  test('"tables as <table> with header cells and spans": on every corpus page, each table cell by cell equal to the parsed model (rowspan and colspan included) and to the Markdown\'s table', async () => {
    let compared = 0;
    for (const name of CORPUS) {
      const { html, markdown, document } = await parse(name);
      const htmlTables = elements(html, 'table');
      const model = tablesOf(document);
      assert.equal(htmlTables.length, model.length, `${name}: one <table> per table`);
      const inMarkdown = markdownTables(markdown);
      assert.equal(inMarkdown.length, model.length, `${name}: the Markdown has as many tables`);
      for (const [i, table] of htmlTables.entries()) {
        const cells = htmlCells(table);
        assert.deepEqual(cells.map(({ th: _th, scope: _scope, ...cell }) => cell), modelCells(model[i]!.table), `${name}, table ${i + 1}: cells and spans as parsed`);
        assert.deepEqual(gridOf(cells), inMarkdown[i], `${name}, table ${i + 1}: the same grid as the Markdown's`);
        assert.deepEqual(gridOf(cells), tableGrid(model[i]!.table));
        // Header cells are <th> with a scope (WCAG H63); an empty corner cell is data.
        const headers = model[i]!.table.cells.filter((c) => (c.columnHeader || c.rowHeader) && c.text.trim() !== '').length;
        assert.equal(cells.filter((c) => c.th).length, headers, `${name}, table ${i + 1}: every header cell with text is a <th>`);
        assert.ok(cells.filter((c) => c.th).every((c) => ['col', 'colgroup', 'row', 'rowgroup'].includes(c.scope ?? '')));
        compared += 1;
      }
    }
    assert.ok(compared >= 6, `tables compared: ${compared}`);
  });

  test('OTSL paper, Table 1: the spanning header cells as <th scope="colgroup" colspan="3"> and <th scope="col" rowspan="2"> in a <thead>; the caption as its <caption>', async () => {
    const { html } = await parse('2305.03393v1-pg9.pdf');
    const [table] = elements(html, 'table');
    const thead = DomUtils.getElementsByTagName('thead', table!, true)[0]!;
    assert.equal(DomUtils.getElementsByTagName('tr', thead, true).length, 2, 'both header rows in <thead>');
    assert.match(html, /<th scope="colgroup" colspan="3">TEDs<\/th>/);
    assert.match(html, /<th scope="col" rowspan="2"># enc-layers<\/th>/);
    const caption = DomUtils.getElementsByTagName('caption', table!, true)[0];
    assert.match(text(caption!), /^Table 1\. HPO performed in OTSL and HTML representation/);
    assert.equal(elements(html, 'p').filter((p) => text(p).startsWith('Table 1.')).length, 0, 'the caption is not repeated as a paragraph');
  });

  test('"headings as <h1>…<h6>": every heading of every corpus page at the level the Markdown gives it, in the same order', async () => {
    for (const name of CORPUS) {
      const { html, markdown } = await parse(name);
      const fromHtml = DomUtils.findAll((node) => /^h[1-6]$/.test(node.name), parseDocument(html).children).map((h) => `${h.name.slice(1)} ${text(h)}`);
      const fromMarkdown = [...markdown.matchAll(/^(#{1,6}) (.*)$/gm)].map((m) => `${m[1]!.length} ${m[2]}`);
      assert.deepEqual(fromHtml, fromMarkdown, name);
    }
  });

  test('"pictures with their captions as <figure>": each picture an <img> linked to its result file (alt: its caption) with the caption as <figcaption>, where the Markdown has it', async () => {
    for (const name of ['amt_handbook_sample.pdf', 'picture_classification.pdf']) {
      const { html, markdown, document } = await parse(name);
      const figures = elements(html, 'figure').map((figure) => {
        const img = DomUtils.getElementsByTagName('img', figure, true)[0];
        const caption = DomUtils.getElementsByTagName('figcaption', figure, true)[0];
        return { src: img?.attribs.src, alt: img?.attribs.alt, caption: caption ? text(caption) : undefined };
      });
      const images = [...markdown.matchAll(/!\[([^\]]*)\]\(([^)]+)\)/g)].map((m) => ({ src: m[2], caption: m[1] || undefined }));
      assert.deepEqual(figures.map(({ src, caption }) => ({ src, caption })), images, name);
      const pictures = document.pages.flatMap((p) => (p.pictures ?? []).map((picture) => ({ picture, pageNo: p.pageNo })));
      for (const figure of figures) {
        const found = pictures.find(({ picture }) => picture.file === figure.src);
        assert.ok(found, `${figure.src} is a picture of the document`);
        assert.equal(figure.alt, found.picture.caption ?? `Picture on page ${found.pageNo}`, 'alt: the caption, else where the picture is');
      }
    }
    const { html } = await parse('picture_classification.pdf');
    assert.deepEqual(elements(html, 'figcaption').map(text), ['Figure 1: This is an example image.', 'Figure 2: This is an example image.']);
  });

  test('image modes as docling-serve\'s image_export_mode: referenced links pictures/…; placeholder is <!-- image -->; embedded is a data: URI of the very PNG', async () => {
    const { html, pictures } = await parse('picture_classification.pdf');
    assert.equal(await withImageMode(html, 'referenced'), html);
    const placeholder = await withImageMode(html, 'placeholder');
    assert.equal(elements(placeholder, 'img').length, 0);
    assert.equal(placeholder.match(/<figure>\n<!-- image -->\n<figcaption>/g)?.length, 2, 'the figure and its caption stay');
    const embedded = await withImageMode(html, 'embedded', async (file) => pictures.get(file));
    const sources = elements(embedded, 'img').map((img) => img.attribs.src ?? '');
    assert.equal(sources.length, 2);
    for (const [i, src] of sources.entries()) {
      assert.ok(src.startsWith('data:image/png;base64,'));
      assert.deepEqual(Buffer.from(src.slice('data:image/png;base64,'.length), 'base64'), Buffer.from(pictures.get(`pictures/page-${i + 1}-1.png`)!));
    }
    const missing = await withImageMode(html, 'embedded', async () => undefined);
    assert.equal(elements(missing, 'img').length, 0, 'a picture that cannot be read becomes the placeholder');
  });

  test('the document\'s language and direction from its script: lang="fa" dir="rtl" for the Persian page, "he" for the Hebrew one, "ko" for the Korean report; code as <pre><code>', async () => {
    assert.match((await parse('right_to_left_03.pdf')).html, /<html lang="fa" dir="rtl">/);
    assert.match((await parse('issue11656.pdf')).html, /<html lang="he" dir="rtl">/);
    assert.match((await parse('normal_4pages.pdf')).html, /<html lang="ko">/);
    assert.match((await parse('code_and_formula.pdf')).html, /<pre tabindex="0"><code>/, 'code as <pre><code>');
  });

  test('the HTML\'s lang for Latin text by its commonest words, English unless another language clearly leads (Lorem ipsum is not French)', () => {
    const cases: Array<[string, string]> = [
      ['Die meist gängige Praxis, die mir bei den meisten Projekten begegnet, ist nicht die beste, und das ist auch nicht neu: der Text ist mit den Bildern auf einer Seite.', 'de'],
      ['Depuis l’adoption du Plan d’Urbanisme en 2005, la ville a vu les besoins des résidents changer pour le logement dans le quartier, que nous ne pouvons pas ignorer sur la durée.', 'fr'],
      ['El informe de la comisión que se presentó por la mañana con los datos de las regiones es una base para el debate del presupuesto.', 'es'],
      ['A grasshopper spent the summer hopping about in the sun and singing to his heart\'s content; one day an ant went by.', 'en'],
      ['Lorem ipsum dolor sit amet, consetetur sadipscing elitr, sed diam nonumy eirmod tempor invidunt ut labore et dolore magna aliquyam erat, sed diam voluptua. At vero eos et accusam et justo duo dolores et ea rebum.', 'en'],
    ];
    for (const [sample, lang] of cases) assert.equal(guessLanguage(sample), lang, sample);
  });

  test('"sanitised": hostile text of a PDF (<script>, "onload=, javascript:, </p><img onerror>) stays text — no element, attribute or link comes from it', () => {
    const hostile = ['<script>alert(1)</script>', '" onload="alert(2)', "javascript:alert(3)", '</p><img src=x onerror=alert(4)>', '<!-- -->&lt;b&gt;'];
    const box = { l: 0, t: 700, r: 500, b: 680 };
    const block = (label: Block['label'], text: string, extra: Partial<Block> = {}): Block => ({ label, text, bbox: box, fontSize: 10, bold: false, ...extra });
    const cell = (text: string, row: number, col: number) => ({ text, bbox: box, row, col, rowSpan: 1, colSpan: 1, columnHeader: row === 0, rowHeader: false });
    const doc: ParsedDocument = {
      pages: [
        {
          pageNo: 1,
          width: 600,
          height: 800,
          blocks: [
            block('title', hostile[0]!),
            block('section_header', hostile[1]!, { level: 2 }),
            ...hostile.map((text) => block('text', text)),
            block('list_item', hostile[2]!, { marker: '<b>a)</b>' }),
            block('list_item', hostile[3]!, { marker: '"b)' }),
            block('table', '', { table: { numRows: 2, numCols: 2, cells: [cell(hostile[0]!, 0, 0), cell(hostile[1]!, 0, 1), cell(hostile[2]!, 1, 0), cell(hostile[3]!, 1, 1)] } }),
            block('caption', hostile[4]!, { captionOf: { kind: 'table', index: 9 } }),
            block('code', hostile[3]!),
          ],
          // A picture whose file is not a result path is never linked.
          pictures: [{ bbox: { l: 0, t: 100, r: 100, b: 0 }, file: 'javascript:alert(5)', caption: hostile[1]! }, { bbox: { l: 0, t: 90, r: 100, b: 0 }, file: 'pictures/page-1-2.png', caption: hostile[3]! }],
        },
      ],
    };
    const html = toHtml(doc, { title: hostile[0]! });
    const dom = parseDocument(html);
    const all = DomUtils.findAll(() => true, dom.children);
    assert.deepEqual([...new Set(all.map((e) => e.name))].sort(), ['body', 'caption', 'code', 'figcaption', 'figure', 'h1', 'h2', 'head', 'html', 'img', 'li', 'main', 'meta', 'ol', 'p', 'pre', 'span', 'style', 'table', 'tbody', 'td', 'th', 'thead', 'title', 'tr', 'div'].sort());
    assert.ok(all.every((e) => Object.keys(e.attribs).every((name) => !name.startsWith('on'))), 'no event handler attribute');
    assert.ok(all.every((e) => (e.attribs.href ?? e.attribs.src ?? 'pictures/').startsWith('pictures/')), 'no URL but a result path');
    assert.equal(elements(html, 'img').length, 1);
    // Every hostile string reads back as the very text it was.
    const texts = all.filter((e) => ['h1', 'h2', 'p', 'li', 'td', 'th', 'caption', 'code', 'figcaption', 'title'].includes(e.name)).map(text);
    for (const s of hostile) assert.ok(texts.some((t) => t.includes(s)), `"${s}" is text`);
    assert.ok(texts.includes(`<b>a)</b> ${hostile[2]}`), 'a list marker is text too');
  });

  test('hostile text in a real PDF (the title and a paragraph say <script> and "onload=): escaped in the HTML, plain in the text', async () => {
    const PDFDocument = (await import('pdfkit')).default;
    const doc = new PDFDocument({ size: 'A4' });
    const chunks: Buffer[] = [];
    doc.on('data', (c: Buffer) => chunks.push(c));
    const done = new Promise<Buffer>((resolve) => doc.on('end', () => resolve(Buffer.concat(chunks))));
    doc.font('Helvetica-Bold').fontSize(24).text('<script>alert(1)</script> Report', 72, 80);
    doc.font('Helvetica').fontSize(11).text('Click <a href="javascript:alert(2)" onload="alert(3)">here</a> & see.', 72, 140, { width: 450 });
    doc.end();
    const { html, text: plain } = await runDocparse(new Uint8Array(await done), { name: 'hostile' });
    assert.equal(elements(html, 'script').length, 0);
    assert.equal(elements(html, 'a').length, 0);
    assert.match(html, /&lt;script&gt;alert\(1\)&lt;\/script&gt; Report/);
    assert.match(html, /Click &lt;a href=&quot;javascript:alert\(2\)&quot; onload=&quot;alert\(3\)&quot;&gt;here&lt;\/a&gt; &amp; see\./);
    assert.match(plain, /^<script>alert\(1\)<\/script> Report$/m, 'the text file has the text as printed');
  });
});

describe('plain-text export (issue 40, part 3)', () => {
  test('"the reading-order text … no Markdown syntax": headings without #, the same words in the same order as the Markdown, blocks separated by blank lines', async () => {
    for (const name of CORPUS) {
      const { markdown, text: plain } = await parse(name);
      assert.doesNotMatch(plain, /^<!--|!\[|^\|.*\|$|^```|^<table>/m, name);
      const lines = new Set(plain.split('\n'));
      for (const [whole, , heading] of markdown.matchAll(/^(#{1,6}) (.*)$/gm)) assert.ok(lines.has(heading!) && !lines.has(whole), `${name}: "${heading}" a line of its own, without #`);
      const words = (s: string) => s.replace(/<[^>]+>|[|#*`\\!()[\]-]|\$\$/g, ' ').split(/\s+/).filter((w) => w.length > 3);
      const fromMarkdown = words(markdown.replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1'));
      const fromText = words(plain);
      // The same words in the same order; a table's spanning cell is repeated in the text (as docling's text export does).
      let at = 0;
      for (const word of fromMarkdown) {
        const found = fromText.indexOf(word, at);
        assert.ok(found >= 0, `${name}: "${word}" in reading order`);
        at = found + 1;
      }
    }
  });

  test('tables as rows of columns aligned with spaces; list items keep their markers; a picture is its caption', async () => {
    const otsl = (await parse('2305.03393v1-pg9.pdf')).text;
    const rows = otsl.split('\n').filter((line) => line.startsWith('# enc-layers') || /^\d\s+\d\s+(OTSL|HTML)/.test(line));
    assert.equal(rows.length, 10);
    const column = (line: string) => line.indexOf('0.');
    assert.equal(new Set(rows.slice(2).map(column)).size, 1, 'the TEDs column starts at one place on every row');
    assert.match(rows[0]!, /^# enc-layers {2}# dec-layers {2}Language {2}TEDs +TEDs +TEDs +mAP \(0\.75\) {2}Inference time \(secs\)$/);
    const figures = (await parse('picture_classification.pdf')).text;
    assert.match(figures, /\n\nFigure 1: This is an example image\.\n\n/);
    const doc: ParsedDocument = { pages: [{ pageNo: 1, width: 600, height: 800, blocks: ['•', '3.', 'a)', undefined].map((marker, i) => ({ label: 'list_item' as const, text: `item ${i}`, bbox: { l: 0, t: 700 - i * 20, r: 300, b: 690 - i * 20 }, fontSize: 10, bold: false, ...(marker ? { marker } : {}) })) }] };
    assert.equal(toText(doc), '• item 0\n3. item 1\na) item 2\n- item 3\n');
  });
});

describe('browser: the HTML export in Chromium', { skip: chromiumSkip() }, () => {
  let browser: Browser;
  before(async () => {
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
  });

  test('"accessible": axe-core finds nothing against WCAG 2.2 A/AA on any corpus page (pictures embedded and shown); its best-practice rules only the PDF\'s own heading outline, which the Markdown has too', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    // Pages with spanning headers, pictures, code, Korean lists and footnotes, Persian tables, a 43-row table.
    for (const name of ['2305.03393v1-pg9.pdf', 'amt_handbook_sample.pdf', 'code_and_formula.pdf', 'normal_4pages.pdf', 'right_to_left_03.pdf', 'redbook-contents-p2.pdf', 'picture_classification.pdf']) {
      const { html, markdown, pictures } = await parse(name);
      await page.setContent(await withImageMode(html, 'embedded', async (file) => pictures.get(file)));
      assert.ok(await page.locator('img').evaluateAll((imgs: HTMLImageElement[]) => imgs.every((img) => img.complete && img.naturalWidth > 0)), `${name}: every picture shows`);
      const all = await new AxeBuilder({ page }).analyze();
      assert.ok(all.passes.length > 0);
      const wcag = all.violations.filter((v) => v.tags.some((tag) => /^wcag2\d*a+$/.test(tag)));
      assert.deepEqual(wcag.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`), [], name);
      const levels = [...markdown.matchAll(/^(#{1,6}) /gm)].map((m) => m[1]!.length);
      const outline = new Set<string>();
      if (!levels.includes(1)) outline.add('page-has-heading-one');
      if (levels.some((level, i) => i > 0 && level > levels[i - 1]! + 1)) outline.add('heading-order');
      assert.deepEqual(all.violations.map((v) => v.id).filter((id) => !outline.has(id)), [], `${name}: nothing but the document's own heading outline`);
      if (name === 'amt_handbook_sample.pdf') await page.screenshot({ path: '/tmp/exports-html-amt.png', fullPage: true });
    }
    await context.close();
  });
});
