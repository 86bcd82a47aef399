// The figures of the public opendataloader-bench (github.com/opendataloader-project/opendataloader-bench,
// read at commit b4b9505), computed the way its evaluator computes them from a ground-truth Markdown
// and a predicted Markdown:
//   NID  / NID-S  — src/evaluator_reading_order.py: rapidfuzz fuzz.ratio of the whitespace-collapsed
//                   Markdown (tables as HTML), and of the same with the tables removed;
//   TEDS / TEDS-S — src/evaluator_table.py (after PubTabNet's TEDS): tree edit distance between the
//                   HTML table trees, 1 − distance / nodes, with cell text compared by normalised
//                   Levenshtein distance (TEDS-S: structure only, spans still count);
//   MHS  / MHS-S  — src/evaluator_heading_level.py: tree edit distance between flat heading trees
//                   (every heading a child of the document, the text under it one content node; all
//                   heading levels alike), 1 − distance / nodes.
// Plus this project's own figures for issue 17's targets: table-cell accuracy, heading F1 (and
// level accuracy), OCR word recall.
import { indelRatio, levenshtein } from './strings.ts';
import { countNodes, treeEditDistance, type TreeNode } from './tree-edit.ts';
import { findTables, innerContent, markdownTablesToHtml, normaliseTable, parseHtml, unescapeHtml, type HtmlElement } from './markdown-html.ts';

const collapse = (text: string) => text.replace(/\s+/g, ' ').trim();

// --- NID ---------------------------------------------------------------------------------------

const HTML_TABLE = /<table[^>]*?>[\s\S]*?<\/table>/gi;

/** evaluate_reading_order: [NID, NID-S], or undefined when the truth is empty. */
export function readingOrderScores(truth: string, predicted: string): { nid: number; nidS: number } | undefined {
  const gt = markdownTablesToHtml(truth);
  if (collapse(gt) === '') return undefined;
  const pred = markdownTablesToHtml(predicted);
  return {
    nid: indelRatio(collapse(gt), collapse(pred)),
    nidS: indelRatio(collapse(gt.replace(HTML_TABLE, ' ')), collapse(pred.replace(HTML_TABLE, ' '))),
  };
}

// --- TEDS --------------------------------------------------------------------------------------

type TableNodeValue = { tag: string; colspan?: number; rowspan?: number; content?: string };

/** load_html_tree: every element a node; a `td` is a leaf carrying its spans and (unless structure only) its content. */
function tableTree(element: HtmlElement, structureOnly: boolean): TreeNode<TableNodeValue> {
  if (element.tag === 'td') {
    const span = (name: string) => Number.parseInt(element.attrs[name] ?? '1', 10) || 1;
    return { value: { tag: 'td', colspan: span('colspan'), rowspan: span('rowspan'), content: structureOnly ? '' : innerContent(element) }, children: [] };
  }
  const children = element.children.filter((c): c is HtmlElement => typeof c !== 'string').map((c) => tableTree(c, structureOnly));
  return { value: { tag: element.tag }, children };
}

/** _normalize in evaluator_table.py: entities decoded, `<br>` as a line break, whitespace collapsed. */
const normaliseCell = (text: string) => collapse(unescapeHtml(text).replace(/<br\s*\/?>/g, '\n'));

/** CustomConfig.rename: another tag or other spans cost 1; two cells cost the normalised Levenshtein distance of their text. */
function renameCell(a: TableNodeValue, b: TableNodeValue): number {
  if (a.tag !== b.tag || a.colspan !== b.colspan || a.rowspan !== b.rowspan) return 1;
  if (a.tag === 'td' && (a.content || b.content)) {
    const x = normaliseCell(a.content ?? '');
    const y = normaliseCell(b.content ?? '');
    if (x === '' && y === '') return 0;
    return levenshtein(x, y) / Math.max([...x].length, [...y].length);
  }
  return 0;
}

