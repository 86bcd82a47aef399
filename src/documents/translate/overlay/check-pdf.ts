// Reading a source PDF and its translated.pdf the way a reader's tools see them, for the check
// (check.ts): poppler's `pdftotext -bbox-layout` for words and lines (no shell, a time limit), and,
// where asked, pdf.js's text runs for font sizes and its image and figure boxes.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { BoundingBox, ParsedDocument } from '../../document.ts';
import { countMissingGlyphs } from './font-chain.ts';
import { isKeptBlock, isKeptCell } from './keep.ts';
import { overflowKind } from './kinds.ts';
import { checkPage, type Box, type PageCheck, type SizedRun, type Word } from './check.ts';

export type PopplerPage = { width: number; height: number; words: Word[]; lines: Box[]; lineWords: Array<{ box: Box; words: string[] }> };

const unescape = (s: string) => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, '&');

/** Pages of `pdftotext -bbox-layout` output: each page's words and lines, top-down points. */
export function parseBboxLayout(xhtml: string): PopplerPage[] {
  const pages: PopplerPage[] = [];
  for (const page of xhtml.matchAll(/<page width="([\d.]+)" height="([\d.]+)">([\s\S]*?)<\/page>/g)) {
    const words: Word[] = [];
    const lines: Box[] = [];
    const lineWords: PopplerPage['lineWords'] = [];
    for (const line of page[3]!.matchAll(/<line xMin="([-\d.]+)" yMin="([-\d.]+)" xMax="([-\d.]+)" yMax="([-\d.]+)">([\s\S]*?)<\/line>/g)) {
      const box = { xMin: Number(line[1]), yMin: Number(line[2]), xMax: Number(line[3]), yMax: Number(line[4]) };
      lines.push(box);
      const first = words.length;
      for (const w of line[5]!.matchAll(/<word xMin="([-\d.]+)" yMin="([-\d.]+)" xMax="([-\d.]+)" yMax="([-\d.]+)">([^<]*)<\/word>/g)) {
        words.push({ xMin: Number(w[1]), yMin: Number(w[2]), xMax: Number(w[3]), yMax: Number(w[4]), text: unescape(w[5]!) });
      }
      lineWords.push({ box, words: words.slice(first).map((w) => w.text) });
    }
    pages.push({ width: Number(page[1]), height: Number(page[2]), words, lines, lineWords });
  }
  return pages;
}

