// The shape every engine shares: a PDF read into pages of labelled blocks, in reading order.
// Modelled on docling's DoclingDocument (texts with a label and a provenance of page and box), so
// `document.json` reads familiar to docling's users.

/** What a block is, in docling's label words. */
export type BlockLabel = 'title' | 'section_header' | 'text' | 'list_item' | 'table' | 'page_header' | 'page_footer';

/** A box in PDF points, origin at the page's bottom left (docling's BOTTOMLEFT coordinate origin). */
export type BoundingBox = { l: number; t: number; r: number; b: number };

export type Block = {
  label: BlockLabel;
  /** The block's text; lines of a paragraph joined with single spaces, list items without their marker. */
  text: string;
  bbox: BoundingBox;
  /** The dominant font size of the block, in points. */
  fontSize: number;
  bold: boolean;
  /** For section headers: 1 for the largest heading size in the document, 2 for the next … */
  level?: number;
  /** For tables: rows of cell texts. */
  cells?: string[][];
  /** For list items: the marker the text started with ("•", "-", "1.", "a)"), kept for numbered lists. */
  marker?: string;
};

export type Page = { pageNo: number; width: number; height: number; blocks: Block[] };

export type ParsedDocument = { pages: Page[] };

/** Reports progress: `done` of `total` pages. May be async (the worker records it). */
export type OnProgress = (done: number, total: number) => void | Promise<void>;
