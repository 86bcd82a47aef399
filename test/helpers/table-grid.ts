// A parsed table as rows of texts, for tests that compare a table with what is printed.
import type { Table } from '../../src/documents/document.ts';

/** The table as rows of texts, each spanning cell's text repeated over every position it covers ('·' where no cell is). */
export function tableGrid(table: Table | undefined): string[][] {
  if (!table) return [];
  const rows = Array.from({ length: table.numRows }, () => Array.from({ length: table.numCols }, () => '·'));
  for (const cell of table.cells)
    for (let r = cell.row; r < cell.row + cell.rowSpan; r += 1) for (let c = cell.col; c < cell.col + cell.colSpan; c += 1) (rows[r] ?? [])[c] = cell.text;
  return rows;
}
