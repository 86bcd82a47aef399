// What a tagged PDF says about itself, as plain data the layout stages read: the structure tree's
// elements on one page (ISO 32000-1 §14.7–14.8, the tags PDF/UA requires) and the document's
// outline (bookmarks, §12.3.3). The PDF reader (pdf/structure.ts, pdf/outline.ts) fills these in;
// nothing here knows the PDF library, so fixtures can be written by hand.
import type { BoundingBox } from '../document.ts';

/** A table cell's Scope attribute (§14.8.5.7, Table attributes): which cells a TH heads. */
export type HeaderScope = 'Row' | 'Column' | 'Both';

/**
 * One structure element on a page. `kids` are in the tree's order — the reading order the author
 * set — mixing child elements and marked-content ids (each id names the text and graphics drawn
 * between BDC … EMC with that /MCID in the page's content; a TextRun carries it as `mcid`).
 */
export type StructNode = {
  /** The standard structure type after the document's role map: P, H1 … H6, H, Title, L, LI, Lbl, LBody, Table, TR, TH, TD, Figure, Caption, Note, Artifact … */
  type: string;
  kids: Array<StructNode | number>;
  /** /Alt: the replacement text of a figure or formula. */
  alt?: string;
  /** /ActualText: the exact text the element's content stands for. */
  actualText?: string;
  /** Table attributes (§14.8.5.7). */
  rowSpan?: number;
  colSpan?: number;
  scope?: HeaderScope;
  /** The box of the graphics (images, paths) drawn under this element's own marked-content ids, in page points (bottom-left origin). */
  graphicsBox?: BoundingBox;
};

/** One bookmark of the document outline. */
export type OutlineEntry = {
  title: string;
  /** 1 for a top-level bookmark, 2 for its children … */
  depth: number;
  /** The 1-based page it points to. */
  pageNo: number;
  /** The y it scrolls to on that page (page points, bottom-left origin), when the destination gives one. */
  y?: number;
};
