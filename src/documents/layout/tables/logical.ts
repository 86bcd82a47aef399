// A table's grid as it is read: columns that hold nothing in any row left out, and a table in a
// right-to-left script turned into logical order — its first column is the rightmost one printed
// (issue 32: "RTL tables in logical order").
import type { Table, TableCell } from '../../document.ts';

/** Arabic, Hebrew, Syriac, Thaana and N'Ko letters, and their presentation forms. */
const RTL_LETTER = /[\u0590-\u08FF\uFB1D-\uFDFF\uFE70-\uFEFF]/gu;
const LETTER = /\p{L}/gu;

/** An empty column at most this many em wide is a gap between columns. */
const MAX_GAP_EM = 3;

/** Whether most of the table's letters are of a right-to-left script. */
function isRightToLeft(table: Table): boolean {
  const text = table.cells.map((cell) => cell.text).join(' ');
  const rtl = text.match(RTL_LETTER)?.length ?? 0;
  const letters = text.match(LETTER)?.length ?? 0;
  return letters > 0 && rtl * 2 > letters;
}

/**
 * Columns in which no cell of their own has text are gaps between the printed columns (the padding
 * of cells drawn as boxes): they are dropped, spans over them shortened — also where a spanning
 * cell starts in one (a header centred over its column and the padding beside it), as long as it
 * spans a column with text of its own.
 */
function withoutEmptyColumns(table: Table, textSize: number): Table {
  const filled = table.cells.filter((cell) => cell.text.trim() !== '');
  const own = new Set(filled.filter((cell) => cell.colSpan === 1).map((cell) => cell.col));
  const keepsSpan = (cell: TableCell) => cell.colSpan > 1 && !Array.from({ length: cell.colSpan }, (_, k) => cell.col + k).some((c) => own.has(c));
  const used = new Set([...own, ...filled.filter(keepsSpan).map((cell) => cell.col)]);
  // Narrow: no wider than a few characters (an empty column of full width is a column of the table
  // whose cells are all blank, or whose header could not be read).
  const narrow = (c: number) => table.cells.filter((cell) => cell.col === c && cell.colSpan === 1).every((cell) => cell.bbox.r - cell.bbox.l <= MAX_GAP_EM * textSize);
  const empty = Array.from({ length: table.numCols }, (_, c) => c).filter((c) => !used.has(c) && narrow(c));
  if (empty.length === 0 || empty.length === table.numCols) return table;
  const shift = (col: number) => empty.filter((c) => c < col).length;
  const cells: TableCell[] = [];
  for (const cell of table.cells) {
    if (empty.includes(cell.col) && cell.colSpan === 1) continue;
    const covered = empty.filter((c) => c >= cell.col && c < cell.col + cell.colSpan).length;
    const colSpan = cell.colSpan - covered;
    if (colSpan < 1) continue;
    cells.push({ ...cell, col: cell.col - shift(cell.col), colSpan });
  }
  return { ...table, numCols: table.numCols - empty.length, cells };
}

/** The table in reading order: empty gap columns out, right-to-left tables mirrored. */
export function inReadingOrder(table: Table, textSize: number): Table {
  const compact = withoutEmptyColumns(table, textSize);
  if (!isRightToLeft(compact)) return compact;
  const cells = compact.cells
    .map((cell) => ({ ...cell, col: compact.numCols - cell.col - cell.colSpan }))
    .sort((a, b) => a.row - b.row || a.col - b.col);
  return { ...compact, cells };
}
