// The notes page (issue 34): a translation that does not fit its place at 70 % of the source size,
// even after the blocks below it moved down, is never set smaller. The lines that fit stay, the last
// one ends with a marker ("→3"), and the rest of the text is set on a page appended after the
// document's last page, under the same marker and the page it continues from, at its own size.
import type PDFDocument from 'pdfkit';
import { wrap } from './fit.ts';
import { drawLine, widthOf } from './set-line.ts';

type Doc = InstanceType<typeof PDFDocument>;

/** One continuation: its marker number, the page it continues from, its text and how it was set. */
export type Note = { number: number; pageNo: number; text: string; size: number; bold: boolean };

export const markerText = (n: number) => `→${n}`;

const MARGIN = 50;
/** The notes are set at the source's size, but never smaller than this or larger than that. */
const MIN_SIZE = 8;
const MAX_SIZE = 11;
const LINE = 1.3;

/** Appends notes pages of `size` to `pdf`, as many as the notes take. Returns how many pages were added. */
export function drawNotesPages(pdf: Doc, notes: Note[], size: { width: number; height: number }): number {
  if (notes.length === 0) return 0;
  let pages = 0;
  let y = Infinity;
  const newPage = () => {
    pdf.addPage({ size: [size.width, size.height], margin: 0 });
    pages++;
    y = MARGIN;
  };
  pdf.fillColor([0, 0, 0]);
  for (const note of notes) {
    const fontSize = Math.min(MAX_SIZE, Math.max(MIN_SIZE, note.size));
    const label = `${markerText(note.number)} (p. ${note.pageNo})`;
    const indent = widthOf(pdf, `${label}  `, { bold: true, size: fontSize });
    const width = Math.max(fontSize * 4, size.width - 2 * MARGIN - indent);
    const lines = wrap(note.text, width, (t) => widthOf(pdf, t, { bold: note.bold, size: fontSize }));
    lines.forEach((line, i) => {
      if (y + fontSize * LINE > size.height - MARGIN) newPage();
      const baseline = y + fontSize * 0.8;
      if (i === 0) drawLine(pdf, label, MARGIN, baseline, { bold: true, size: fontSize });
      drawLine(pdf, line, MARGIN + indent, baseline, { bold: note.bold, size: fontSize });
      y += fontSize * LINE;
    });
    y += fontSize * 0.6;
  }
  return pages;
}
