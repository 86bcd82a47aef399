// The parsed document as JSON modelled on docling's DoclingDocument, for programs.
import { FURNITURE, PICTURE_DPI, type Block, type BlockLabel, type BoundingBox, type Page, type ParsedDocument, type Table } from '../document.ts';

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
/**
 * docling-core's ImageRef (mimetype, dpi, size, uri are all required by its JSON Schema): the picture's
 * PNG as cut (at PICTURE_DPI), its size in pixels from the box it was cut from.
 */
function pictureImage(picture: { bbox: { l: number; r: number; t: number; b: number }; file: string }): DoclingPicture['image'] {
  const pixels = (points: number) => Math.max(1, Math.round((Math.abs(points) * PICTURE_DPI) / 72));
  return { mimetype: 'image/png', dpi: PICTURE_DPI, size: { width: pixels(picture.bbox.r - picture.bbox.l), height: pixels(picture.bbox.t - picture.bbox.b) }, uri: picture.file };
}

export type DoclingPicture = NodeBase & { label: 'picture'; prov: Prov[]; captions: Ref[]; references: Ref[]; footnotes: Ref[]; image: { mimetype: 'image/png'; dpi: number; size: { width: number; height: number }; uri: string } };
type DoclingGroup = NodeBase & { name: 'list'; label: 'list' };
/** docling-core's GraphCell and GraphLink: a key cell, a value cell and the key's link to its value. */
type GraphCell = { label: 'key' | 'value'; cell_id: number; text: string; orig: string; prov?: Prov };
type GraphLink = { label: 'to_value'; source_cell_id: number; target_cell_id: number };
/** docling-core's KeyValueItem (label key_value_region): one form field and its label. */
export type DoclingKeyValue = NodeBase & { label: 'key_value_region'; prov: Prov[]; captions: Ref[]; references: Ref[]; footnotes: Ref[]; graph: { cells: GraphCell[]; links: GraphLink[] } };
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
  key_value_items: DoclingKeyValue[];
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
      out.pictures.push({ self_ref, parent: bodyRef, children: [], content_layer: 'body', label: 'picture', prov: prov(page.pageNo, box), captions: refs, references: [], footnotes: [], image: pictureImage(picture) });
      out.body.children.push({ $ref: self_ref });
    }
    for (const caption of captions) if (caption.of.kind === 'table') tableRefs.get(caption.of.index)?.captions.push({ $ref: caption.ref });
    // Form fields (issue 41, item 5): each a key_value_region whose graph links its label (key) to its value.
    for (const field of page.fields ?? []) {
      const self_ref = `#/key_value_items/${out.key_value_items.length}`;
      const box = (bbox: Block['bbox'], text: string) => prov(page.pageNo, { label: 'text', text, bbox, fontSize: 0, bold: false })[0];
      const keyCell: GraphCell = { label: 'key', cell_id: 0, text: field.key, orig: field.key, ...(field.keyBbox ? { prov: box(field.keyBbox, field.key) } : {}) };
      const valueCell: GraphCell = { label: 'value', cell_id: 1, text: field.value, orig: field.value, prov: box(field.bbox, field.value) };
      const all = field.keyBbox ? { l: Math.min(field.keyBbox.l, field.bbox.l), r: Math.max(field.keyBbox.r, field.bbox.r), t: Math.max(field.keyBbox.t, field.bbox.t), b: Math.min(field.keyBbox.b, field.bbox.b) } : field.bbox;
      out.key_value_items.push({ self_ref, parent: bodyRef, children: [], content_layer: 'body', label: 'key_value_region', prov: prov(page.pageNo, { label: 'text', text: `${field.key} ${field.value}`, bbox: all, fontSize: 0, bold: false }), captions: [], references: [], footnotes: [], graph: { cells: [keyCell, valueCell], links: [{ label: 'to_value', source_cell_id: 0, target_cell_id: 1 }] } });
      out.body.children.push({ $ref: self_ref });
    }
  }
  return out;
}
