// A page's structure tree cut into the units layout makes blocks of: one unit per block-level
// element (a paragraph, a heading, a list item, a caption, a table, a figure) with the
// marked-content ids under it in the tree's order, grouping elements (Document, Part, Sect, Div, L …)
// opened up, inline elements (Span, Link, Em …) folded into the block around them.
// The element types are ISO 32000-1 §14.8.4's standard structure types (and PDF 2.0's Title, FENote).
// opendataloader-pdf's TaggedDocumentProcessor (processStructElem) walks its tree the same way:
// headings, lists, tables, captions and notes each taken whole, anything else opened up.
import type { StructNode } from './structure-tree.ts';

/** Elements that only group others: their kids are read in order. */
const GROUPING = new Set(['Document', 'DocumentFragment', 'Part', 'Art', 'Sect', 'Div', 'NonStruct', 'Private', 'BlockQuote', 'TOC', 'L', 'Aside', 'Index', 'Form', 'Annot']);
/** Inline elements: part of the block they sit in; at the top of a page they make a paragraph of their own. */
const INLINE = new Set(['Span', 'Link', 'Em', 'Strong', 'Quote', 'Reference', 'BibEntry', 'Ruby', 'RB', 'RT', 'RP', 'Warichu', 'WT', 'WP', 'Sub', 'Lbl', 'LBody']);
/** Block-level elements and the role each gives its block. */
const BLOCK_ROLE: Record<string, UnitRole> = {
  P: 'text',
  Title: 'title',
  H: 'section_header',
  H1: 'section_header',
  H2: 'section_header',
  H3: 'section_header',
  H4: 'section_header',
  H5: 'section_header',
  H6: 'section_header',
  LI: 'list_item',
  TOCI: 'list_item',
  Caption: 'caption',
  Note: 'footnote',
  FENote: 'footnote',
  Code: 'code',
  Formula: 'formula',
  Artifact: 'furniture',
};
/** Structure types a tagged page may use, for telling a tree of standard tags from one of private names. */
const KNOWN = new Set([...GROUPING, ...INLINE, ...Object.keys(BLOCK_ROLE), 'Table', 'TR', 'TH', 'TD', 'THead', 'TBody', 'TFoot', 'Figure']);

export type UnitRole = 'text' | 'title' | 'section_header' | 'list_item' | 'caption' | 'footnote' | 'code' | 'formula' | 'furniture';

/** A marked-content id, or a span of ids whose text is replaced by the element's /ActualText. */
export type Content = number | { actualText: string; mcids: number[] };

export type TextUnit = {
  kind: 'text';
  role: UnitRole;
  /** The element type the unit came from ("H2", "P", "LI"); "P" for bare content outside any block. */
  tag: string;
  /** Heading level: n for Hn; for H, its depth among the Sect elements around it. */
  level?: number;
  /** For list items: the ids of the label (Lbl), kept apart as the marker. */
  label?: Content[];
  content: Content[];
};
export type TableUnit = { kind: 'table'; tag: 'Table'; node: StructNode };
export type FigureUnit = { kind: 'figure'; tag: 'Figure' | 'Formula'; node: StructNode; content: Content[] };
export type Unit = TextUnit | TableUnit | FigureUnit;

const isNode = (kid: StructNode | number): kid is StructNode => typeof kid !== 'number';

/** Every marked-content id under `node`, in the tree's order; an element with /ActualText stands for all of its ids. */
export function contentOf(node: StructNode, out: Content[] = []): Content[] {
  if (node.actualText !== undefined && node.type !== 'Figure') {
    const mcids = contentOf({ ...node, actualText: undefined }).flatMap((c) => (typeof c === 'number' ? [c] : c.mcids));
    if (mcids.length > 0) out.push({ actualText: node.actualText, mcids });
    return out;
  }
  for (const kid of node.kids) {
    if (isNode(kid)) contentOf(kid, out);
    else out.push(kid);
  }
  return out;
}

/** Whether the element holds a block-level element somewhere below it (a Div of paragraphs, not a Span of words). */
const holdsBlocks = (node: StructNode): boolean => node.kids.some((kid) => isNode(kid) && (kid.type in BLOCK_ROLE || kid.type === 'Table' || kid.type === 'Figure' || GROUPING.has(kid.type) || holdsBlocks(kid)));

export type UnitCounts = { elements: number; unknown: number };

