// The parsed document as plain text, as docling-core's plain-text serializer writes it
// (transforms/serializer/plain_text.py: the Markdown without its decoration): the body in reading
// order, one blank line between headings, paragraphs, lists, tables and captions; list items keep
// their markers; a picture is its caption; page headers and footers are left out (body.ts). Where
// docling keeps a Markdown table, this writes its rows as columns aligned with spaces, so nothing of
// Markdown's syntax is left to strip.
import type { Block, Page, ParsedDocument, Table } from '../document.ts';
import { pageBody, type BodyPart } from './body.ts';

const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim();

/** Columns a character takes in a monospaced font: wide East Asian characters two, combining marks none. */
const WIDE = /[\u1100-\u115F\u2E80-\u303E\u3041-\u33FF\u3400-\u4DBF\u4E00-\u9FFF\uA000-\uA4CF\uAC00-\uD7A3\uF900-\uFAFF\uFE30-\uFE4F\uFF00-\uFF60\uFFE0-\uFFE6\u{20000}-\u{3FFFD}]/u;
export function displayWidth(text: string): number {
  let width = 0;
  for (const char of text) width += /\p{M}/u.test(char) ? 0 : WIDE.test(char) ? 2 : 1;
  return width;
}

/** The table's rows of texts, a spanning cell's text in every position it covers (as docling's grid and its text export have it). */
export function textGrid(table: Table): string[][] {
  const rows = Array.from({ length: table.numRows }, () => Array.from({ length: table.numCols }, () => ''));
  for (const cell of table.cells)
    for (let r = cell.row; r < cell.row + cell.rowSpan && r < table.numRows; r += 1)
      for (let c = cell.col; c < cell.col + cell.colSpan && c < table.numCols; c += 1) (rows[r] as string[])[c] = oneLine(cell.text);
  return rows;
}

/** Rows as columns aligned with spaces (two between columns), each row one line, trailing spaces trimmed. */
export function alignedRows(rows: string[][]): string {
  const numCols = Math.max(0, ...rows.map((row) => row.length));
  const widths = Array.from({ length: numCols }, (_, c) => Math.max(0, ...rows.map((row) => displayWidth(row[c] ?? ''))));
  return rows.map((row) => row.map((cell, c) => cell + ' '.repeat((widths[c] ?? 0) - displayWidth(cell))).join('  ').trimEnd()).join('\n');
}

function tableText(block: Block): string {
  return alignedRows(block.table ? textGrid(block.table) : (block.cells ?? []).map((row) => row.map(oneLine)));
}

/** A list item with its marker as printed ("•", "3.", "a)"), "-" when it had none. */
const listLine = (item: Block) => `${item.marker ?? '-'} ${item.text}`;

function partText(part: BodyPart): string {
  if (part.kind === 'picture') return part.picture.caption ? oneLine(part.picture.caption) : '';
  if (part.kind === 'list') return part.items.map(listLine).join('\n');
  if (part.block.label === 'table') return tableText(part.block);
  return part.text;
}

const pageText = (page: Page) => pageBody(page).map(partText).filter((text) => text.trim() !== '').join('\n\n');

/** The document's text in reading order, blocks separated by blank lines; no Markdown syntax. */
export function toText(doc: ParsedDocument): string {
  const pages = doc.pages.map(pageText).filter((text) => text !== '');
  return pages.length === 0 ? '' : `${pages.join('\n\n')}\n`;
}
