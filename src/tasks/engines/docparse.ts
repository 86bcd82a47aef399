// The document-parsing engine's outputs: Markdown for people, and JSON modelled on docling's
// DoclingDocument for programs. Both come from one ParsedDocument (pdf.ts + layout.ts).
import type { Block, BlockLabel, BoundingBox, OnProgress, Page, ParsedDocument, Picture, Table } from './document.ts';
import { extractDocument } from './pdf.ts';

const FURNITURE: ReadonlySet<BlockLabel> = new Set(['page_header', 'page_footer']);

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
  if (block.label === 'table' && block.cells) return pipeTable(block.cells);
  if (block.label === 'code') return codeFence(block.text);
  if (block.label === 'formula') return `$$\n${block.text}\n$$`;
  if (block.label === 'caption') return `*${escapeStart(block.text).replace(/\*/g, '\\*')}*`;
  return escapeStart(block.text);
}

/** A picture as a Markdown image, its caption as the alt text; the file is a result file beside document.md. */
const pictureMarkdown = (picture: Picture) => `![${altText(picture.caption ?? '')}](${picture.file})`;

function pageMarkdown(page: Page): string {
  const parts = [`<!-- page ${page.pageNo} -->`];
  let list: string[] = [];
  const endList = () => {
    if (list.length > 0) parts.push(list.join('\n'));
    list = [];
  };
  // Pictures go before the first block that starts below their top; a picture's caption is its alt text.
  const pictures = [...(page.pictures ?? [])].filter((p) => p.file !== '').sort((a, b) => b.bbox.t - a.bbox.t);
  const captioned = new Set(page.blocks.filter((b) => b.captionOf?.kind === 'picture'));
  for (const block of page.blocks) {
    while (pictures[0] && pictures[0].bbox.t >= block.bbox.t && !FURNITURE.has(block.label)) {
      endList();
      parts.push(pictureMarkdown(pictures.shift() as Picture));
    }
    if (FURNITURE.has(block.label)) continue; // page headers and footers are not part of the body
    if (captioned.has(block)) continue;
    if (block.label === 'list_item') {
      list.push(listLine(block));
      continue;
    }
    endList();
    parts.push(blockMarkdown(block));
  }
  endList();
  parts.push(...pictures.map(pictureMarkdown));
  return parts.join('\n\n');
}

/** A section per page (`<!-- page N -->`), headings as #/##/###, lists as `- `, tables as pipe tables, no page headers or footers. */
export function toMarkdown(doc: ParsedDocument): string {
  return `${doc.pages.map(pageMarkdown).join('\n\n')}\n`;
}

// --- DoclingDocument JSON ----------------------------------------------------------------------

type Ref = { $ref: string };
type ContentLayer = 'body' | 'furniture';
type Prov = { page_no: number; bbox: BoundingBox & { coord_origin: 'BOTTOMLEFT' }; charspan: [number, number] };
type NodeBase = { self_ref: string; parent: Ref; children: Ref[]; content_layer: ContentLayer };
export type DoclingText = NodeBase & { label: BlockLabel; prov: Prov[]; orig: string; text: string; level?: number; enumerated?: boolean; marker?: string };
type DoclingCell = {
  text: string;
  bbox?: BoundingBox & { coord_origin: 'BOTTOMLEFT' };
  row_span: number;
  col_span: number;
  start_row_offset_idx: number;
  end_row_offset_idx: number;
  start_col_offset_idx: number;
  end_col_offset_idx: number;
  column_header: boolean;
  row_header: boolean;
  row_section: false;
};
export type DoclingTable = NodeBase & {
  label: 'table';
  prov: Prov[];
  captions: Ref[];
  references: Ref[];
  footnotes: Ref[];
  data: { table_cells: DoclingCell[]; num_rows: number; num_cols: number; grid: DoclingCell[][] };
};
export type DoclingPicture = NodeBase & { label: 'picture'; prov: Prov[]; captions: Ref[]; references: Ref[]; footnotes: Ref[]; image: { mimetype: 'image/png'; uri: string } };
type DoclingGroup = NodeBase & { name: 'list'; label: 'list' };
type Root = { self_ref: '#/body' | '#/furniture'; children: Ref[]; content_layer: ContentLayer; name: '_root_'; label: 'unspecified' };
export type DoclingDocument = {
  schema_name: 'DoclingDocument';
  version: string;
  name: string;
  furniture: Root;
  body: Root;
  groups: DoclingGroup[];
  texts: DoclingText[];
  pictures: DoclingPicture[];
  tables: DoclingTable[];
  key_value_items: never[];
  form_items: never[];
  pages: Record<string, { page_no: number; size: { width: number; height: number } }>;
};

