// The public corpus of the document benchmark (bench/docparse/public/) is well formed: every set's
// manifest lists files that exist, with a valid class, and truth with a `<!-- page N -->` for every
// page of a whole-page document.
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { PDFDocument } from 'pdf-lib';
import { corpusSets, manifestProblems, PUBLIC_CORPUS, publicDocuments } from '../../bench/docparse/public-corpus.ts';

test('every set of the public corpus has a well-formed manifest, its files and its page markers', () => {
  const sets = corpusSets();
  assert.ok(sets.length > 0, `no set with a manifest.json under ${PUBLIC_CORPUS}`);
  const problems = sets.flatMap((set) => manifestProblems(PUBLIC_CORPUS, set));
  assert.deepEqual(problems, []);
});

test('the corpus has at least 150 pages with truth, at least 40 of them not typeset by TeX', () => {
  const documents = publicDocuments();
  const pages = documents.flatMap((d) => [...d.truthPages.keys()].map(() => d));
  assert.ok(pages.length >= 150, `${pages.length} pages with truth`);
  assert.ok(pages.filter((d) => !d.tex).length >= 40, `${pages.filter((d) => !d.tex).length} pages not typeset by TeX`);
});

test('each manifest gives the number of pages its PDF has', async () => {
  const wrong: string[] = [];
  for (const doc of publicDocuments()) {
    const pdf = await PDFDocument.load(readFileSync(doc.pdfPath), { ignoreEncryption: true, updateMetadata: false });
    if (pdf.getPageCount() !== doc.pages) wrong.push(`${doc.set}/${doc.id}: manifest says ${doc.pages}, the PDF has ${pdf.getPageCount()}`);
  }
  assert.deepEqual(wrong, []);
});

// The checks above must be able to fail: a corpus with each kind of fault is reported.
test('fails because a file is missing, a class is unknown or a page has no <!-- page N --> marker', () => {
  const root = mkdtempSync(path.join(tmpdir(), 'signet-corpus-test-'));
  try {
    mkdirSync(path.join(root, 'broken'));
    const source = { repo: 'example/repo', path: 'a.pdf', commit: 'abc' };
    const entry = { source, license: 'MIT', tex: false, truth: 'written', scope: 'page' };
    writeFileSync(
      path.join(root, 'broken', 'manifest.json'),
      JSON.stringify([
        { ...entry, id: 'absent', file: 'absent.pdf', pages: 1, class: 'paper' },
        { ...entry, id: 'odd', file: 'odd.pdf', pages: 1, class: 'poster' },
        { ...entry, id: 'two', file: 'two.pdf', pages: 2, class: 'report' },
      ]),
    );
    writeFileSync(path.join(root, 'broken', 'absent.md'), '<!-- page 1 -->\n\ntext\n');
    writeFileSync(path.join(root, 'broken', 'two.pdf'), '%PDF-1.4\n');
    writeFileSync(path.join(root, 'broken', 'two.md'), '<!-- page 1 -->\n\nonly the first page\n');
    const problems = manifestProblems(root, 'broken');
    assert.ok(problems.some((p) => p.includes('absent.pdf does not exist')), problems.join('\n'));
    assert.ok(problems.some((p) => p.includes('entry 1') && p.includes('class')), problems.join('\n'));
    assert.ok(problems.some((p) => p.includes('no <!-- page 2 -->')), problems.join('\n'));
    assert.throws(() => publicDocuments({ root }), /malformed/);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