const descendants = (e: HtmlElement): number => e.children.reduce((n, c) => n + (typeof c === 'string' ? 0 : 1 + descendants(c)), 0);

/**
 * evaluate_table: [TEDS, TEDS-S] over all tables of the document, or undefined when the truth has
 * none; 0 when only the truth has tables. The evaluator joins the tables of each side and wraps them
 * once more in `<html><body><table>…</table></body></html>`; lxml reads that as one outer table
 * holding every table (checked with lxml 4.9), so the trees compared are a `table` whose children
 * are the document's tables, and the node count is every element under that outer table.
 */
export function tableScores(truth: string, predicted: string): { teds: number; tedsS: number } | undefined {
  const gtTables = findTables(parseHtml(markdownTablesToHtml(truth)));
  if (gtTables.length === 0) return undefined;
  const predTables = findTables(parseHtml(markdownTablesToHtml(predicted)));
  if (predTables.length === 0) return { teds: 0, tedsS: 0 };
  const wrap = (tables: HtmlElement[]): HtmlElement => ({ tag: 'table', attrs: {}, children: tables.map(normaliseTable) });
  const gt = wrap(gtTables);
  const pred = wrap(predTables);
  const nodes = Math.max(descendants(gt), descendants(pred));
  const score = (structureOnly: boolean) => 1 - treeEditDistance(tableTree(pred, structureOnly), tableTree(gt, structureOnly), renameCell) / nodes;
  return { teds: score(false), tedsS: score(true) };
}

// --- MHS ---------------------------------------------------------------------------------------

type HeadingNodeValue = { tag: 'document' | 'heading' | 'content'; text: string };

/** _parse_markdown_structure: headings are children of the document; the lines after one are one content node under it. */
export function headingTree(markdown: string): TreeNode<HeadingNodeValue> {
  const root: TreeNode<HeadingNodeValue> = { value: { tag: 'document', text: '' }, children: [] };
  let container = root;
  let pending: string[] = [];
  const flush = () => {
    const text = collapse(pending.join(' '));
    if (text !== '') container.children.push({ value: { tag: 'content', text }, children: [] });
    pending = [];
  };
  for (const line of markdown.split(/\r\n|\n|\r/)) {
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (heading) {
      flush();
      container = { value: { tag: 'heading', text: collapse(heading[2] ?? '') }, children: [] };
      root.children.push(container);
      continue;
    }
    const text = collapse(line);
    if (text !== '') pending.push(text);
  }
  flush();
  return root;
}

/** HeadingConfig.rename: another kind of node costs 1; otherwise the normalised Levenshtein distance of the texts. */
function renameHeading(includeText: boolean) {
  return (a: HeadingNodeValue, b: HeadingNodeValue) => {
    if (a.tag !== b.tag) return 1;
    if (!includeText || (a.text === '' && b.text === '')) return 0;
    return levenshtein(a.text, b.text) / Math.max([...a.text].length, [...b.text].length, 1);
  };
}

/** evaluate_heading_level: [MHS, MHS-S], undefined when the truth has no heading, 0 when the prediction has none. */
export function headingScores(truth: string, predicted: string): { mhs: number; mhsS: number } | undefined {
  const gt = headingTree(markdownTablesToHtml(truth));
  if (!gt.children.some((c) => c.value.tag === 'heading')) return undefined;
  const pred = headingTree(markdownTablesToHtml(predicted));
  if (!pred.children.some((c) => c.value.tag === 'heading')) return { mhs: 0, mhsS: 0 };
  const nodes = Math.max(countNodes(gt), countNodes(pred), 1);
  const clamp = (x: number) => Math.max(0, Math.min(1, x));
  return {
    mhs: clamp(1 - treeEditDistance(gt, pred, renameHeading(true)) / nodes),
    mhsS: clamp(1 - treeEditDistance(gt, pred, renameHeading(false)) / nodes),
  };
}

// --- This project's figures --------------------------------------------------------------------

