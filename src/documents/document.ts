// The shape every engine shares: a PDF read into pages of labelled blocks, in reading order.
// Modelled on docling's DoclingDocument (texts with a label and a provenance of page and box), so
// `document.json` reads familiar to docling's users.

/** What a block is, in docling's label words. */
export type BlockLabel =
  | 'title'
  | 'section_header'
  | 'text'
  | 'list_item'
  | 'table'
  | 'page_header'
  | 'page_footer'
  | 'caption'
  | 'footnote'
  | 'code'
  | 'formula'
  | 'picture';

/** A box in PDF points, origin at the page's bottom left (docling's BOTTOMLEFT coordinate origin). */
export type BoundingBox = { l: number; t: number; r: number; b: number };

/** One cell of a table grid (docling's TableCell): a spanning cell appears once, at its top-left position. */
export type TableCell = {
  text: string;
  bbox: BoundingBox;
  /** 0-based start row and column. */
  row: number;
  col: number;
  rowSpan: number;
  colSpan: number;
  columnHeader: boolean;
  rowHeader: boolean;
  /** The fill colour of the cell's text as '#rrggbb', when the reader gives colours and it is not black. */
  color?: string;
  /** The dominant size of the cell's text in points (a table's cells may differ: a title cell, a body cell). */
  fontSize?: number;
  /** The cell's text is mostly bold, or italic. */
  bold?: boolean;
  italic?: boolean;
};

export type Table = { numRows: number; numCols: number; cells: TableCell[] };

export type Block = {
  label: BlockLabel;
  /** The block's text; lines of a paragraph joined with single spaces, list items without their marker. */
  text: string;
  bbox: BoundingBox;
  /** The dominant font size of the block, in points. */
  fontSize: number;
  bold: boolean;
  italic?: boolean;
  /** How the block's lines are set, for re-typesetting a translation in the same place. */
  align?: 'left' | 'center' | 'right' | 'justify';
  /** Baseline-to-baseline distance of the block's lines in points, when it has two or more. */
  lineHeight?: number;
  /** Where each printed line after the first starts in `text` (character offsets), for a block of a few lines: a narrow block's translation breaks its lines proportionally (issue 42). */
  lineBreaks?: number[];
  /** For section headers: 1 for the largest heading size in the document, 2 for the next … */
  level?: number;
  /** For tables: rows of cell texts (a spanning cell's text in its first position), derived from `table`. */
  cells?: string[][];
  /** For tables: the grid with spans and header flags. */
  table?: Table;
  /** For list items: the marker the text started with ("•", "-", "1.", "a)"), kept for numbered lists. */
  marker?: string;
  /** For list items: the marker's own fill colour as '#rrggbb', when it differs from the block's (a red square bullet beside black text). */
  markerColor?: string;
  /**
   * For list items whose marker is a symbol glyph (■ • ▪ ➢ ✓ …): where the glyph starts, so a
   * translation keeps the source's glyph, colour and place (issue 42).
   */
  markerBox?: BoundingBox;
  /**
   * Text drawn inside a picture (a drawing's callout labels, a chart's axis titles): part of the
   * picture, so never a heading or a paragraph of the body; the translation keeps it in place.
   */
  inPicture?: boolean;
  /**
   * The block continues the paragraph of the previous text block in reading order (a paragraph that
   * runs from the bottom of one column to the top of the next): one paragraph in the Markdown, two
   * boxes on the page.
   */
  continues?: boolean;
  /**
   * The structure element of a tagged PDF the block came from ("H2", "P", "LI", "Table", "Caption"),
   * when the page's tags were used (layout/tagged.ts); its label and level are the tags', not guessed.
   */
  tag?: string;
  /** For captions: the table (index into the page's blocks) or picture (index into its pictures) it belongs to. */
  captionOf?: { kind: 'table' | 'picture'; index: number };
  /** The dominant fill colour of the block's text as '#rrggbb', when the reader gives colours and it is not black. */
  color?: string;
  /**
   * When the style changes inside the block (a bold term in a sentence, a red word): the block's
   * text cut where it changes, in order; each piece's text is a stretch of `text`.
   */
  spans?: StyledSpan[];
  /**
   * Stretches of the text set in a mathematics font (an inline formula, "x_i ≤ n"): kept as the
   * source has them and never sent to a translation engine (issue 42).
   */
  formulas?: string[];
  /** In a translation: words of the source in another style whose markup the engine lost (set in the block's own style instead). */
  stylesLost?: number;
  /** In a translation: words of the source in another style than the block's own (carried through markup). */
  styledWords?: number;
};

