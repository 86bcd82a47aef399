// A Table element of a tagged PDF as a grid: rows from TR (directly or under THead, TBody, TFoot),
// cells from TH and TD placed left to right past the cells spanning down from rows above, with
// RowSpan and ColSpan from their attributes and TH as header cells (Scope Row → row header).
// The placement follows opendataloader-pdf's TaggedDocumentProcessor.processTable.
import type { BoundingBox, Table, TableCell } from '../document.ts';
import type { StructNode } from './structure-tree.ts';

const isNode = (kid: StructNode | number): kid is StructNode => typeof kid !== 'number';
const ROW_GROUPS = new Set(['THead', 'TBody', 'TFoot']);
/** No real table is this large; a hostile span is clipped to it. */
const MAX_SPAN = 200;
/** Grid positions a table's cells may cover in all. */
const MAX_AREA = 100_000;

/** The table's rows (TR elements), in order. */
export function tableRows(table: StructNode): StructNode[] {
  return table.kids.filter(isNode).flatMap((kid) => (kid.type === 'TR' ? [kid] : ROW_GROUPS.has(kid.type) ? kid.kids.filter(isNode).filter((row) => row.type === 'TR') : []));
}

/** A cell before its text is known: the element and where it sits. */
export type PlacedCell = { node: StructNode; row: number; col: number; rowSpan: number; colSpan: number; header: 'column' | 'row' | undefined };

/** The cells of a table placed on its grid; undefined when it has no cells. */
export function placeCells(table: StructNode, order: (cells: StructNode[]) => StructNode[] = (cells) => cells): { cells: PlacedCell[]; numRows: number; numCols: number } | undefined {
  const rows = tableRows(table);
  const taken: boolean[][] = [];
  const cells: PlacedCell[] = [];
  let area = 0;
  const take = (r: number, c: number) => ((taken[r] ??= [])[c] = true);
  rows.forEach((row, r) => {
    let col = 0;
    const kids = order(row.kids.filter(isNode).filter((kid) => kid.type === 'TH' || kid.type === 'TD'));
    const dataAfterFirst = kids.slice(1).some((k) => k.type === 'TD');
    kids.forEach((node, index) => {
      while (taken[r]?.[col]) col += 1;
      let rowSpan = Math.min(MAX_SPAN, Math.max(1, Math.min(node.rowSpan ?? 1, rows.length - r)));
      let colSpan = Math.min(MAX_SPAN, Math.max(1, node.colSpan ?? 1));
      // Spans that would cover more grid than any real table has are a hostile file's: they count as 1.
      if (area + rowSpan * colSpan > MAX_AREA) [rowSpan, colSpan] = [1, 1];
      area += rowSpan * colSpan;
      // A TH heads its column unless its Scope says row, or (without a Scope) it starts a row of data cells.
      const rowHeader = node.scope === 'Row' || (node.scope === undefined && index === 0 && dataAfterFirst);
      const header = node.type !== 'TH' ? undefined : rowHeader ? 'row' : 'column';
      cells.push({ node, row: r, col, rowSpan, colSpan, header });
      for (let dr = 0; dr < rowSpan; dr += 1) for (let dc = 0; dc < colSpan; dc += 1) take(r + dr, col + dc);
      col += colSpan;
    });
  });
  if (cells.length === 0) return undefined;
  const numCols = cells.reduce((most, cell) => Math.max(most, cell.col + cell.colSpan), 0);
  return { cells, numRows: rows.length, numCols };
}

/** The docling-style table from placed cells and each cell's text and box (empty cells get `fallback`'s corner). */
export function gridOf(placed: NonNullable<ReturnType<typeof placeCells>>, textOf: (cell: PlacedCell) => { text: string; bbox?: BoundingBox }, fallback: BoundingBox): Table {
  const cells: TableCell[] = placed.cells.map((cell) => {
    const { text, bbox } = textOf(cell);
    return {
      text,
      bbox: bbox ?? { l: fallback.l, t: fallback.t, r: fallback.l, b: fallback.t },
      row: cell.row,
      col: cell.col,
      rowSpan: cell.rowSpan,
      colSpan: cell.colSpan,
      columnHeader: cell.header === 'column',
      rowHeader: cell.header === 'row',
    };
  });
  return { numRows: placed.numRows, numCols: placed.numCols, cells };
}

