// Style kept per run (issue 34): each line remembers the style of the runs it is made of (weight,
// slant, fill colour), and a block whose style changes inside it (a bold term in a sentence, a red
// word, white text on a dark panel beside black) keeps its text cut where the style changes, so a
// translation can be set in the same styles. Pure: lines and text in, spans out.
import type { Block, SpanStyle, StyledSpan } from '../document.ts';
import { dominant, firstAtLeast, type Line, type TextRun } from './geometry.ts';

/** The text of a run as a line shows it, with its style. */
export type Piece = SpanStyle & { text: string; /** Set in a mathematics font (an inline formula). */ math?: boolean };

/** A run's style: bold and italic only when set, its colour when the reader gave one. */
export const runStyle = (run: TextRun): SpanStyle => ({ ...(run.bold ? { bold: true } : {}), ...(run.italic ? { italic: true } : {}), ...(run.color ? { color: run.color } : {}) });

export const styleKey = (style: SpanStyle) => `${style.bold ? 'b' : ''}${style.italic ? 'i' : ''}${style.color ?? ''}`;

/** The pieces of a line, one per run with text, in the runs' order. */
export function linePieces(runs: TextRun[]): Piece[] {
  return runs.filter((r) => r.text.trim() !== '').map((r) => ({ text: r.text.replace(/\s+/g, ' ').trim(), ...runStyle(r), ...(r.math ? { math: true } : {}) }));
}

/**
 * The stretches of a block's text set in a mathematics font (issue 42, part 2: "formula runs …
 * are kept in the source's glyphs and never sent to the engine"): neighbouring math pieces of a
 * line joined with what lies between them when that holds no word of two letters or more.
 */
export function inlineFormulas(lines: Line[], text: string): string[] {
  const formulas: string[] = [];
  for (const line of lines) {
    const pieces = line.pieces ?? [];
    let start = -1;
    let end = -1;
    let cursor = 0;
    const flush = () => {
      if (start >= 0) {
        const stretch = text.slice(start, end).trim();
        const prose = /\p{L}{4,}/u.test(stretch) || (stretch.match(/\p{L}{3}/gu) ?? []).length > 1;
        if (stretch !== '' && !prose && !formulas.includes(stretch)) formulas.push(stretch);
      }
      start = end = -1;
    };
    for (const piece of pieces) {
      const at = text.indexOf(piece.text, cursor);
      if (at < 0) continue;
      cursor = at + piece.text.length;
      // A piece of sentence in a font the reader took for a math font (a word of four letters, or
      // two of three: "ver the trace", not "log n") is text, not a formula.
      if (!piece.math || /\p{L}{4,}/u.test(piece.text) || (piece.text.match(/\p{L}{3}/gu) ?? []).length > 1) {
        // A word of the sentence between two math pieces ends the formula.
        if (/\p{L}{2,}/u.test(piece.text)) flush();
        continue;
      }
      if (start < 0) start = at;
      end = at + piece.text.length;
    }
    flush();
  }
  return formulas;
}

/**
 * The block's colour and, when its style changes inside it, its spans: every piece of its lines is
 * found in the block's text in order (the text joins lines and may drop a list marker or a hyphen);
 * a character no piece covers takes the style before it.
 */
export function blockStyles(lines: Line[], block: Pick<Block, 'text' | 'bold' | 'italic'>): Pick<Block, 'color' | 'spans'> {
  const pieces = lines.flatMap((l) => l.pieces ?? []);
  if (pieces.length === 0) return {};
  const color = dominant(pieces.map((p): [string | undefined, number] => [p.color, p.text.length]));
  const result: Pick<Block, 'color' | 'spans'> = color && color !== '#000000' ? { color } : {};
  if (new Set(pieces.map(styleKey)).size < 2) return result;
  const text = block.text;
  const styles: Array<SpanStyle | undefined> = new Array(text.length).fill(undefined);
  let cursor = 0;
  for (const piece of pieces) {
    const at = text.indexOf(piece.text, cursor);
    // A piece far ahead is a repeat of an earlier word: the text lost this piece (a list marker).
    if (at < 0 || at - cursor > 3 + piece.text.length) continue;
    for (let i = at; i < at + piece.text.length; i++) styles[i] = piece;
    cursor = at + piece.text.length;
  }
  const spans: StyledSpan[] = [];
  let previous: SpanStyle = styles.find((s) => s !== undefined) ?? {};
  for (let i = 0; i < text.length; i++) {
    const style = styles[i] ?? previous;
    previous = style;
    const last = spans.at(-1);
    if (last && styleKey(last) === styleKey(style)) last.text += text[i];
    else spans.push({ text: text[i]!, ...(style.bold ? { bold: true } : {}), ...(style.italic ? { italic: true } : {}), ...(style.color ? { color: style.color } : {}) });
  }
  // Spaces between two styles belong to neither: they join the span before them.
  return spans.length > 1 ? { ...result, spans } : result;
}

/** Each table cell's size and style: its runs' dominant size, the dominant colour of the runs whose middle lies in it (a white header on a dark row) when not black, and bold or italic when most of its text is. */
export function colourCells(tables: Block[], runs: TextRun[]): Block[] {
  if (tables.length === 0) return tables;
  // The runs with text sorted by baseline, so each cell looks only at those between its bottom and top
  // (a page of tables has thousands of cells and runs); the runs it takes keep their page order.
  const written = runs.flatMap((r, index) => (r.text.trim() === '' || Number.isNaN(r.y) ? [] : [{ r, index, mid: r.x + r.width / 2 }]));
  const byY = written.sort((a, b) => a.r.y - b.r.y);
  const firstAtOrAbove = (y: number) => firstAtLeast(byY, (w) => w.r.y, y);
  for (const table of tables) {
    for (const cell of table.table?.cells ?? []) {
      const found: typeof byY = [];
      for (let i = firstAtOrAbove(cell.bbox.b - 1); i < byY.length && byY[i]!.r.y <= cell.bbox.t; i++) {
        const w = byY[i]!;
        if (w.mid >= cell.bbox.l && w.mid <= cell.bbox.r) found.push(w);
      }
      const inside = found.sort((a, b) => a.index - b.index).map((w) => w.r);
      const color = dominant(inside.map((r): [string | undefined, number] => [r.color, r.text.length]));
      if (color && color !== '#000000') cell.color = color;
      const chars = inside.reduce((n, r) => n + r.text.length, 0);
      const size = dominant(inside.map((r): [number, number] => [Math.round(r.size * 100) / 100, r.text.length]));
      if (size !== undefined) cell.fontSize = size;
      if (chars > 0 && inside.reduce((n, r) => n + (r.bold ? r.text.length : 0), 0) * 2 > chars) cell.bold = true;
      if (chars > 0 && inside.reduce((n, r) => n + (r.italic ? r.text.length : 0), 0) * 2 > chars) cell.italic = true;
    }
  }
  return tables;
}
