// Issue 25: "Right-to-left scripts in logical order, with presentation forms normalised (NFKC) so the
// text can be searched and translated" — layout/bidi.ts on hand-made runs (copied from what pdf.js
// reports for the real pages), then the whole engine on real Arabic, Persian and Hebrew pages
// (test/fixtures/public/README.md). Expected sentences were read off the rendered pages and checked
// against docling's reference parse of the same files.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { keepGlyphsWhole, logicalFromVisual, logicalLine, normalizePresentationForms } from '../../src/documents/layout/bidi.ts';
import { groupBlocks } from '../../src/documents/layout/blocks.ts';
import type { TextRun } from '../../src/documents/layout/geometry.ts';
import { groupLines } from '../../src/documents/layout/lines.ts';
import { runDocparse } from '../../src/documents/parse.ts';

const WORD_GAP = 0.12;
const run = (text: string, x: number, width: number, y = 700, size = 12): TextRun => ({ text, x, y, width, size, bold: false, hasEOL: false });

describe('layout/bidi.ts on runs as pdf.js gives them', () => {
  test('"Latin words keep their own order and their place in an Arabic sentence": بلغة R و Python, not Python و R', () => {
    // right_to_left_01's title: pdf.js's items, left to right on the page.
    const runs = [run('Python', 223.8, 41.2), run('و', 265, 6.1), run('R', 274.4, 9.8), run('تحسين الإنتاجية وحل المشكلات من خلال البرمجة بلغة', 287.6, 234.4)];
    assert.deepEqual(logicalLine(runs, WORD_GAP), { text: 'تحسين الإنتاجية وحل المشكلات من خلال البرمجة بلغة R و Python', direction: 'rtl' });
  });

  test('"a Latin letter touching an Arabic one where two runs meet is a word boundary" (Word draws "Python" against "من")', () => {
    const runs = [run('من الأدوات القوية', 111.7, 284.6), run('Python', 396.6, 34), run('و', 433.6, 5.2), run('R', 441.8, 8), run('تعتبر البرمجة بلغة', 452.8, 69.4)];
    assert.equal(logicalLine(runs, WORD_GAP)?.text, 'تعتبر البرمجة بلغة R و Python من الأدوات القوية');
  });

  test('"a line with no right-to-left letter is left to the caller"', () => {
    assert.equal(logicalLine([run('Python', 10, 34), run('and R', 50, 30)], WORD_GAP), undefined);
  });

  test('"a number keeps its digits in order and follows the letters that precede it in reading" (rules W2, W4: "2-5-", not "5-2-")', () => {
    // right_to_left_03's heading "2-5- استاندارد کالا": the section number is drawn right of the words.
    const runs = [run('استاندارد کالا', 377.1, 68.9), run('-', 449.1, 7.4), run('2', 456.7, 7.3), run('-', 464, 7.4), run('5', 471.5, 8.1)];
    assert.equal(logicalLine(runs, WORD_GAP)?.text, '2-5- استاندارد کالا');
  });

  test('"brackets keep the character the PDF gives" (Word maps a mirrored glyph to the character typed: סעיף 15(ב)(4))', () => {
    // pdf.js's issue11656 page, fourth line.
    const runs = [run(') לחוק מבקר המדינה', 236.2, 104.3), run('4', 340.5, 6), run('(ב)(', 346.5, 19.7), run('15', 366.2, 12), run('לחיוב פעולות אלה לפי סעיף', 381.6, 140.5)];
    assert.equal(logicalLine(runs, WORD_GAP)?.text, 'לחיוב פעולות אלה לפי סעיף 15(ב)(4) לחוק מבקר המדינה');
  });

  test('"a left-to-right line keeps its order; an Arabic word inside it reads right to left"', () => {
    // Drawn: "See " then the glyphs of كتاب from its last letter (left) to its first (right).
    assert.equal(logicalFromVisual('See باتك here', 'ltr'), 'See كتاب here');
  });

  test('"presentation forms are normalised (NFKC)": the lam-alef ligature U+FEFB reads lam, alef', () => {
    assert.equal(normalizePresentationForms('\ufefb'), 'لا');
    // Drawn left to right: final lam-alef, then initial seen → logical seen, lam, alef.
    assert.equal(logicalFromVisual('\ufefc\ufeb3'), 'سلا');
    assert.equal(normalizePresentationForms('Ａ ﬁ'), 'Ａ ﬁ', 'only Hebrew and Arabic presentation forms');
  });
});

