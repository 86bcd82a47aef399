// The PDF reader's view of a PDF for the check (check.ts): each page's text runs with their font size, and
// its images, drawn figures and rules as boxes. In-process (tests and the benchmark); the worker reads
// PDFs only in its reader process, so a task's own check goes without it (check-pdf.ts).
import { openPdf, readPage } from '../../pdf/reader.ts';
import type { DrawnPage } from './check-pdf.ts';

export async function drawnPages(data: Uint8Array): Promise<DrawnPage[]> {
  const open = await openPdf(new Uint8Array(data));
  try {
    const pages: DrawnPage[] = [];
    for (let n = 1; n <= open.pages; n++) {
      const page = readPage(open, n);
      const h = page.height;
      pages.push({
        runs: page.runs.filter((r) => r.text.trim() !== '').map((r) => ({ xMin: r.x, xMax: r.x + r.width, yMin: h - (r.y + 0.8 * r.size), yMax: h - (r.y - 0.2 * r.size), size: Math.round(r.size * 100) / 100, text: r.text, ...(r.color ? { color: r.color } : {}), ...(r.bold ? { bold: true } : {}) })),
        drawings: [
          ...(page.images ?? []).map(({ bbox: b }) => ({ xMin: b.l, xMax: b.r, yMin: h - b.t, yMax: h - b.b })),
          ...page.rulings.map((r) => ({ xMin: r.x1 - 0.5, xMax: r.x2 + 0.5, yMin: h - r.y2 - 0.5, yMax: h - r.y1 + 0.5 })),
        ],
      });
    }
    return pages;
  } finally {
    open.close();
  }
}
