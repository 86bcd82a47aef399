// Translating a parsed document: every block's text and every table cell, page by page so progress
// is reported per page, in batches of about `batchChars` characters so one request stays small.
// The structure (labels, boxes, levels, table shape) is kept; only the texts change.
import type { Block, OnProgress, Page, ParsedDocument } from '../document.ts';
import { compileGlossary, followsGlossary, protect, restore, type Glossary } from './glossary.ts';
import { alignStyles, fromMarkup, styledStretches, toMarkup } from './styles.ts';
import { protectVerbatim, restoreVerbatim } from './verbatim.ts';
import { ensurePairSupported, TranslationError, type LanguagePair, type Translator } from './translator.ts';

export type TranslateDocumentOptions = {
  signal?: AbortSignal;
  onProgress?: OnProgress;
  /** The most characters sent in one batch (a longer single segment goes alone). */
  batchChars?: number;
  /** The task's glossary: its terms are protected before and checked after translation. */
  glossary?: Glossary;
};

/** How many earlier segment pairs go with each batch as context (engines that read it). */
const CONTEXT_SEGMENTS = 12;

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
  /** Styled stretch → the engine's translation of it alone ('' when the engine gave none). */
  const stretchMemory = new Map<string, string>();
  const matcher = compileGlossary(options.glossary);
  const hints = () => ({ glossary: options.glossary, context: [...memory].slice(-CONTEXT_SEGMENTS).map(([source, translation]) => ({ source, translation })) });
  const send = async (segments: string[], markup = false) => {
    const translated = await translator.translate(segments, pair, options.signal, { ...hints(), ...(markup ? { markup: true } : {}) });
    if (translated.length !== segments.length) {
      throw new TranslationError(`${translator.engine} returned ${translated.length} translations for ${segments.length} segments`, { retryable: false });
    }
    return translated;
  };
  let missed = 0;
  const pages: Page[] = [];
  for (const [index, page] of doc.pages.entries()) {
    options.signal?.throwIfAborted();
    const wanted = [...new Set(pageTexts(page).map((t) => t.trim()))].filter((t) => needsTranslation(t) && !memory.has(t));
    // Blocks whose style changes inside them go as markup (styles.ts), in batches of their own.
    const marked = [...new Set(page.blocks.map((b) => (needsTranslation(b.text) ? toMarkup(b)?.html : undefined)).filter((m): m is string => m !== undefined))].filter((m) => !memory.has(m));
    // A segment's inline formulas (stretches in a math font), by its plain text and by its markup.
    const formulas = new Map<string, string[]>();
    for (const block of page.blocks) {
      if (!block.formulas) continue;
      formulas.set(block.text.trim(), block.formulas);
      const html = toMarkup(block)?.html;
      if (html) formulas.set(html, block.formulas);
    }
    for (const [list, markup] of [[wanted, false], [marked, true]] as const) {
      for (const batch of batches(list, batchChars)) {
        // Glossary terms go as their placeholders first (glossary.ts: a term may hold a number, such as
        // "Chapter 3"), then formulas, numbers and URLs as tokens (verbatim.ts); restored in reverse.
        const prepared = batch.map((source) => {
          const glossed = protect(source, matcher);
          const verbatim = protectVerbatim(glossed.text, formulas.get(source), markup);
          return { text: verbatim.text, used: glossed.used, kept: verbatim.kept };
        });
        const translated = await send(prepared.map((p) => p.text), markup);
        const lost: string[] = [];
        batch.forEach((source, i) => {
          const unkept = restoreVerbatim(translated[i]!, prepared[i]!.kept);
          const restored = unkept === undefined ? undefined : restore(unkept, prepared[i]!.used, matcher);
          if (restored === undefined) lost.push(source);
          else memory.set(source, restored.trim());
        });
        // An engine that dropped a placeholder: the segment is translated again as it is, so no text is lost.
        if (lost.length > 0) (await send(lost, markup)).forEach((translation, i) => memory.set(lost[i]!, translation.trim()));
      }
    }
    // An engine that dropped every style tag: its translation of each styled stretch alone, for
    // dictionary alignment (styles.ts). Not finding one only leaves its words in the block's style.
    const stretches = [...new Set(page.blocks.flatMap((block) => {
      const markup = needsTranslation(block.text) ? toMarkup(block) : undefined;
      const html = markup ? memory.get(markup.html) : undefined;
      if (!markup || !html || fromMarkup(html, markup).spans) return [];
      return styledStretches(block, markup).map((s) => s.text);
    }))].filter((t) => needsTranslation(t) && !stretchMemory.has(t));
    if (stretches.length > 0) {
      try {
        (await send(stretches)).forEach((translation, i) => stretchMemory.set(stretches[i]!, translation.trim()));
      } catch (error) {
        if (options.signal?.aborted) throw error;
        for (const t of stretches) stretchMemory.set(t, '');
      }
    }
    // Checked after translation: every glossary term in the source shows its translation.
    for (const source of wanted) if (!followsGlossary(source, memory.get(source) ?? '', matcher)) missed++;
    pages.push({ ...page, blocks: page.blocks.map((block) => translateBlock(block, memory, stretchMemory)) });
    await options.onProgress?.(index + 1, doc.pages.length);
  }
  const notes = missed > 0 ? [`${missed} ${missed === 1 ? 'passage does' : 'passages do'} not use the glossary's translation of a term: the engine changed or dropped it.`] : [];
  return notes.length > 0 ? { pages, notes } : { pages };
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
  // A block with inline styles is sent once, as markup (styles.ts), not also as plain text.
  return page.blocks.flatMap((block) => [...(toMarkup(block) ? [] : [block.text]), ...(block.cells ?? []).flat(), ...(block.table?.cells ?? []).map((cell) => cell.text)]);
}

function translateBlock(block: Block, memory: Map<string, string>, stretchMemory: Map<string, string>): Block {
  const { spans: _spans, ...rest } = block;
  const translated: Block = { ...rest, text: lookUp(block.text, memory) };
  const markup = toMarkup(block);
  const html = markup ? memory.get(markup.html) : undefined;
  if (markup && html) {
    // The translation with its inline styles; a tag the engine lost leaves its words in the block's style.
    const styled = fromMarkup(html, markup);
    if (styled.text.trim() !== '') {
      translated.text = styled.text;
      if (styled.spans) translated.spans = styled.spans;
    }
    translated.styledWords = markup.words.reduce((a, b) => a + b, 0);
    translated.stylesLost = styled.stylesLost;
    // Every tag dropped: the styled stretches found in the translation by their own translations.
    if (!styled.spans && styled.text.trim() !== '') {
      const aligned = alignStyles(styled.text, styledStretches(block, markup), markup, stretchMemory);
      if (aligned.spans) translated.spans = aligned.spans;
      translated.stylesLost = Math.min(styled.stylesLost, aligned.stylesLost);
    }
  }
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
