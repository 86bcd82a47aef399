// Issue 41's rules ("Tables and structure that hold on documents nobody here tuned for"), each on a
// real page of the public corpus (bench/docparse/public/, whose manifests say where each file comes
// from), read through the whole pipeline as a parsing task reads it.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { runDocparse } from '../../src/documents/parse.ts';
import { furnitureHeadings } from '../../bench/docparse/furniture-headings.ts';
import { tableGrid } from '../helpers/table-grid.ts';

const corpus = (set: string, file: string) => readFileSync(path.join(import.meta.dirname, '..', '..', 'bench', 'docparse', 'public', set, file));

async function parse(set: string, file: string) {
  const { document, markdown } = await runDocparse(corpus(set, file), { name: file });
  const blocks = document.pages.flatMap((p) => p.blocks);
  return { document, blocks, tables: blocks.filter((b) => b.label === 'table'), markdown };
}

describe('tables on documents nobody here tuned for (issue 41, item "Tables")', () => {
  test('"tables without rules whose columns are aligned by whitespace only": a spreadsheet\'s left-set headers over right-set numbers, and a year column counting up, are one two-column table', async () => {
    const { tables, blocks, markdown } = await parse('docling', 'odf_table_with_title_01_ods.pdf');
    assert.equal(tables.length, 1, markdown);
    assert.deepEqual(tableGrid(tables[0]?.table), [
      ['Year', 'Freshwater Ducks'],
      ['2019', '120'],
      ['2020', '135'],
      ['2021', '150'],
      ['2022', '170'],
      ['2023', '160'],
      ['2024', '180'],
    ]);
    assert.ok(!blocks.some((b) => b.label === 'section_header' && /^(?:Year|Freshwater Ducks)$/.test(b.text)), 'the column headers are not headings');
  });

  test('"Vertical text inside cells needs a run\'s writing direction in PageContent": IBM\'s Redbook p. 8 (Table 2-2) — the column headers set up the page stay each in its own column, read bottom to top, and the X marks fall under them', async () => {
    const { document, markdown } = await parse('docling', 'redp5110_sampled.pdf');
    const page = document.pages[7];
    const tables = page?.blocks.filter((b) => b.label === 'table') ?? [];
    assert.equal(tables.length, 1, markdown);
    const rows = tableGrid(tables[0]?.table);
    assert.deepEqual(rows[0], ['User action', '*JOBCTL', 'QIBM_DB_SECADM', 'QIBM_DB_SQLADM', 'QIBM_DB_SYSMON', 'No Authority']);
    assert.deepEqual(rows[1], ['SET CURRENT DEGREE (SQL statement)', 'X', '', 'X', '', '']);
    assert.deepEqual(rows[4], ['STRDBMON or ENDDBMON commands targeting a job that matches the current user', 'X', '', 'X', 'X', 'X']);
    assert.ok(!page?.blocks.some((b) => b.label !== 'table' && /SYSMON|No Authority/.test(b.text)), 'no header text left in the flow');
  });
});

describe('slides and sideways pages (issue 41, items "Tables" and "Furniture")', () => {
  test('"vertical text … needs a run\'s writing direction in PageContent": a LibreOffice slide printed with /Rotate 270 is read with its text upright — its shaded table of bulleted cells comes out as rows and columns, bullets left out', async () => {
    const { document } = await parse('docling', 'odf_presentation_01_odp.pdf');
    const tables = document.pages[0]?.blocks.filter((b) => b.label === 'table') ?? [];
    assert.equal(tables.length, 1);
    const rows = tableGrid(tables[0]?.table);
    assert.deepEqual(rows[1], ['', 'A merged with B', 'A merged with B', 'C', 'A', 'B', 'C']);
    assert.deepEqual(rows[2], ['R1', 'True', 'False', '', 'False', 'True', 'True']);
  });

  test('"tables beside text": lists set side by side on a slide (numbered and bulleted columns) are lists, and the slide\'s background rectangle running from edge to edge bounds no table', async () => {
    const { document } = await parse('docling', 'odf_presentation_01_odp.pdf');
    const page = document.pages[2];
    assert.ok(!page?.blocks.some((b) => b.label === 'table'), page?.blocks.map((b) => `${b.label}: ${b.text}`).join('\n'));
    assert.ok(page?.blocks.some((b) => b.label === 'list_item' && b.text === 'List item4'));
  });
});