/** The table's cells by row (0-based), each row's in column order. */
function byRow(table: Table): TableCell[][] {
  const rows: TableCell[][] = Array.from({ length: table.numRows }, () => []);
  for (const cell of table.cells) rows[cell.row]?.push(cell);
  for (const row of rows) row.sort((a, b) => a.col - b.col);
  return rows;
}

/** Leading rows that hold one cell's text at most (a sheet's title and notes above its header row), none spanning down. */
export function titleRows(table: Table): number {
  const grouped = byRow(table);
  let rows = 0;
  while (rows < table.numRows - 1) {
    const cells = grouped[rows] ?? [];
    if (cells.filter((c) => c.text !== '').length > 1 || cells.some((c) => c.rowSpan > 1)) break;
    rows += 1;
  }
  return rows;
}

/** The table without its first `rows` rows. */
export function withoutRows(table: Table, rows: number): Table {
  return { numRows: table.numRows - rows, numCols: table.numCols, cells: table.cells.filter((c) => c.row >= rows).map((c) => ({ ...c, row: c.row - rows })) };
}

/** A cell holding more words than this is prose: a page laid out in a table (a form), not a table of data. */
const PROSE_WORDS = 25;
/** A table whose rows hold one cell's text at most this often is a layout grid, not a table of data. */
const SPARSE_ROWS = 0.4;

/**
 * Whether a tagged Table is a layout grid — Word forms and letters set in tables — rather than data:
 * one column, a cell of prose, or most rows with a single filled cell. Its cells are then read as
 * paragraphs in order.
 */
export function isLayoutGrid(table: Table): boolean {
  if (table.numCols <= 1) return true;
  if (table.cells.some((c) => c.text.split(/\s+/u).length > PROSE_WORDS)) return true;
  const sparse = byRow(table).filter((cells) => cells.filter((c) => c.text !== '').length <= 1).length;
  return sparse > SPARSE_ROWS * table.numRows;
}

/**
 * A row with fewer cells than the table has columns (an invoice's total under AMOUNT, tagged as the
 * row's only TD) has its cells moved under the columns they are drawn in, where those are free:
 * the tags give the cells, the page where they stand.
 */
export function alignShortRows(table: Table): Table {
  if (table.numCols > MAX_SPAN) return table;
  // Columns are measured on the full rows only (a short row's cell would stretch the column it sits in).
  const cells = table.cells.map((c) => ({ ...c }));
  const grouped = byRow({ ...table, cells });
  const full = new Set(grouped.flatMap((row, index) => (row.reduce((n, c) => n + c.colSpan, 0) >= table.numCols ? [index] : [])));
  const ranges: Array<{ l: number; r: number } | undefined> = Array.from({ length: table.numCols }, () => undefined);
  for (const c of table.cells) {
    if (!full.has(c.row) || c.colSpan !== 1 || c.text === '') continue;
    const range = ranges[c.col];
    ranges[c.col] = range ? { l: Math.min(range.l, c.bbox.l), r: Math.max(range.r, c.bbox.r) } : { l: c.bbox.l, r: c.bbox.r };
  }
  const spanning = cells.filter((c) => c.rowSpan > 1);
  for (let row = 0; row < table.numRows; row += 1) {
    const inRow = grouped[row] ?? [];
    if (inRow.length >= table.numCols || inRow.some((c) => c.colSpan > 1 || c.rowSpan > 1 || c.text === '')) continue;
    const taken = new Set(spanning.filter((c) => c.row < row && c.row + c.rowSpan > row).flatMap((c) => Array.from({ length: c.colSpan }, (_, i) => c.col + i)));
    let from = 0;
    const moved = inRow.map((cell) => {
      const centre = (cell.bbox.l + cell.bbox.r) / 2;
      const col = ranges.findIndex((range, index) => index >= from && range !== undefined && centre >= range.l && centre <= range.r && !taken.has(index));
      const at = col >= 0 ? col : undefined;
      if (at !== undefined) from = at + 1;
      return at;
    });
    if (moved.every((col) => col !== undefined)) inRow.forEach((cell, i) => (cell.col = moved[i] as number));
  }
  return { ...table, cells };
}