/** One cell of a ground-truth or parsed table grid (0-based position, spans ≥ 1). */
export type GridCell = { row: number; col: number; rowSpan: number; colSpan: number; text: string };

const cellKey = (c: GridCell) => `${c.row}:${c.col}:${c.rowSpan}:${c.colSpan}`;
const cellText = (text: string) => collapse(text).toLowerCase();

/**
 * Table-cell accuracy: of the truth's non-empty cells, the share that the parsed table has at the
 * same row and column, with the same spans and the same text (whitespace collapsed, case ignored).
 * Each truth table is compared with the parsed table that gets the most of its cells right.
 */
export function cellAccuracy(truth: GridCell[][], parsed: GridCell[][]): { correct: number; total: number } {
  let correct = 0;
  let total = 0;
  const used = new Set<number>();
  for (const table of truth) {
    const cells = table.filter((c) => collapse(c.text) !== '');
    total += cells.length;
    let best = 0;
    let bestIndex = -1;
    parsed.forEach((candidate, index) => {
      if (used.has(index)) return;
      const byKey = new Map(candidate.map((c) => [cellKey(c), cellText(c.text)]));
      const hits = cells.filter((c) => byKey.get(cellKey(c)) === cellText(c.text)).length;
      if (hits > best) [best, bestIndex] = [hits, index];
    });
    if (bestIndex >= 0) used.add(bestIndex);
    correct += best;
  }
  return { correct, total };
}

export type Heading = { text: string; level: number };

/** Headings of a Markdown text (`#` lines), the title included. */
export const markdownHeadings = (markdown: string): Heading[] =>
  [...markdown.matchAll(/^(#{1,6})\s+(.*)$/gm)].map((m) => ({ level: (m[1] ?? '#').length, text: collapse(m[2] ?? '') }));

/** Two heading texts are the same heading when their normalised Levenshtein similarity is at least this. */
const SAME_HEADING = 0.8;

const similarity = (a: string, b: string) => {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  const length = Math.max([...x].length, [...y].length);
  return length === 0 ? 1 : 1 - levenshtein(x, y) / length;
};

/**
 * Heading detection: truth and parsed headings matched one to one in document order (a parsed
 * heading matches the next unmatched truth heading whose text is ≥ 80 % similar); precision,
 * recall and F1 of the matches, and of those how many have the truth's level.
 */
export function headingMatch(truth: Heading[], parsed: Heading[]): { matched: number; truth: number; parsed: number; levelCorrect: number } {
  let matched = 0;
  let levelCorrect = 0;
  let from = 0;
  for (const heading of parsed) {
    const at = truth.findIndex((t, i) => i >= from && similarity(t.text, heading.text) >= SAME_HEADING);
    if (at < 0) continue;
    matched += 1;
    if (truth[at]?.level === heading.level) levelCorrect += 1;
    from = at + 1;
  }
  return { matched, truth: truth.length, parsed: parsed.length, levelCorrect };
}

export function f1(matched: number, truth: number, parsed: number): number {
  if (truth === 0 && parsed === 0) return 1;
  const precision = parsed === 0 ? 0 : matched / parsed;
  const recall = truth === 0 ? 0 : matched / truth;
  return precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
}

/** Words for OCR scoring: Latin words and numbers lower-cased, each Han character on its own. */
export const words = (text: string): string[] => text.toLowerCase().match(/\p{Script=Han}|[\p{L}\p{N}]+/gu) ?? [];

/** OCR word recall: the share of the truth's words found in the read text, as multisets (order ignored). */
export function wordRecall(truth: string, read: string): { found: number; total: number } {
  const pool = new Map<string, number>();
  for (const w of words(read)) pool.set(w, (pool.get(w) ?? 0) + 1);
  let found = 0;
  const expected = words(truth);
  for (const w of expected) {
    const n = pool.get(w) ?? 0;
    if (n > 0) {
      found += 1;
      pool.set(w, n - 1);
    }
  }
  return { found, total: expected.length };
}
