// The parsed document as Markdown for people: a section per page, headings, lists, tables (pipe
// tables, or HTML where cells span), code, captions and pictures; page furniture left out.
import type { Block, FormEntry, Page, ParsedDocument, Picture, Table } from '../document.ts';
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

/** A filled field: an empty one or an unchecked box says nothing a reader needs. */
const filled = (field: FormEntry) => field.value !== '' && field.value !== 'Off';

/**
 * The page's filled form fields as "Label: value" (issue 41, item 5): said where the label is printed
 * (the block holding the label's line and ending with it gets ": value"), or, for a field whose label
 * is no such block (a tooltip or field name), after the page's text.
 */
function fieldsInPlace(page: Page): { page: Page; after: string[] } {
  const fields = (page.fields ?? []).filter(filled);
  if (fields.length === 0) return { page, after: [] };
  const blocks = [...page.blocks];
  const after: string[] = [];
  for (const field of fields) {
    const key = field.keyBbox;
    const at = key
      ? blocks.findIndex((block) => {
          const [x, y] = [(key.l + key.r) / 2, (key.t + key.b) / 2];
          const inside = x >= block.bbox.l && x <= block.bbox.r && y >= block.bbox.b && y <= block.bbox.t;
          return inside && block.label !== 'table' && block.label !== 'picture' && block.text.replace(/\s*[:：]\s*$/u, '').endsWith(field.key);
        })
      : -1;
    const block = blocks[at];
    if (!block) {
      after.push(`${field.key}: ${field.value}`);
      continue;
    }
    blocks[at] = { ...block, text: `${block.text.replace(/\s*[:：]\s*$/u, '')}: ${field.value}` };
  }
  return { page: { ...page, blocks }, after };
}

const pageMarkdown = (source: Page) => {
  const { page, after } = fieldsInPlace(source);
  return [`<!-- page ${page.pageNo} -->`, ...pageBody(page).map(partMarkdown), ...(after.length > 0 ? [after.join('\n\n')] : [])].join('\n\n');
};

/** A section per page (`<!-- page N -->`), headings as #/##/###, lists as `- `, tables as pipe tables (HTML where cells span), no page headers or footers. */
export function toMarkdown(doc: ParsedDocument): string {
  return `${doc.pages.map(pageMarkdown).join('\n\n')}\n`;
}
