// Real documents from Debian documentation packages, with ground truth for a few pages written by
// looking at the rendered pages (`pdftoppm -r 80 -f N -l N -png`): structure (headings and their
// levels, lists, tables and their spans, what is furniture, reading order) decided from the image,
// the words transcribed with pdftotext's help and checked against the image (bench/docparse/truth/).
// The PDFs are not committed: each is taken from the installed package, or fetched with
// `apt-get download` and unpacked with `dpkg-deb` into a cache directory; when neither works, the
// document is skipped with the reason printed.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PDFDocument } from 'pdf-lib';
import type { CorpusDocument, PageTruth } from './generated.ts';
import { findTables, markdownTablesToHtml, parseHtml, type HtmlElement } from './markdown-html.ts';
import { markdownHeadings, type GridCell } from './metrics.ts';

type Source = { name: string; pkg: string; file: string; pages: number[]; truth: string };

const SOURCES: Source[] = [
  { name: 'Debian: booktabs.pdf (texlive-latex-recommended-doc), scored pages 1–3', pkg: 'texlive-latex-recommended-doc', file: '/usr/share/doc/texlive-doc/latex/booktabs/booktabs.pdf', pages: [1, 2, 3], truth: 'booktabs' },
  { name: 'Debian: shared-mime-info-spec.pdf (shared-mime-info), scored pages 1–2', pkg: 'shared-mime-info', file: '/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf', pages: [1, 2], truth: 'shared-mime-info' },
];

const CACHE = path.join(tmpdir(), 'signet-docbench-debs');

/** The file from the installed package, or from the package downloaded and unpacked into the cache. */
function locate(source: Source): { file?: string; reason?: string } {
  if (existsSync(source.file)) return { file: source.file };
  const unpacked = path.join(CACHE, source.pkg, source.file);
  if (existsSync(unpacked)) return { file: unpacked };
  try {
    mkdirSync(path.join(CACHE, source.pkg), { recursive: true });
    execFileSync('apt-get', ['download', source.pkg], { cwd: CACHE, stdio: 'ignore', timeout: 300_000 });
    const deb = readdirSync(CACHE).find((f) => f.startsWith(`${source.pkg}_`) && f.endsWith('.deb'));
    if (!deb) return { reason: `apt-get download ${source.pkg} gave no .deb` };
    execFileSync('dpkg-deb', ['-x', path.join(CACHE, deb), path.join(CACHE, source.pkg)], { stdio: 'ignore', timeout: 300_000 });
    return existsSync(unpacked) ? { file: unpacked } : { reason: `${source.pkg} has no ${source.file}` };
  } catch (error) {
    return { reason: `${source.file} is not installed and apt-get download ${source.pkg} failed (${(error as Error).message.split('\n')[0]})` };
  }
}

/** Rows and columns of a truth table (HTML or pipe table), spans placed as the grid has them (no row spans in this corpus). */
export function truthGrids(markdown: string): GridCell[][] {
  return findTables(parseHtml(markdownTablesToHtml(markdown))).map((table) => {
    const cells: GridCell[] = [];
    const rows = table.children.filter((c): c is HtmlElement => typeof c !== 'string').flatMap((c) => (c.tag === 'tr' ? [c] : c.children.filter((r): r is HtmlElement => typeof r !== 'string' && r.tag === 'tr')));
    rows.forEach((tr, row) => {
      let col = 0;
      for (const td of tr.children) {
        if (typeof td === 'string' || (td.tag !== 'td' && td.tag !== 'th')) continue;
        const colSpan = Number.parseInt(td.attrs.colspan ?? '1', 10) || 1;
        const text = td.children.map((c) => (typeof c === 'string' ? c : '')).join('');
        cells.push({ row, col, rowSpan: 1, colSpan, text });
        col += colSpan;
      }
    });
    return cells;
  });
}

async function selectPages(pdf: Uint8Array, pages: number[]): Promise<Buffer> {
  const source = await PDFDocument.load(pdf);
  const out = await PDFDocument.create();
  for (const page of await out.copyPages(source, pages.map((p) => p - 1))) out.addPage(page);
  return Buffer.from(await out.save());
}

export type Skipped = { name: string; reason: string };

export async function debianDocuments(): Promise<{ documents: CorpusDocument[]; skipped: Skipped[] }> {
  const documents: CorpusDocument[] = [];
  const skipped: Skipped[] = [];
  for (const source of SOURCES) {
    const { file, reason } = locate(source);
    if (!file) {
      skipped.push({ name: source.name, reason: reason ?? 'not found' });
      continue;
    }
    const pages: PageTruth[] = source.pages.map((n) => {
      const markdown = readFileSync(path.join(import.meta.dirname, 'truth', `${source.truth}-p${n}.md`), 'utf8').trim();
      return { markdown: [markdown], headings: markdownHeadings(markdown), tables: truthGrids(markdown) };
    });
    // The whole manual is parsed (running heads are recognised by repeating over its pages, as in
    // a real task); the pages with truth are scored.
    const pdf = readFileSync(file);
    documents.push({ name: source.name, kind: 'debian', pdf, pages, pageNumbers: source.pages, excerpt: await selectPages(pdf, source.pages) });
  }
  return { documents, skipped };
}