/** The page's units in the tree's order, and how many elements had types no standard names. */
export function unitsOf(roots: StructNode[]): { units: Unit[]; counts: UnitCounts } {
  const units: Unit[] = [];
  const counts: UnitCounts = { elements: 0, unknown: 0 };
  const walk = (node: StructNode, sects: number) => {
    counts.elements += 1;
    if (!KNOWN.has(node.type)) counts.unknown += 1;
    // A Caption inside its Table or Figure (as LaTeX's tagpdf and PDF 2.0 place it) follows it as a
    // unit of its own, next to it in order, so it is attached as a caption (tagged.ts).
    const inner = node.type === 'Table' || node.type === 'Figure' ? node.kids.filter((kid): kid is StructNode => isNode(kid) && kid.type === 'Caption') : [];
    const without = inner.length > 0 ? { ...node, kids: node.kids.filter((kid) => !inner.includes(kid as StructNode)) } : node;
    const captions = () => inner.forEach((caption) => units.push(textUnit(caption, 'caption', sects)));
    if (node.type === 'Table') return void (units.push({ kind: 'table', tag: 'Table', node: without }), captions());
    if (node.type === 'Figure' || (node.type === 'Formula' && node.alt !== undefined && contentOf(node).length === 0)) {
      return void (units.push({ kind: 'figure', tag: node.type, node: without, content: contentOf(without) }), captions());
    }
    const role = BLOCK_ROLE[node.type];
    if (role && !(node.type === 'LI' && holdsLists(node))) {
      // A footnote tagged inside the block it annotates (a Note in a heading, after its reference
      // mark): the block without it, then the note as a footnote unit of its own, where it is drawn.
      const notes = role === 'footnote' ? [] : notesIn(node);
      units.push(textUnit(notes.length > 0 ? withoutNotes(node) : node, role, sects));
      for (const note of notes) units.push(textUnit(note, 'footnote', sects));
      return;
    }
    // A private type that holds paragraphs is a group; one that holds only text is a paragraph.
    if (GROUPING.has(node.type) || holdsBlocks(node) || node.type === 'LI') {
      let loose: Content[] = [];
      const flush = () => {
        if (loose.length > 0) units.push({ kind: 'text', role: 'text', tag: 'P', content: loose });
        loose = [];
      };
      for (const kid of node.kids) {
        if (!isNode(kid)) loose.push(kid);
        else if (INLINE.has(kid.type) && !holdsBlocks(kid)) contentOf(kid, loose);
        else {
          flush();
          walk(kid, sects + (node.type === 'Sect' ? 1 : 0));
        }
      }
      flush();
      return;
    }
    units.push({ kind: 'text', role: 'text', tag: KNOWN.has(node.type) ? node.type : 'P', content: contentOf(node) });
  };
  for (const root of roots) walk(root, 0);
  return { units, counts };
}

const NOTE_TYPES = new Set(['Note', 'FENote']);

/** The Note elements anywhere under `node` (a note's own notes stay in it). */
function notesIn(node: StructNode, out: StructNode[] = []): StructNode[] {
  for (const kid of node.kids) {
    if (!isNode(kid)) continue;
    if (NOTE_TYPES.has(kid.type)) out.push(kid);
    else notesIn(kid, out);
  }
  return out;
}

/** `node` with every Note under it left out. */
function withoutNotes(node: StructNode): StructNode {
  return { ...node, kids: node.kids.filter((kid) => !isNode(kid) || !NOTE_TYPES.has(kid.type)).map((kid) => (isNode(kid) ? withoutNotes(kid) : kid)) };
}

/** A list item holding a nested list: its own label and body are one item, the nested list's items others. */
const holdsLists = (node: StructNode) => node.kids.some((kid) => isNode(kid) && kid.type === 'L');

function textUnit(node: StructNode, role: UnitRole, sects: number): TextUnit {
  const unit: TextUnit = { kind: 'text', role, tag: node.type, content: [] };
  const heading = /^H([1-6])$/.exec(node.type);
  if (heading) unit.level = Number(heading[1]);
  else if (node.type === 'H') unit.level = Math.max(1, Math.min(6, sects));
  if (node.type === 'LI') {
    const label: Content[] = [];
    for (const kid of node.kids) {
      if (isNode(kid) && kid.type === 'Lbl') contentOf(kid, label);
      else if (isNode(kid)) contentOf(kid, unit.content);
      else unit.content.push(kid);
    }
    if (label.length > 0) unit.label = label;
    return unit;
  }
  contentOf(node, unit.content);
  return unit;
}

/** The ids a unit claims, its label's included. */
export function unitMcids(unit: Unit): number[] {
  const flat = (content: Content[]) => content.flatMap((c) => (typeof c === 'number' ? [c] : c.mcids));
  if (unit.kind === 'table') return flat(contentOf(unit.node));
  if (unit.kind === 'figure') return flat(unit.content);
  return [...flat(unit.label ?? []), ...flat(unit.content)];
}