describe('ligature glyphs kept whole (keepGlyphsWhole)', () => {
  test('"a ligature\'s letters keep the order its ToUnicode gives": الإنتاجية, not اإلنتاجية', () => {
    // Drawn left to right: ة ي ج ا ت ن [لإ] ا — one glyph for lam-alef-hamza-below, mapped to "لإ".
    const glyphs = ['ة', 'ي', 'ج', 'ا', 'ت', 'ن', 'لإ', 'ا'];
    const fixed = keepGlyphsWhole([{ str: 'اإلنتاجية', dir: 'rtl', fontName: 'f1' }], [{ font: 'f1', glyphs }]);
    assert.deepEqual(fixed, ['الإنتاجية']);
  });

  test('"a real alef followed by lam (إلى) is two glyphs and stays as it is"', () => {
    const drawn = [{ font: 'f1', glyphs: ['ى', 'ل', 'إ', ' ', 'ة', 'ي', 'ج', 'ا', 'ت', 'ن', 'لإ', 'ا'] }];
    const fixed = keepGlyphsWhole([{ str: 'اإلنتاجية إلى', dir: 'rtl', fontName: 'f1' }], drawn);
    assert.deepEqual(fixed, ['الإنتاجية إلى']);
  });

  test('"glyphs are matched per font and in drawn order": a Latin item between two Arabic ones does not shift them', () => {
    const drawn = [
      { font: 'ar', glyphs: ['ة', 'ي', 'ج', 'ا', 'ت', 'ن', 'لإ', 'ا'] },
      { font: 'lat', glyphs: ['R'] },
      { font: 'ar', glyphs: ['ت', 'لا', 'ك', 'ش', 'م', 'ل', 'ا'] },
    ];
    const items = [
      { str: 'اإلنتاجية', dir: 'rtl', fontName: 'ar' },
      { str: 'R', dir: 'ltr', fontName: 'lat' },
      { str: 'المشكالت', dir: 'rtl', fontName: 'ar' },
    ];
    assert.deepEqual(keepGlyphsWhole(items, drawn), ['الإنتاجية', 'R', 'المشكلات']);
  });

  test('"an item the glyphs do not explain is left as pdf.js gave it", and so is the rest of that font', () => {
    const drawn = [{ font: 'f1', glyphs: ['ب', 'لا', 'ق'] }];
    const items = [
      { str: 'قالبx', dir: 'rtl', fontName: 'f1' },
      { str: 'اال', dir: 'rtl', fontName: 'f1' },
    ];
    assert.deepEqual(keepGlyphsWhole(items, drawn), ['قالبx', 'اال']);
  });
});

describe('a right-to-left paragraph', () => {
  test('"a right-aligned right-to-left paragraph is one paragraph: its lines start at the same right edge" (a ragged left edge is no indent)', () => {
    // Lines of a paragraph set flush right; the third ends 1.5 em short on the left, which read from
    // the left would be a first-line indent starting a new paragraph.
    const lines = groupLines([
      run('الأول الأول الأول الأول الأول الأول', 100, 422, 700),
      run('الثاني الثاني الثاني الثاني الثاني', 100, 422, 686),
      run('الثالث الثالث الثالث الثالث الثالث', 118, 404, 672),
      run('الرابع الرابع الرابع الرابع الرابع', 100, 422, 658),
    ]);
    assert.ok(lines.every((line) => line.rtl));
    const blocks = groupBlocks(lines);
    assert.equal(blocks.length, 1, blocks.map((b) => b.text).join(' | '));
  });
});

