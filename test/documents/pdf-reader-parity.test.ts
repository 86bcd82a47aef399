// Reader parity (issue 31): for real corpus pages, the PDFium reader's PageContent matches what the
// pdf.js reader handed layout before it (its output recorded in test/fixtures/pdfjs-pages/ from the
// last pdf.js commit): the same words in the same order, each run placed within 1 pt, the same
// rules and the same image boxes. Stated tolerances, and why each exists:
// - the text is compared letter by letter, spaces aside, after NFKC (pdf.js gave Arabic presentation
//   forms, PDFium the letters they show), as a longest common subsequence of ≥ 98 % of the longer:
//   PDFium keeps a raised letter (the E of the TeX logo) out of its neighbours' run (so "T E X" is
//   three words where pdf.js had one), places an Arabic vowel mark at its letter, and lists a few
//   text objects of a Japanese table in another order (layout sorts runs by position anyway);
// - each run of pdf.js's has a PDFium run starting within 1 pt of it (left edge and baseline), for
//   ≥ 95 % of pdf.js's runs (PDFium cuts a line where the direction of writing changes);
// - rules of no length are left out on both sides (a dot is no rule), and so are the ones pdf.js
//   drew at the page's corner from link annotations' appearance streams (it placed them without
//   the annotation's rectangle); every other rule is there within 1 pt, and no rule is added.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import type { PageContent, Ruling, TextRun } from '../../src/documents/layout/geometry.ts';
import { openPdf, readPage } from '../../src/documents/pdf/reader.ts';

const FIXTURES = path.join(import.meta.dirname, '..', 'fixtures', 'pdfjs-pages');
const CORPUS = path.join(import.meta.dirname, '..', '..', 'bench', 'docparse', 'public');

type Fixture = { file: string; pageNo: number; content: PageContent };

const words = (runs: TextRun[]) => runs.flatMap((run) => run.text.normalize('NFKC').split(/\s+/).filter((w) => w !== ''));
const letters = (runs: TextRun[]) => [...words(runs).join('')];

/** The length of the longest common subsequence of a and b. */
function commonInOrder(a: string[], b: string[]): number {
  let row = new Uint32Array(b.length + 1);
  for (const item of a) {
    const next = new Uint32Array(b.length + 1);
    for (let j = 1; j <= b.length; j += 1) next[j] = item === b[j - 1] ? (row[j - 1] ?? 0) + 1 : Math.max(row[j] ?? 0, next[j - 1] ?? 0);
    row = next;
  }
  return row[b.length] ?? 0;
}

const isDot = (r: Ruling) => Math.abs(r.x2 - r.x1) < 0.01 && Math.abs(r.y2 - r.y1) < 0.01;
/** pdf.js's misplaced link-annotation borders: small boxes drawn from the page's corner. */
const atCorner = (r: Ruling) => r.x2 <= 12 && r.y2 <= 12;
const near = (a: Ruling, b: Ruling) => Math.abs(a.x1 - b.x1) <= 1 && Math.abs(a.x2 - b.x2) <= 1 && Math.abs(a.y1 - b.y1) <= 1 && Math.abs(a.y2 - b.y2) <= 1;

const fixtures = readdirSync(FIXTURES).filter((name) => name.endsWith('.json'));

describe('the PDFium reader matches the pdf.js reader on real corpus pages', () => {
  for (const name of fixtures) {
    const { file, pageNo, content: before } = JSON.parse(readFileSync(path.join(FIXTURES, name), 'utf8')) as Fixture;
    test(`issue 31: "same words in the same order, boxes within 1 pt, same rules and image boxes" — ${file} p. ${pageNo}`, async () => {
      const open = await openPdf(readFileSync(path.join(CORPUS, file)));
      let now: PageContent;
      try {
        now = readPage(open, pageNo);
      } finally {
        open.close();
      }
      assert.ok(Math.abs(now.width - before.width) < 0.01 && Math.abs(now.height - before.height) < 0.01, 'the same page size');

      const [old, found] = [letters(before.runs), letters(now.runs)];
      const common = commonInOrder(old, found);
      assert.ok(common >= 0.98 * Math.max(old.length, found.length), `letters in order: ${common} of ${old.length} (pdf.js) and ${found.length} (PDFium)`);

      const placed = before.runs.filter((run) => now.runs.some((s) => Math.abs(s.x - run.x) <= 1 && Math.abs(s.y - run.y) <= 1));
      assert.ok(placed.length >= 0.95 * before.runs.length, `runs placed within 1 pt: ${placed.length} of ${before.runs.length}`);

      const oldRules = before.rulings.filter((r) => !isDot(r) && !atCorner(r));
      const newRules = now.rulings.filter((r) => !isDot(r));
      assert.deepEqual(oldRules.filter((r) => !newRules.some((n) => near(r, n))), [], 'every rule pdf.js found is there');
      assert.deepEqual(newRules.filter((r) => !oldRules.some((o) => near(r, o))), [], 'no rule is added');

      const box = (b: { l: number; r: number; t: number; b: number }) => [b.l, b.b, b.r, b.t].map((v) => Math.round(v));
      const oldImages = (before.images ?? []).map((i) => i.bbox);
      const newImages = (now.images ?? []).map((i) => i.bbox);
      assert.equal(newImages.length, oldImages.length, 'as many image and figure boxes');
      for (const image of oldImages) assert.ok(newImages.some((n) => Math.abs(n.l - image.l) <= 1 && Math.abs(n.r - image.r) <= 1 && Math.abs(n.t - image.t) <= 1 && Math.abs(n.b - image.b) <= 1), `image box ${box(image).join(' ')} is there within 1 pt`);
    });
  }
});