/** How a stretch of a block's text is set, where it differs from the block: weight, slant, fill colour. */
export type SpanStyle = { bold?: boolean; italic?: boolean; color?: string };
export type StyledSpan = SpanStyle & { text: string };

/** A picture on a page: an embedded image or a figure drawn with vectors. */
export type Picture = {
  bbox: BoundingBox;
  /** Result file name, `pictures/page-<n>-<k>.png` (n the page number, k from 1 on that page). */
  file: string;
  caption?: string;
};

/** Where a page's text came from. */
export type TextSource = 'text-layer' | 'ocr' | 'none';

/**
 * A form field and its label (issue 41, item 5): `key` the label printed for it (or its tooltip or
 * name when none is), `value` what was typed or chosen ("Yes" / "Off" for a check box), `name` the
 * field's full name in the PDF.
 */
export type FormEntry = { name: string; type: string; key: string; value: string; bbox: BoundingBox; keyBbox?: BoundingBox };

export type Page = {
  pageNo: number;
  width: number;
  height: number;
  /** In reading order. */
  blocks: Block[];
  pictures?: Picture[];
  textSource?: TextSource;
  /** Sentences a person understands about this page ("Page 3 has no text layer and …"). */
  notes?: string[];
  /**
   * What the page's structure tree gave: `used`, its roles and order came from the tags; `all-p`, the
   * tree tagged every text block P and the page was laid out as untagged (layout/tagged.ts judgeTags).
   */
  tags?: 'used' | 'all-p';
  /** The page's form fields with their labels, top to bottom (layout/form-fields.ts). */
  fields?: FormEntry[];
};

export type ParsedDocument = { pages: Page[]; notes?: string[] };

/** Reports progress: `done` of `total` pages. May be async (the worker records it). */
export type OnProgress = (done: number, total: number) => void | Promise<void>;

/** Pictures are cut at this resolution (pdf/extract.ts); the JSON's ImageRef says so (export/docling.ts). */
export const PICTURE_DPI = 150;

/** Page headers and footers: labelled in the JSON, left out of the body and the Markdown. */
export const FURNITURE: ReadonlySet<BlockLabel> = new Set(['page_header', 'page_footer']);

/** Whether the page furniture (running heads and footers, page numbers, tagged artifacts) is shown with the body. */
export type FurnitureMode = 'drop' | 'keep';

/**
 * spec (issue 41): page headers and footers are "left out of the Markdown and HTML by default
 * (`--furniture keep` to keep them)". The one place they are left out: every reader of the body (the
 * Markdown and HTML exports) takes the document through this; the docling JSON keeps them, labelled, under `furniture`.
 */
export function withoutFurniture(doc: ParsedDocument): ParsedDocument {
  return { ...doc, pages: doc.pages.map((page) => (page.blocks.some((b) => FURNITURE.has(b.label)) ? pageBody(page) : page)) };
}

/** The page without its furniture; a caption's table, an index into the blocks, is counted again among those left. */
function pageBody(page: Page): Page {
  const newIndex: number[] = [];
  let kept = 0;
  for (const block of page.blocks) newIndex.push(FURNITURE.has(block.label) ? -1 : kept++);
  const blocks = page.blocks
    .filter((b) => !FURNITURE.has(b.label))
    .map((b) => (b.captionOf?.kind === 'table' ? { ...b, captionOf: { kind: 'table' as const, index: newIndex[b.captionOf.index] ?? -1 } } : b));
  return { ...page, blocks };
}
