// Translating a parsed document: every block's text and every table cell, page by page so progress
// is reported per page, in batches of about `batchChars` characters so one request stays small.
// The structure (labels, boxes, levels, table shape) is kept; only the texts change.
import type { Block, OnProgress, Page, ParsedDocument } from '../document.ts';
import { ensurePairSupported, TranslationError, type LanguagePair, type Translator } from './translator.ts';

export type TranslateDocumentOptions = {
  signal?: AbortSignal;
  onProgress?: OnProgress;
  /** The most characters sent in one batch (a longer single segment goes alone). */
  batchChars?: number;
};

export const DEFAULT_BATCH_CHARS = 4000;

export async function translateDocument(
  doc: ParsedDocument,
  translator: Translator,
  pair: LanguagePair,
  options: TranslateDocumentOptions = {},
): Promise<ParsedDocument> {
  const batchChars = options.batchChars ?? DEFAULT_BATCH_CHARS;
  await ensurePairSupported(translator, pair, options.signal);
  // Source text → translation for the whole document: a header or footer repeated on every page
  // is sent once.
  const memory = new Map<string, string>();
  const pages: Page[] = [];
  for (const [index, page] of doc.pages.entries()) {
    options.signal?.throwIfAborted();
    const wanted = [...new Set(pageTexts(page).map((t) => t.trim()))].filter((t) => needsTranslation(t) && !memory.has(t));
    for (const batch of batches(wanted, batchChars)) {
      const translated = await translator.translate(batch, pair, options.signal);
      if (translated.length !== batch.length) {
        throw new TranslationError(`${translator.engine} returned ${translated.length} translations for ${batch.length} segments`, { retryable: false });
      }
      batch.forEach((source, i) => memory.set(source, translated[i]!.trim()));
    }
    pages.push({ ...page, blocks: page.blocks.map((block) => translateBlock(block, memory)) });
    await options.onProgress?.(index + 1, doc.pages.length);
  }
  return { pages };
}

/**
 * Only text with a letter in it is sent: empty, whitespace-only, number-only and punctuation-only
 * segments ("12", "3.2", "(iv)" has letters, "— 4 —" has none) stay as they are.
 */
export function needsTranslation(text: string): boolean {
  return /\p{L}/u.test(text);
}

/** Groups segments in order into batches of at most `maxChars` characters (a longer segment goes alone). */
export function batches(segments: string[], maxChars: number): string[][] {
  const result: string[][] = [];
  let current: string[] = [];
  let size = 0;
  for (const segment of segments) {
    if (current.length > 0 && size + segment.length > maxChars) {
      result.push(current);
      current = [];
      size = 0;
    }
    current.push(segment);
    size += segment.length;
  }
  if (current.length > 0) result.push(current);
  return result;
}

function pageTexts(page: Page): string[] {
  return page.blocks.flatMap((block) => [block.text, ...(block.cells ?? []).flat(), ...(block.table?.cells ?? []).map((cell) => cell.text)]);
}

function translateBlock(block: Block, memory: Map<string, string>): Block {
  const translated: Block = { ...block, text: lookUp(block.text, memory) };
  if (block.cells) translated.cells = block.cells.map((row) => row.map((cell) => lookUp(cell, memory)));
  // Tables are translated cell by cell (issue 18), each cell keeping its place in the grid.
  if (block.table) translated.table = { ...block.table, cells: block.table.cells.map((cell) => ({ ...cell, text: lookUp(cell.text, memory) })) };
  return translated;
}

function lookUp(text: string, memory: Map<string, string>): string {
  const translation = memory.get(text.trim());
  // An engine that answers nothing for a real segment would lose the text; keep the original instead.
  return translation === undefined || translation === '' ? text : translation;
}