describe('furniture and tagged PDFs (issue 41, items "Furniture" and "Tagged PDFs")', () => {
  test('"lines that repeat at the same place across pages … never become headings", "Tagged Artifacts are furniture too": the PDF Association\'s slide deck — its running title, site address, author line and footer are page_header/page_footer, left out of the Markdown', async () => {
    const { document, markdown } = await parse('pages', 'pdfua-presentation.pdf');
    for (const line of ['www.pdfa.org', 'DocEng 2019: More than just digital paper', 'Klaas Posselt, Member of the PDF Association', 'A PDF Association Presentation']) {
      assert.ok(!markdown.includes(`# ${line}`), `${line} is no heading`);
      assert.ok(!markdown.split('\n').some((l) => l.startsWith(line)), `${line} is left out of the Markdown`);
    }
    const furniture = document.pages[1]?.blocks.filter((b) => b.label === 'page_header' || b.label === 'page_footer').map((b) => b.text) ?? [];
    assert.ok(furniture.some((t) => t.includes('www.pdfa.org')) && furniture.some((t) => t.startsWith('DocEng 2019')), furniture.join(' | '));
  });

  test('"where the tags are trusted, heading levels and titles come from them and nothing untagged is promoted to a heading": the slide deck\'s headings are its H1 and H2 elements, and nothing else', async () => {
    const { blocks } = await parse('pages', 'pdfua-presentation.pdf');
    const headings = blocks.filter((b) => b.label === 'section_header' || b.label === 'title').map((b) => [b.tag, b.text.replace(/\s*\*.*$/, '')]);
    assert.deepEqual(headings, [
      ['H1', 'Topics'],
      ['H1', 'Short intro on accessibility and Tagged PDF'],
      ['H2', 'Main rules:'],
      ['H2', 'More rules, e.g.:'],
      ['H1', 'Advantages of Tagged PDF'],
      ['H1', 'Future of Tagged PDF'],
      ['H1', 'How to get Tagged / accessible PDF?'],
      ['H1', 'Get in touch'],
    ]);
  });

  test('issue 42 "superscript footnote markers stay attached to their word", issue 41 "tagged PDFs trusted where their authors were right": a Note tagged inside the heading it annotates is a footnote of its own — the heading keeps its "*", the note is not heading text', async () => {
    const { blocks } = await parse('pages', 'pdfua-presentation.pdf');
    const heading = blocks.find((b) => b.tag === 'H1' && b.text.startsWith('Short intro'))!;
    assert.equal(heading.text.trim(), 'Short intro on accessibility and Tagged PDF*');
    const note = blocks.find((b) => b.text.includes('PDF/UA in a Nutshell'))!;
    assert.equal(note.label, 'footnote');
    assert.equal(note.tag, 'Note');
  });

  test('"a letterhead or address block is never a heading": the tagged invoice\'s company name, address, phone and web are a paragraph, its tagged H1 the one heading', async () => {
    const { blocks, markdown } = await parse('pages', 'pdfua-invoice.pdf');
    const headings = blocks.filter((b) => b.label === 'section_header' || b.label === 'title');
    assert.deepEqual(headings.map((b) => b.text), ['INVOICE 2020-10'], markdown);
    assert.match(markdown, /^Kraxi Systems, Inc\. Paper Planes/m);
  });

  test('"left out of the Markdown and HTML by default (`--furniture keep` to keep them)": with furniture kept the slide footer is back in the Markdown, as a line, not a heading', async () => {
    const pdf = corpus('pages', 'pdfua-presentation.pdf');
    const dropped = await runDocparse(pdf, { name: 'deck' });
    const kept = await runDocparse(pdf, { name: 'deck', furniture: 'keep' });
    assert.ok(!dropped.markdown.includes('www.pdfa.org\n'));
    assert.match(kept.markdown, /^www\.pdfa\.org$/m);
    assert.ok(!/^#+ www\.pdfa\.org/m.test(kept.markdown));
    assert.ok(!dropped.html.includes('>www.pdfa.org<') && kept.html.includes('<p>www.pdfa.org</p>'), 'the HTML leaves them out, or keeps them as paragraphs, the same way');
    assert.ok(!dropped.text.split('\n').includes('www.pdfa.org') && kept.text.split('\n').includes('www.pdfa.org'), 'and so does the plain text');
    const json = JSON.parse(dropped.json) as { furniture: { children: unknown[] }; texts: Array<{ label: string; text: string }> };
    assert.ok(json.furniture.children.length > 0 && json.texts.some((t) => t.label === 'page_header' && t.text === 'www.pdfa.org'), 'the JSON keeps them under furniture either way');
  });
});

describe('figures drawn with boxes (issue 41, item "Tables")', () => {
  test('a syntax diagram of boxes and labels captioned "Figure 3-1", most of its cells empty, is a picture, not a table: its labels stay out of the text', async () => {
    const { document } = await parse('docling', 'redp5110_sampled.pdf');
    const page = document.pages[8];
    assert.ok(page?.blocks.some((b) => b.text.startsWith('Figure 3-1')));
    assert.ok(!page?.blocks.some((b) => b.label === 'table'), 'no table on the page');
    const flow = page?.blocks.filter((b) => !b.inPicture).map((b) => b.text) ?? [];
    assert.ok(!flow.some((t) => /^(?:CREATE PERMISSION|FOR ROWS|ON <table name>)$/.test(t)), flow.join(' | '));
  });
});

describe('CJK paragraphs (issue 41, item "Forms and CJK")', () => {
  test('"double-spaced CJK lines joined into their paragraphs": a Chinese quarterly report\'s notice (14-pt lines 2.2 em apart, paragraphs a further third of an em) is three paragraphs under the page\'s title, none of them a heading', async () => {
    const { document } = await parse('pages', 'issue-67-zh.pdf');
    const blocks = document.pages[0]?.blocks.filter((b) => b.label !== 'page_header' && b.label !== 'page_footer') ?? [];
    assert.deepEqual(blocks.map((b) => b.label), ['title', 'text', 'text', 'text'], blocks.map((b) => `${b.label}: ${b.text}`).join('\n'));
    assert.equal(blocks[0]?.text, '第一节 重要提示');
    assert.match(blocks[1]?.text ?? '', /^公司董事会、监事会.*内容的真实、准确、完整，不存在虚假记载.*并承担个别和连带的法律责任。$/u);
    assert.equal(blocks[2]?.text, '所有董事均已出席了审议本次季报的董事会会议。');
    assert.match(blocks[3]?.text ?? '', /^公司负责人.*\(会计主管人员\)钱扣明声明：保证季度报告中财务报表的真实、准确、完整。$/u);
  });
});

describe('form pages (issue 41, item "Forms and CJK")', () => {
  test('"form pages\' headings": on a filled-in report form, "Agency: …", "Case Tracking Number: …" and "Date of Incident: …" are fields and a filled-in sentence is an answer — the form\'s title and its lettered sections stay its headings', async () => {
    const { document } = await parse('pages', 'dsp-fond-581.pdf');
    const headings = document.pages.flatMap((p) => p.blocks.filter((b) => b.label === 'section_header' || b.label === 'title').map((b) => b.text));
    assert.ok(headings.some((t) => t.startsWith('90-Day Summary Report')), headings.join(' | '));
    for (const field of ['Agency:', 'Case Tracking Number:', 'Date of Incident:', 'Age:']) assert.ok(!headings.some((t) => t.startsWith(field)), `${field} is no heading: ${headings.join(' | ')}`);
    assert.ok(!headings.some((t) => /\p{L}{2}\.$/u.test(t)), 'no heading ends a sentence');
  });
});

describe('headings over tables (issue 41, item "Tables")', () => {
  test('a document that is mostly tables under headings has its body in the cells: the LibreOffice document\'s section titles, set larger than the cells, are its headings', async () => {
    const { document } = await parse('docling', 'text_document_03_odt.pdf');
    const headings = document.pages[0]?.blocks.filter((b) => b.label === 'section_header' || b.label === 'title').map((b) => b.text) ?? [];
    assert.deepEqual(headings, ['Table with rich cells', 'Table with nested table', 'Table with pictures']);
  });
});

describe("headings measured against docling's own truth (issue 41, \"NID ≥ 0.95, MHS ≥ 0.90\")", () => {
  const headingTexts = (blocks: Array<{ label: string; text: string }>) => blocks.filter((b) => b.label === 'section_header' || b.label === 'title').map((b) => b.text);

  test('"where the body is in the tables\' cells, the short bold lines between the tables are their headings, even when the cells\' labels are set in bold too": the Persian prospectus page\'s two numbered section lines', async () => {
    const { blocks, markdown } = await parse('docling', 'right_to_left_03.pdf');
    const headings = headingTexts(blocks);
    assert.equal(headings.length, 2, markdown);
    assert.match(headings[0] ?? '', /استاندارد کالا/u);
    assert.match(headings[1] ?? '', /پذيرش در بورس/u);
    assert.equal(blocks.filter((b) => b.label === 'table').length, 2, 'the key–value tables stay tables');
  });

  test('"a turned line is as wide as one line is high": a slide printed sideways has its title for a heading; "an item of a bulleted list is a list item however large its type"', async () => {
    const { document } = await parse('docling', 'odf_presentation_01_odp.pdf');
    assert.deepEqual(headingTexts(document.pages[0]?.blocks ?? []), ['Test Table Slide']);
    const second = document.pages[1]?.blocks ?? [];
    assert.equal(headingTexts(second)[0], 'Second slide title');
    assert.deepEqual(second.filter((b) => b.label === 'list_item').map((b) => b.text), ['With foo', 'Bar', 'And baz things']);
  });

  test('"a heading is set apart from the body of its own page": a slide\'s 28-pt lead line is its body, not a heading; a brochure page bound into a manual in 7-pt type has its 9-pt blue lines for headings and its list as text, not footnotes', async () => {
    const { document } = await parse('docling', 'odf_presentation_01_odp.pdf');
    assert.deepEqual(headingTexts(document.pages[1]?.blocks ?? []), ['Second slide title']);
    const redbook = await parse('docling', 'redp5110_sampled.pdf');
    const brochure = redbook.document.pages[1]?.blocks ?? [];
    const headings = headingTexts(brochure);
    for (const line of ['We build confident, satisfied clients', 'Who we are, some of what we do']) assert.ok(headings.includes(line), headings.join(' | '));
    assert.equal(brochure.find((b) => b.text.startsWith('Global CoE engagements'))?.label, 'text');
    assert.ok(!brochure.some((b) => b.label === 'footnote' && b.fontSize > 7), 'the 7-pt body is no footnote');
  });

  test('"a cover has one heading, its title" and "a title stands in the top half of its page": the Redbook\'s front cover — its tag lines and author names are title matter, and the series name set as a 70-pt logo at its foot is not the title', async () => {
    const { document } = await parse('docling', 'redp5110_sampled.pdf');
    const cover = document.pages[0]?.blocks ?? [];
    assert.deepEqual(headingTexts(cover), ['Row and Column Access Control Support in IBM DB2 for i']);
    assert.equal(cover.find((b) => b.label === 'title')?.text, 'Row and Column Access Control Support in IBM DB2 for i');
    assert.equal(cover.find((b) => b.text === 'Redpaper')?.label, 'text');
    assert.equal(cover.find((b) => b.text === 'ibm.com/redbooks')?.label, 'text', 'a web address is no heading');
  });

  test('"above the title on page 1, a line set smaller than the title is its masthead": the Korean assembly report\'s series name and issue number over its title are no headings; its title and "1 들어가며" are', async () => {
    const { document } = await parse('docling', 'normal_4pages.pdf');
    const headings = headingTexts(document.pages[0]?.blocks ?? []);
    assert.ok(!headings.some((t) => /제1695호|이슈와/u.test(t)), headings.join(' | '));
    assert.ok(headings.some((t) => t.startsWith('코로나-19 관련 보험약관상')) && headings.some((t) => t.includes('들어가며')), headings.join(' | '));
  });

  test('"a heading wrapped onto a second line set a size smaller is one heading": the Redbook\'s back cover title in 33 and 30 pt', async () => {
    const { document } = await parse('docling', 'redp5110_sampled.pdf');
    const headings = headingTexts(document.pages[16]?.blocks ?? []);
    assert.ok(headings.includes('Row and Column Access Control Support in IBM DB2 for i'), headings.join(' | '));
    assert.ok(!headings.includes('Support in IBM DB2 for i'), headings.join(' | '));
    assert.ok(!headings.includes('ibm.com/redbooks'), 'a web address is no heading');
  });

  test('"No running head, footer or page number as a heading anywhere in the corpus": a running foot beside a page number already found furniture goes with it — the Redbook\'s "Chapter 3. Row and Column Access Control" beside "27" is a page footer, not a footnote', async () => {
    const { document, markdown } = await parse('docling', 'redp5110_sampled.pdf');
    const foot = document.pages[11]?.blocks.find((b) => b.text === 'Chapter 3. Row and Column Access Control');
    assert.equal(foot?.label, 'page_footer');
    assert.ok(!markdown.split('\n').includes('Chapter 3. Row and Column Access Control'), 'left out of the Markdown');
  });

  test('"lines that repeat at the same place across pages" start in the head zone: the FDA guidance\'s running head "Contains Nonbinding Recommendations" on a portrait and a landscape page is a page header on both, no heading; a table\'s "Source: …" note is no heading', async () => {
    const { document } = await parse('icdar2013', 'us-015.pdf');
    for (const page of document.pages) assert.equal(page.blocks.find((b) => b.text === 'Contains Nonbinding Recommendations')?.label, 'page_header', `page ${page.pageNo}`);
    const { markdown } = await parse('icdar2013', 'us-015.pdf');
    assert.deepEqual(furnitureHeadings(markdown), [], 'the benchmark\'s check finds no heading repeated on both pages');
    const eurostat = await parse('icdar2013', 'eu-007.pdf');
    const notes = eurostat.blocks.filter((b) => /^Source:/.test(b.text));
    assert.ok(notes.length >= 3 && notes.every((b) => b.label !== 'section_header'), notes.map((b) => `${b.label}: ${b.text}`).join(' | '));
  });

  test('"No running head, footer or page number as a heading" on a single page, where nothing repeats: the one-line blocks wholly inside the foot zone below the body are the running foot when the page number is down there too, or when the line holds the number itself', async () => {
    const nsf = await parse('icdar2013', 'us-009.pdf');
    for (const line of ['Prospective New Awardee Guide', 'June 2011']) assert.equal(nsf.blocks.find((b) => b.text === line)?.label, 'page_footer', line);
    const gsa = await parse('icdar2013', 'us-011a.pdf');
    const feet = gsa.blocks.filter((b) => /FY 2011 GSA/.test(b.text));
    assert.ok(feet.length === 2 && feet.every((b) => b.label === 'page_footer'), feet.map((b) => `${b.label}: ${b.text}`).join(' | '));
  });

  test('"a running line the repeats found furniture takes the rest of its band with it": ReportLab\'s user guide — the changing chapter title at the top right beside the constant "User Guide" is a page header, no heading', async () => {
    const { document } = await parse('pages', 'reportlab-userguide.pdf');
    for (const page of document.pages) {
      const head = page.blocks.filter((b) => b.bbox.b >= page.height * 0.92 && b.text.trim() !== '');
      assert.ok(head.length > 0 && head.every((b) => b.label === 'page_header'), `page ${page.pageNo}: ${head.map((b) => `${b.label}: ${b.text}`).join(' | ')}`);
    }
  });

  test('"A figure\'s or table\'s caption … is no heading": an appendix table\'s "Table A-1. Summary of forecast assumptions to 2021" is a caption', async () => {
    const { document } = await parse('icdar2013', 'us-019.pdf');
    const caption = document.pages[0]?.blocks.find((b) => b.text.startsWith('Table A-1.'));
    assert.equal(caption?.label, 'caption');
  });

  test('"a heading\'s subtitle belongs to the heading": on the Redbook\'s brochure page the italic line right under "DB2 for i Center of Excellence" is a paragraph; the bold title over it stays a heading', async () => {
    const { document } = await parse('docling', 'redp5110_sampled.pdf');
    const blocks = document.pages[1]?.blocks ?? [];
    assert.equal(blocks.find((b) => b.text === 'Expert help to achieve your business requirements')?.label, 'text');
    assert.ok(blocks.some((b) => b.label === 'section_header' && b.text === 'DB2 for i Center of Excellence' && b.fontSize > 18));
  });

  test('"text set up or down an upright page is a slug, never a heading": the arXiv stamp in a paper\'s margin', async () => {
    const { document } = await parse('pages', 'arxiv-2408.02509.pdf');
    const headings = headingTexts(document.pages[0]?.blocks ?? []);
    assert.ok(!headings.some((t) => t.startsWith('arXiv:')), headings.join(' | '));
    assert.ok(headings.some((t) => t.startsWith('Practical Attacks against Black-box')), headings.join(' | '));
  });
});