const DOCLING_SCHEMA_VERSION = '1.3.0';
const round = (n: number) => Math.round(n * 100) / 100;

function prov(pageNo: number, block: Block): Prov[] {
  const { l, t, r, b } = block.bbox;
  return [{ page_no: pageNo, bbox: { l: round(l), t: round(t), r: round(r), b: round(b), coord_origin: 'BOTTOMLEFT' }, charspan: [0, block.text.length] }];
}

/** docling's table data from the grid: each cell once in table_cells, and in every grid position it covers. */
function gridData(table: Table): DoclingTable['data'] {
  const table_cells = table.cells.map((cell): DoclingCell => ({
    text: cell.text,
    bbox: { l: round(cell.bbox.l), t: round(cell.bbox.t), r: round(cell.bbox.r), b: round(cell.bbox.b), coord_origin: 'BOTTOMLEFT' },
    row_span: cell.rowSpan,
    col_span: cell.colSpan,
    start_row_offset_idx: cell.row,
    end_row_offset_idx: cell.row + cell.rowSpan,
    start_col_offset_idx: cell.col,
    end_col_offset_idx: cell.col + cell.colSpan,
    column_header: cell.columnHeader,
    row_header: cell.rowHeader,
    row_section: false,
  }));
  const grid = Array.from({ length: table.numRows }, (_, r) =>
    Array.from({ length: table.numCols }, (_, c): DoclingCell =>
      table_cells.find((cell) => r >= cell.start_row_offset_idx && r < cell.end_row_offset_idx && c >= cell.start_col_offset_idx && c < cell.end_col_offset_idx) ?? {
        text: '', row_span: 1, col_span: 1, start_row_offset_idx: r, end_row_offset_idx: r + 1, start_col_offset_idx: c, end_col_offset_idx: c + 1, column_header: false, row_header: false, row_section: false,
      },
    ),
  );
  return { table_cells, num_rows: table.numRows, num_cols: table.numCols, grid };
}

function tableData(cells: string[][]): DoclingTable['data'] {
  const numCols = Math.max(0, ...cells.map((row) => row.length));
  const grid = cells.map((row, r) =>
    Array.from({ length: numCols }, (_, c): DoclingCell => ({
      text: row[c] ?? '',
      row_span: 1,
      col_span: 1,
      start_row_offset_idx: r,
      end_row_offset_idx: r + 1,
      start_col_offset_idx: c,
      end_col_offset_idx: c + 1,
      column_header: r === 0,
      row_header: false,
      row_section: false,
    })),
  );
  return { table_cells: grid.flat(), num_rows: cells.length, num_cols: numCols, grid };
}

/**
 * The document as docling's DoclingDocument: texts and tables in reading order with their page and
 * box (BOTTOMLEFT origin), the body's children in reading order, consecutive list items in a list
 * group, and page headers and footers under `furniture` instead of `body`.
 */