const fixture = (name: string) => readFileSync(new URL(`../fixtures/public/${name}`, import.meta.url));
const markdownOf = async (name: string) => (await runDocparse(fixture(name), { name })).markdown;

describe('real pages (docling right_to_left_01–03, pdf.js issue11656)', () => {
  test('Arabic (Word): "Right-to-left scripts in logical order" — title, sentences with R and Python, lam-alef whole', async () => {
    const markdown = await markdownOf('right_to_left_01.pdf');
    assert.match(markdown, /^# تحسين الإنتاجية وحل المشكلات من خلال البرمجة بلغة R و Python$/m);
    assert.ok(markdown.includes('تعتبر البرمجة بلغة R و Python من الأدوات القوية التي يمكن أن تعزز الإنتاجية'), markdown);
    // Across a line break, so the paragraph's lines are also in order: "…لتطوير حلول مبتكرة للمشكلات المختلفة. على / سبيل المثال…"
    assert.ok(markdown.includes('للمشكلات المختلفة. على سبيل المثال، يمكن استخدام مكتبة pandas في Python لإدارة البيانات بكفاءة، بينما توفر R أدوات قوية للرسم البياني'), markdown);
    assert.ok(!markdown.includes('اإلنتاجية') && !markdown.includes('Pythonو'), markdown);
  });

  test('Arabic (Word): "a right-aligned paragraph is joined as a paragraph" — four paragraphs under the title, as printed', async () => {
    const markdown = await markdownOf('right_to_left_01.pdf');
    const paragraphs = markdown.split('\n\n').filter((p) => p.trim() !== '' && !p.startsWith('<!--') && !p.startsWith('#'));
    assert.equal(paragraphs.length, 4, paragraphs.join('\n---\n'));
    assert.ok(paragraphs[0]?.startsWith('تعتبر البرمجة') && paragraphs[0].endsWith('بشكل كبير في تحسين نتائج العمل.'), paragraphs[0]);
  });

  test('Persian (Word): words of a table cell in reading order and ligatures whole — کالای, کارگزاری آرمون بورس', async () => {
    // The framed page header (شرکت بورس کالای ايران) is a Word /Artifact, page furniture left out of the
    // Markdown by default (issue 41: "Tagged Artifacts are furniture too"); kept here to check its words.
    const markdown = (await runDocparse(fixture('right_to_left_03.pdf'), { name: 'right_to_left_03.pdf', furniture: 'keep' })).markdown;
    for (const phrase of ['شرکت بورس کالای ايران', 'کارگزاری آرمون بورس', 'بر اساس قيمت های جهانی', 'حداقل درصد عرضه از توليد/ کل فروش/ فروش', '3- پذيرش در بورس']) {
      assert.ok(markdown.includes(phrase), `${phrase}\n${markdown}`);
    }
  });

  test('Arabic (PowerPoint): "brackets keep the character the PDF gives" — (2024 - 2026)', async () => {
    const markdown = await markdownOf('right_to_left_02.pdf');
    assert.ok(markdown.includes('(2024 - 2026)'), markdown);
  });

  test('Hebrew (Word): "Right-to-left scripts in logical order" — סעיף 15(ב)(4) לחוק', async () => {
    const markdown = await markdownOf('issue11656.pdf');
    assert.ok(markdown.includes('שלום עולם מה שלום כולם?'), markdown);
    assert.ok(markdown.includes('אני יורד מן החוטים, אני כבר ילד אמיתי.'), markdown);
    assert.ok(markdown.includes('לחיוב פעולות אלה לפי סעיף 15(ב)(4) לחוק מבקר המדינה'), markdown);
  });
});
