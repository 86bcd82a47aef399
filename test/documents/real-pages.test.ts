// Issue 25's reading rules on real pages nobody here wrote (test/fixtures/public/README.md): a
// two-column InDesign handbook page with photos and a labelled drawing, a two-column Korean report,
// and a page of a TeX paper. Each assertion was written by looking at the rendered page.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import type { Block, ParsedDocument } from '../../src/documents/document.ts';
import { runDocparse } from '../../src/documents/parse.ts';

const fixture = (name: string) => readFileSync(new URL(`../fixtures/public/${name}`, import.meta.url));

type Parsed = { document: ParsedDocument; markdown: string };
const parsed = new Map<string, Promise<Parsed>>();
/** Each fixture is parsed once, as a parsing task would (pictures cut). */
function parse(name: string): Promise<Parsed> {
  let result = parsed.get(name);
  if (!result) {
    result = runDocparse(fixture(name), { name, onPicture: async () => {} });
    parsed.set(name, result);
  }
  return result;
}

const blocks = (doc: ParsedDocument, page = 1): Block[] => doc.pages[page - 1]?.blocks ?? [];
const headings = (markdown: string) => [...markdown.matchAll(/^#{1,6} (.+)$/gm)].map((m) => m[1]);
/** The Markdown's paragraph (a block between blank lines) holding `words`. */
const paragraphWith = (markdown: string, words: string) => markdown.split(/\n\n+/).find((p) => p.includes(words)) ?? '';

describe('the two-column handbook page (amt_handbook_sample.pdf, columns 12 pt = 1.2 em apart)', () => {
  // The page's gutter runs between x = 309 (the left column's right edge) and x = 321.
  test('"lines of one column are never joined to another\'s": every text block lies on one side of the gutter', async () => {
    const { document } = await parse('amt_handbook_sample.pdf');
    const body = blocks(document).filter((b) => !b.inPicture && b.label !== 'page_footer' && b.label !== 'caption');
    assert.ok(body.length >= 10);
    for (const block of body) assert.ok(block.bbox.r <= 312 || block.bbox.l >= 318, `${block.text.slice(0, 40)} spans ${block.bbox.l}–${block.bbox.r}`);
    assert.doesNotMatch(paragraphWith((await parse('amt_handbook_sample.pdf')).markdown, 'tightening the bolts or screws'), /anodized/);
  });

  test('"a paragraph that continues from the bottom of one column to the top of the next is one paragraph"', async () => {
    const { markdown } = await parse('amt_handbook_sample.pdf');
    assert.match(markdown, /The wing type that is the most common ranges in size for No\. 6 up to 1⁄4 inch, the Rol-top ranges/);
    // …and the right column's first lines, whose fractions pdf.js reports at 5.5 pt, are part of it, not one-line paragraphs.
    assert.match(paragraphWith(markdown, 'The wing type that is'), /Wing-type nuts are made of anodized aluminum alloy/);
  });

  test('"headings by more than size": an italic line at the body size over its paragraph is a heading, never glued into it', async () => {
    const { markdown } = await parse('amt_handbook_sample.pdf');
    const found = headings(markdown);
    for (const heading of ['Boots Self-Locking Nut', 'Stainless Steel Self-Locking Nut', 'Elastic Stop Nut']) assert.ok(found.includes(heading), `${heading} in ${found.join(' / ')}`);
    assert.match(markdown, /^The Boots self-locking nut is of one piece/m);
  });

  test('"labels inside a drawing are part of the picture, not headings"', async () => {
    const { document, markdown } = await parse('amt_handbook_sample.pdf');
    for (const label of ['Untightened nut', 'Tightened nut', 'Locking shoulder', 'Boots aircraft nut']) {
      assert.ok(!headings(markdown).includes(label), `${label} is no heading`);
      assert.doesNotMatch(markdown, new RegExp(`^${label}$`, 'm'));
      assert.equal(blocks(document).find((b) => b.text === label)?.inPicture, true, `${label} belongs to its picture`);
    }
  });

  test('"page numbers … kept out of the body": the handbook\'s "7-45" is page furniture', async () => {
    const { document, markdown } = await parse('amt_handbook_sample.pdf');
    assert.equal(blocks(document).find((b) => b.text === '7-45')?.label, 'page_footer');
    assert.doesNotMatch(markdown, /^7-45$/m);
  });
});

describe('the two-column Korean report (normal_4pages.pdf, lines 1.5 em apart)', () => {
  test('"reading order from the page\'s geometry": a paragraph\'s lines are one paragraph and the left column is read before the right', async () => {
    const { markdown } = await parse('normal_4pages.pdf');
    assert.match(markdown, /^2020\.3\.30\. 0시 기준 현재 “코로나바이러스감염증-19\(COVID-19, 이하 “코로나-19”\)”의 국내 확진자는 9,661명, 사망자는 158명으로 나타났다\.$/m);
    const left = markdown.indexOf('이와 관련하여 세계보건기구(WHO)는');
    const right = markdown.indexOf('통상 질병보험금에 비해 상해나 재해로 인한');
    assert.ok(left > 0 && right > left, 'the left column before the right');
  });

  test('"headings by … numbering ((1) …)": the numbered sub-sections, one size step above the body, are headings', async () => {
    const { markdown } = await parse('normal_4pages.pdf');
    const found = headings(markdown);
    assert.ok(found.includes('1 들어가며'), found.join(' / '));
    assert.ok(found.includes('(1) 「감염병의 예방 및 관리에 관한 법률」 개정'), found.join(' / '));
    assert.ok(found.includes('(2) 생명보험 표준약관 재해분류표'), found.join(' / '));
  });
});

describe('a page of a TeX paper (2305.03393v1-pg9.pdf)', () => {
  test('"headings by … weight": "5.1 Hyper Parameter Optimization", bold at the body size (EC font SFBX1000), is a heading', async () => {
    const { markdown } = await parse('2305.03393v1-pg9.pdf');
    const found = headings(markdown);
    assert.ok(found.includes('5.1 Hyper Parameter Optimization'), found.join(' / '));
    assert.ok(found.includes('5.2 Quantitative Results'), found.join(' / '));
  });

  test('"running heads and page numbers … on a single page by position": the title line beside the page number is furniture', async () => {
    const { document, markdown } = await parse('2305.03393v1-pg9.pdf');
    const head = blocks(document).find((b) => b.text.startsWith('Optimized Table Tokenization'));
    assert.equal(head?.label, 'page_header');
    assert.equal(blocks(document).find((b) => b.text === '9')?.label, 'page_header');
    assert.doesNotMatch(markdown, /Optimized Table Tokenization for Table Structure Recognition/);
  });
});

describe('a TeX document with a listing and a formula (code_and_formula.pdf)', () => {
  test('"hyphenation undone": words broken at a line\'s end are closed up', async () => {
    const { markdown } = await parse('code_and_formula.pdf');
    assert.match(markdown, /sed diam nonumy eirmod tempor invidunt ut labore et dolore magna aliquyam erat, sed diam voluptua\./);
    assert.doesNotMatch(markdown, /eir-mod|volup-tua|ip-sum/);
  });

  test('"display formulas kept as one block (label formula), never scattered into words"', async () => {
    const { document, markdown } = await parse('code_and_formula.pdf');
    const formula = blocks(document, 2).find((b) => b.label === 'formula');
    assert.equal(formula?.text, 'a2 + 8 = 12');
    assert.match(markdown, /^\$\$\na2 \+ 8 = 12\n\$\$$/m);
  });

  test('a code listing is one block that keeps its indentation (its lines are not paragraphs)', async () => {
    const { document } = await parse('code_and_formula.pdf');
    const code = blocks(document).filter((b) => b.label === 'code');
    assert.equal(code.length, 1);
    assert.match(code[0]?.text ?? '', /^function add \(a , b \) \{\n {4}return a \+ b ;\n\}\nconsole/);
  });
});
