// Scores one parsed document against its ground truth, page by page (opendataloader-bench scores
// one Markdown file per document, and its documents are single pages; here each page is that unit,
// and a document's figure is the mean over its pages).
import type { ParsedDocument } from '../../src/documents/document.ts';
import type { CorpusDocument } from './generated.ts';
import { cellAccuracy, f1, headingMatch, headingScores, markdownHeadings, readingOrderScores, tableScores, wordRecall, type GridCell } from './metrics.ts';

export type PageScores = { nid?: number; nidS?: number; teds?: number; tedsS?: number; mhs?: number; mhsS?: number };

export type DocumentScores = {
  name: string;
  kind: CorpusDocument['kind'];
  /** Pages parsed (and timed); scoredPages of them have ground truth. */
  pages: number;
  scoredPages: number;
  perPage: PageScores[];
  cells: { correct: number; total: number };
  tables: { truth: number; found: number };
  headings: { matched: number; truth: number; parsed: number; levelCorrect: number };
  ocr?: { found: number; total: number };
  pagesPerSecond: number;
  /** Pages per CPU-second of the engine (bench/docparse/cpu.ts): the speed of one worker core, whatever else runs. */
  pagesPerCpuSecond?: number;
  pdftotextPagesPerSecond: number;
};

/** document.md cut at its `<!-- page N -->` comments (the comments left out), by page number. */
export function markdownPages(markdown: string): Map<number, string> {
  const out = new Map<number, string>();
  const parts = markdown.split(/^<!-- page (\d+) -->$/m);
  for (let i = 1; i < parts.length; i += 2) out.set(Number(parts[i]), (parts[i + 1] ?? '').trim());
  return out;
}

/** The parsed tables of a page as grids. */
const parsedGrids = (doc: ParsedDocument, page: number): GridCell[][] =>
  (doc.pages[page]?.blocks ?? []).filter((b) => b.label === 'table' && b.table).map((b) => (b.table?.cells ?? []).map((c) => ({ row: c.row, col: c.col, rowSpan: c.rowSpan, colSpan: c.colSpan, text: c.text })));

/** All text the parser found (furniture included): what OCR word recall looks for the truth's words in. */
const documentText = (doc: ParsedDocument) => doc.pages.flatMap((p) => p.blocks.map((b) => b.text)).join('\n');

export function scoreDocument(
  corpus: CorpusDocument,
  parsed: { markdown: string; document: ParsedDocument },
  speed: { pagesPerSecond: number; pagesPerCpuSecond: number | undefined; pdftotextPagesPerSecond: number },
): DocumentScores {
  const pages = markdownPages(parsed.markdown);
  const numbers = corpus.pageNumbers ?? corpus.pages.map((_, i) => i + 1);
  const predicted = numbers.map((n) => pages.get(n) ?? '');
  const perPage: PageScores[] = [];
  const cells = { correct: 0, total: 0 };
  const tables = { truth: 0, found: 0 };
  corpus.pages.forEach((truth, i) => {
    const gt = truth.markdown.join('\n\n');
    const pred = predicted[i] ?? '';
    perPage.push({ ...readingOrderScores(gt, pred), ...tableScores(gt, pred), ...headingScores(gt, pred) });
    const grids = parsedGrids(parsed.document, (numbers[i] ?? i + 1) - 1);
    const accuracy = cellAccuracy(truth.tables, grids);
    cells.correct += accuracy.correct;
    cells.total += accuracy.total;
    tables.truth += truth.tables.length;
    tables.found += Math.min(truth.tables.length, grids.length);
  });
  const headings = headingMatch(corpus.pages.flatMap((p) => p.headings), markdownHeadings(predicted.join('\n\n')));
  const { pagesPerCpuSecond, ...wall } = speed;
  const scores: DocumentScores = { name: corpus.name, kind: corpus.kind, pages: parsed.document.pages.length, scoredPages: corpus.pages.length, perPage, cells, tables, headings, ...wall };
  if (pagesPerCpuSecond !== undefined) scores.pagesPerCpuSecond = pagesPerCpuSecond;
  // The truth's words: its Markdown with the HTML of spanning tables reduced to the cell text.
  const truthText = corpus.pages.map((p) => p.markdown.join('\n')).join('\n').replace(/<[^>]*>/g, ' ');
  if (corpus.kind === 'scan') scores.ocr = wordRecall(truthText, documentText(parsed.document));
  return scores;
}

const mean = (values: number[]) => (values.length === 0 ? undefined : values.reduce((a, b) => a + b, 0) / values.length);

export type Summary = {
  pages: number;
  scoredPages: number;
  nid?: number;
  nidS?: number;
  teds?: number;
  tedsS?: number;
  mhs?: number;
  mhsS?: number;
  cellAccuracy?: number;
  headingF1: number;
  headingLevelAccuracy?: number;
  ocrWordRecall?: number;
  pagesPerSecond?: number;
  pagesPerCpuSecond?: number;
  pdftotextPagesPerSecond?: number;
};

/** Means over pages (NID, TEDS, MHS, where the truth defines them), sums over cells and headings, pages over seconds. */
export function summarise(documents: DocumentScores[]): Summary {
  const pages = documents.flatMap((d) => d.perPage);
  const pick = (key: keyof PageScores) => mean(pages.map((p) => p[key]).filter((v): v is number => v !== undefined));
  const sum = (f: (d: DocumentScores) => number) => documents.reduce((n, d) => n + f(d), 0);
  const cellTotal = sum((d) => d.cells.total);
  const matched = sum((d) => d.headings.matched);
  const ocr = documents.filter((d) => d.ocr);
  const ocrTotal = ocr.reduce((n, d) => n + (d.ocr?.total ?? 0), 0);
  const seconds = sum((d) => d.pages / d.pagesPerSecond);
  const popplerSeconds = sum((d) => d.pages / d.pdftotextPagesPerSecond);
  const cpuSeconds = sum((d) => (d.pagesPerCpuSecond ? d.pages / d.pagesPerCpuSecond : 0));
  const pageCount = sum((d) => d.pages);
  const summary: Summary = { pages: pageCount, scoredPages: sum((d) => d.scoredPages), headingF1: f1(matched, sum((d) => d.headings.truth), sum((d) => d.headings.parsed)) };
  const optional: Partial<Summary> = {
    nid: pick('nid'),
    nidS: pick('nidS'),
    teds: pick('teds'),
    tedsS: pick('tedsS'),
    mhs: pick('mhs'),
    mhsS: pick('mhsS'),
    cellAccuracy: cellTotal > 0 ? sum((d) => d.cells.correct) / cellTotal : undefined,
    headingLevelAccuracy: matched > 0 ? sum((d) => d.headings.levelCorrect) / matched : undefined,
    ocrWordRecall: ocrTotal > 0 ? ocr.reduce((n, d) => n + (d.ocr?.found ?? 0), 0) / ocrTotal : undefined,
    pagesPerSecond: seconds > 0 ? pageCount / seconds : undefined,
    pagesPerCpuSecond: cpuSeconds > 0 && documents.every((d) => d.pagesPerCpuSecond) ? pageCount / cpuSeconds : undefined,
    pdftotextPagesPerSecond: popplerSeconds > 0 ? pageCount / popplerSeconds : undefined,
  };
  for (const [key, value] of Object.entries(optional)) if (value !== undefined) Object.assign(summary, { [key]: value });
  return summary;
}