/** Every page of a PDF as pdftotext sees it. */
export async function popplerPages(pdf: Uint8Array, signal?: AbortSignal): Promise<PopplerPage[]> {
  const dir = await mkdtemp(path.join(tmpdir(), 'signet-check-'));
  try {
    const file = path.join(dir, 'doc.pdf');
    await writeFile(file, pdf);
    const stdout = await new Promise<string>((resolve, reject) => {
      execFile('pdftotext', ['-bbox-layout', file, '-'], { timeout: 60_000, killSignal: 'SIGKILL', maxBuffer: 256 * 1024 * 1024, signal, shell: false }, (error, out) => (error ? reject(error) : resolve(out)));
    });
    return parseBboxLayout(stdout);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** What pdf.js reads on a page, for sizes and drawings: runs with their size, image/figure boxes and rules (top-down). */
export type DrawnPage = { runs: SizedRun[]; drawings: Box[] };

const topDown = (b: BoundingBox, height: number): Box => ({ xMin: b.l, xMax: b.r, yMin: height - b.t, yMax: height - b.b });

export type CheckOptions = {
  /** The parsed source, to name the tables as obstacles and list the blocks that need a translation. */
  document?: ParsedDocument;
  translated?: ParsedDocument;
  /** pdf.js's view of both PDFs (sizes, pictures, rules); without it (b) has only the parser's pictures and tables and (d) is not measured. */
  drawn?: { source: DrawnPage[]; translated: DrawnPage[] };
  signal?: AbortSignal;
};

/** The check of every page of `translatedPdf` against `source`. */
export async function checkTranslatedPdf(source: Uint8Array, translatedPdf: Uint8Array, options: CheckOptions = {}): Promise<PageCheck[]> {
  const [before, after] = await Promise.all([popplerPages(source, options.signal), popplerPages(translatedPdf, options.signal)]);
  // Pages past the source's are notes pages (notes.ts): text continued from the pages before.
  const continued = after.slice(before.length).flatMap((page) => page.words);
  return after.map((page, i) => {
    const src = before[i] ?? { width: page.width, height: page.height, words: [], lines: [], lineWords: [] };
    const parsed = options.document?.pages[i];
    const obstacles: Box[] = [...(options.drawn?.source[i]?.drawings ?? [])];
    if (parsed) {
      for (const p of parsed.pictures ?? []) obstacles.push(topDown(p.bbox, parsed.height));
      for (const b of parsed.blocks) if (b.label === 'table' || b.label === 'picture') obstacles.push(topDown(b.bbox, parsed.height));
    }
    const blocks = parsed && options.translated?.pages[i]
      ? parsed.blocks.flatMap((block, b) => {
        const target = options.translated!.pages[i]!.blocks[b];
        if (!target || isKeptBlock(block, parsed)) return [];
        if (block.label === 'table') {
          return (block.table?.cells ?? []).flatMap((cell, c) => (isKeptCell(cell, block) ? [] : [{ source: cell.text, translation: target.table?.cells[c]?.text ?? cell.text }]));
        }
        return [{ source: block.text, translation: target.text }];
      })
      : undefined;
    return checkPage({
      pageNo: i + 1,
      width: page.width,
      height: page.height,
      source: { words: src.words, lines: src.lines, obstacles, ...(parsed ? { tables: parsed.blocks.filter((b) => b.label === 'table').map((b) => topDown(b.bbox, parsed.height)), regions: regionsOf(parsed) } : {}), ...(options.drawn ? { runs: options.drawn.source[i]?.runs ?? [] } : {}) },
      translated: { words: page.words, ...(options.drawn ? { runs: options.drawn.translated[i]?.runs ?? [] } : {}) },
      ...(options.translated?.pages[i] ? { styles: styleCounts(options.translated.pages[i]!.blocks) } : {}),
      ...(i >= before.length ? { notesPage: true } : continued.length > 0 ? { continued } : {}),
      ...(parsed ? { kinds: parsed.blocks.flatMap((b) => (b.label === 'table' && b.table ? b.table.cells.map((c) => ({ kind: overflowKind(b, true), box: topDown(c.bbox, parsed.height) })) : [{ kind: overflowKind(b), box: topDown(b.bbox, parsed.height) }])) } : {}),
      ...(blocks ? { blocks, missingGlyphs: blocks.reduce((n, b) => n + countMissingGlyphs(b.translation), 0) } : {}),
    });
  });
}

/** The source blocks' boxes, a table's cells each on its own (top-down), for the colour check (f). */
function regionsOf(page: ParsedDocument['pages'][number]): Box[] {
  return page.blocks.flatMap((b) => (b.label === 'table' && b.table && b.table.cells.length > 0 ? b.table.cells.map((c) => topDown(c.bbox, page.height)) : [topDown(b.bbox, page.height)]));
}

/** The translated blocks' styled words and the words whose style the engine's markup lost (translate/styles.ts). */
function styleCounts(blocks: ParsedDocument['pages'][number]['blocks']): { styledWords: number; lost: number } {
  return { styledWords: blocks.reduce((n, b) => n + (b.styledWords ?? 0), 0), lost: blocks.reduce((n, b) => n + (b.stylesLost ?? 0), 0) };
}

/** The figures a person reads on the result view: per page, only pages with something to look at. */
export type CheckSummary = Array<{ page: number; overlaps: number; gutter: number; drawings: number; belowMargin: number; missingGlyphs?: number; styleFallbacks?: number }>;

export function summarise(checks: PageCheck[]): CheckSummary {
  return checks
    .filter((c) => c.overlapPlaces + c.gutterCrossings + c.intoDrawings + c.belowMargin + c.missingGlyphs + c.styleFallbacks > 0)
    .map((c) => ({
      page: c.pageNo,
      overlaps: c.overlapPlaces,
      gutter: c.gutterCrossings,
      drawings: c.intoDrawings,
      belowMargin: c.belowMargin,
      ...(c.missingGlyphs > 0 ? { missingGlyphs: c.missingGlyphs } : {}),
      ...(c.styleFallbacks > 0 ? { styleFallbacks: c.styleFallbacks } : {}),
    }));
}
