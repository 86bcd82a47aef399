// The parsed document as Markdown for people: a section per page, headings, lists, tables (pipe
// tables, or HTML where cells span), code, captions and pictures; page furniture left out.
import type { Block, Page, ParsedDocument, Picture, Table } from '../document.ts';
import { pageBody, type BodyPart } from './body.ts';

// --- Markdown ----------------------------------------------------------------------------------

/** Text that would start a Markdown construct (a heading, a list, a quote, a table, HTML) is escaped. */
function escapeStart(text: string): string {
  const numbered = /^(\d+)([.)]\s)/.exec(text);
  if (numbered) return `${numbered[1]}\\${text.slice(numbered[1]?.length ?? 0)}`;
  return /^(?:[#>+\-*|=<]|`{3}|~{3})/.test(text) ? `\\${text}` : text;
}

function heading(block: Block): string {
  // The title is the one `#`; a section's level is its Markdown depth (layout counts the title as 1).
  const depth = block.label === 'title' ? 1 : Math.min(6, Math.max(1, block.level ?? 1));
  return `${'#'.repeat(depth)} ${block.text}`;
}

/** Bullets become `- `; numbered items keep their number as a Markdown ordered item; lettered ones keep their letter. */
function listLine(block: Block): string {
  const number = /^\(?(\d+)[.)]$/.exec(block.marker ?? '');
  if (number) return `${number[1]}. ${block.text}`;
  const lettered = block.marker !== undefined && /[A-Za-z]/.test(block.marker);
  return lettered ? `- ${block.marker} ${block.text}` : `- ${escapeStart(block.text)}`;
}

const cellText = (text: string) => text.replace(/\s*\n\s*/g, ' ').replace(/\|/g, '\\|');

/** A GitHub pipe table; the first row is the header row. */
export function pipeTable(cells: string[][]): string {
  const width = Math.max(1, ...cells.map((row) => row.length));
  const row = (cellsOfRow: string[]) => `| ${Array.from({ length: width }, (_, i) => cellText(cellsOfRow[i] ?? '')).join(' | ')} |`;
  const [header = [], ...body] = cells;
  return [row(header), `|${' --- |'.repeat(width)}`, ...body.map(row)].join('\n');
}

const escapeHtml = (text: string) => text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] ?? c);

/** A table whose cells span rows or columns cannot be a pipe table. */
export const hasSpans = (table: Table) => table.cells.some((cell) => cell.rowSpan > 1 || cell.colSpan > 1);

/**
 * A table with spanning cells as an HTML table (GitHub and most Markdown readers show it): each
 * cell once, at its top-left position, with `colspan`/`rowspan`; column headers as `<th>`.
 */
export function htmlTable(table: Table): string {
  const rows = Array.from({ length: table.numRows }, (_, r) => table.cells.filter((cell) => cell.row === r).sort((a, b) => a.col - b.col));
  const lines = ['<table>'];
  for (const cells of rows) {
    const tds = cells.map((cell) => {
      const tag = cell.columnHeader ? 'th' : 'td';
      const span = `${cell.colSpan > 1 ? ` colspan="${cell.colSpan}"` : ''}${cell.rowSpan > 1 ? ` rowspan="${cell.rowSpan}"` : ''}`;
      return `<${tag}${span}>${escapeHtml(cell.text.replace(/\s+/g, ' '))}</${tag}>`;
    });
    lines.push(`<tr>${tds.join('')}</tr>`);
  }
  lines.push('</table>');
  return lines.join('\n');
}

/** Code is kept verbatim in a fence longer than any run of backticks inside it. */
function codeFence(text: string): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}\n${text}\n${fence}`;
}

/** Text in Markdown image alt and link positions cannot close them early. */
const altText = (text: string) => text.replace(/[[\]\\]/g, (c) => `\\${c}`).replace(/\s+/g, ' ');

function blockMarkdown(block: Block): string {
  if (block.label === 'title' || block.label === 'section_header') return heading(block);
  if (block.label === 'table' && block.table && hasSpans(block.table)) return htmlTable(block.table);
  if (block.label === 'table' && block.cells) return pipeTable(block.cells);
  if (block.label === 'code') return codeFence(block.text);
  if (block.label === 'formula') return `$$\n${block.text}\n$$`;
  if (block.label === 'caption') return `*${escapeStart(block.text).replace(/\*/g, '\\*')}*`;
  return escapeStart(block.text);
}

/** A picture as a Markdown image, its caption as the alt text; the file is a result file beside document.md. */
const pictureMarkdown = (picture: Picture) => `![${altText(picture.caption ?? '')}](${picture.file})`;

function partMarkdown(part: BodyPart): string {
  if (part.kind === 'picture') return pictureMarkdown(part.picture);
  if (part.kind === 'list') return part.items.map(listLine).join('\n');
  return blockMarkdown(part.text === part.block.text ? part.block : { ...part.block, text: part.text });
}

/**
 * The page's filled form fields after its text, one "Label: value" line each (issue 41, item 5); an
 * empty field or an unchecked box says nothing a reader needs.
 */
const fieldsMarkdown = (page: Page) => (page.fields ?? []).filter((f) => f.value !== '' && f.value !== 'Off').map((f) => `${f.key}: ${f.value}`);

const pageMarkdown = (page: Page) => {
  const fields = fieldsMarkdown(page);
  return [`<!-- page ${page.pageNo} -->`, ...pageBody(page).map(partMarkdown), ...(fields.length > 0 ? [fields.join('\n\n')] : [])].join('\n\n');
};

/** A section per page (`<!-- page N -->`), headings as #/##/###, lists as `- `, tables as pipe tables (HTML where cells span), no page headers or footers. */
export function toMarkdown(doc: ParsedDocument): string {
  return `${doc.pages.map(pageMarkdown).join('\n\n')}\n`;
}
