// The shape every engine shares: a PDF read into pages of labelled blocks, in reading order.
// Modelled on docling's DoclingDocument (texts with a label and a provenance of page and box), so
// `document.json` reads familiar to docling's users.

/** What a block is, in docling's label words. */
export type BlockLabel =
  | 'title' | 'section_header' | 'text' | 'list_item' | 'table' | 'page_header' | 'page_footer'
  | 'caption' | 'footnote' | 'code' | 'formula' | 'picture';

/** A box in PDF points, origin at the page's bottom left (docling's BOTTOMLEFT coordinate origin). */
export type BoundingBox = { l: number; t: number; r: number; b: number };

/** One cell of a table grid (docling's TableCell): a spanning cell appears once, at its top-left position. */
export type TableCell = {
  text: string;
  bbox: BoundingBox;
  row: number; col: number;            // 0-based start
  rowSpan: number; colSpan: number;    // ≥ 1
  columnHeader: boolean;               // docling column_header
  rowHeader: boolean;                  // docling row_header
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
  /** Source alignment of the block's lines, for re-typesetting (translation). */
  align?: 'left' | 'center' | 'right' | 'justify';
  /** Baseline-to-baseline distance of the block's lines in points (line height), when it has ≥ 2 lines. */
  lineHeight?: number;
  /** For section headers: 1 for the largest heading size in the document, 2 for the next … */
  level?: number;
  /** For tables: rows of cell texts. */
  cells?: string[][];
  /** For list items: the marker the text started with ("•", "-", "1.", "a)"), kept for numbered lists. */
  marker?: string;
  table?: Table;                       // tables: the grid with spans and header flags
  /** caption blocks: the table or picture they belong to (index into page.blocks / page.pictures). */
  captionOf?: { kind: 'table' | 'picture'; index: number };
};

/** A picture on a page: an embedded image or a figure drawn with vectors. */
export type Picture = {
  bbox: BoundingBox;
  /** Result file name, `pictures/page-<n>-<k>.png` (n = page number from 1, k = from 1 on that page). */
  file: string;
  caption?: string;
};

/** Where a page's text came from. */
export type TextSource = 'text-layer' | 'ocr' | 'none';

export type Page = {
  pageNo: number; width: number; height: number;
  blocks: Block[];                     // reading order
  pictures?: Picture[];
  textSource?: TextSource;
  /** Sentences a person understands about this page ("Page 3 has no text layer and no OCR engine is installed …"). */
  notes?: string[];
};

export type ParsedDocument = { pages: Page[]; notes?: string[] };

/** Reports progress: `done` of `total` pages. May be async (the worker records it). */
export type OnProgress = (done: number, total: number) => void | Promise<void>;