export function toDoclingJson(doc: ParsedDocument, name: string): DoclingDocument {
  const out: DoclingDocument = {
    schema_name: 'DoclingDocument',
    version: DOCLING_SCHEMA_VERSION,
    name,
    furniture: { self_ref: '#/furniture', children: [], content_layer: 'furniture', name: '_root_', label: 'unspecified' },
    body: { self_ref: '#/body', children: [], content_layer: 'body', name: '_root_', label: 'unspecified' },
    groups: [],
    texts: [],
    pictures: [],
    tables: [],
    key_value_items: [],
    form_items: [],
    pages: {},
  };
  const bodyRef: Ref = { $ref: '#/body' };
  let list: DoclingGroup | undefined;
  for (const page of doc.pages) {
    out.pages[String(page.pageNo)] = { page_no: page.pageNo, size: { width: round(page.width), height: round(page.height) } };
    const tableRefs = new Map<number, DoclingTable>();
    const captions: Array<{ ref: string; of: NonNullable<Block['captionOf']> }> = [];
    for (const [index, block] of page.blocks.entries()) {
      if (block.captionOf) captions.push({ ref: `#/texts/${out.texts.length}`, of: block.captionOf });
      if (FURNITURE.has(block.label)) {
        // A running header between two pages does not end a list that continues over the break.
        const self_ref = `#/texts/${out.texts.length}`;
        out.texts.push({ self_ref, parent: { $ref: '#/furniture' }, children: [], content_layer: 'furniture', label: block.label, prov: prov(page.pageNo, block), orig: block.text, text: block.text });
        out.furniture.children.push({ $ref: self_ref });
        continue;
      }
      if (block.label !== 'list_item') list = undefined;
      if (block.label === 'table') {
        const self_ref = `#/tables/${out.tables.length}`;
        const data = block.table ? gridData(block.table) : tableData(block.cells ?? []);
        const table: DoclingTable = { self_ref, parent: bodyRef, children: [], content_layer: 'body', label: 'table', prov: prov(page.pageNo, block), captions: [], references: [], footnotes: [], data };
        tableRefs.set(index, table);
        out.tables.push(table);
        out.body.children.push({ $ref: self_ref });
        continue;
      }
      const self_ref = `#/texts/${out.texts.length}`;
      const item: DoclingText = { self_ref, parent: bodyRef, children: [], content_layer: 'body', label: block.label, prov: prov(page.pageNo, block), orig: block.text, text: block.text };
      if (block.label === 'section_header') item.level = block.level ?? 1;
      if (block.label === 'list_item') {
        if (!list) {
          list = { self_ref: `#/groups/${out.groups.length}`, parent: bodyRef, children: [], content_layer: 'body', name: 'list', label: 'list' };
          out.groups.push(list);
          out.body.children.push({ $ref: list.self_ref });
        }
        item.parent = { $ref: list.self_ref };
        item.enumerated = block.marker !== undefined && /[\dA-Za-z]/.test(block.marker);
        item.marker = block.marker ?? '-';
        item.orig = block.marker === undefined ? block.text : `${block.marker} ${block.text}`;
        list.children.push({ $ref: self_ref });
      } else {
        out.body.children.push({ $ref: self_ref });
      }
      out.texts.push(item);
    }
    const pictures = (page.pictures ?? []).filter((picture) => picture.file !== '');
    for (const [index, picture] of pictures.entries()) {
      const self_ref = `#/pictures/${out.pictures.length}`;
      const box = { label: 'picture' as const, text: picture.caption ?? '', bbox: picture.bbox, fontSize: 0, bold: false };
      const refs = captions.filter((c) => c.of.kind === 'picture' && c.of.index === index).map((c) => ({ $ref: c.ref }));
      out.pictures.push({ self_ref, parent: bodyRef, children: [], content_layer: 'body', label: 'picture', prov: prov(page.pageNo, box), captions: refs, references: [], footnotes: [], image: { mimetype: 'image/png', uri: picture.file } });
      out.body.children.push({ $ref: self_ref });
    }
    for (const caption of captions) if (caption.of.kind === 'table') tableRefs.get(caption.of.index)?.captions.push({ $ref: caption.ref });
  }
  return out;
}

// --- The engine --------------------------------------------------------------------------------

/** Parses a PDF into Markdown, docling-style JSON and the parsed document itself. */
export async function runDocparse(
  data: Uint8Array,
  options: { signal?: AbortSignal; onProgress?: OnProgress; name?: string },
): Promise<{ markdown: string; json: string; document: ParsedDocument }> {
  const document = await extractDocument(data, options);
  return {
    markdown: toMarkdown(document),
    json: `${JSON.stringify(toDoclingJson(document, options.name ?? 'document'), null, 2)}\n`,
    document,
  };
}
