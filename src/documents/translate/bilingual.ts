// `bilingual.pdf` (issue 18): every source page followed by its translated page (source 1,
// translation 1, source 2, translation 2, …), so in a two-page view each pair faces each other,
// like PDFMathTranslate's "dual" PDF. Pages are copied whole with pdf-lib, nothing is re-drawn.
// The translation's notes pages (text continued from a page where it did not fit, notes.ts) follow
// at the end.
import { PDFDocument } from 'pdf-lib';

export async function renderBilingualPdf(source: Uint8Array, translated: Uint8Array): Promise<Uint8Array> {
  const [original, translation] = await Promise.all([
    PDFDocument.load(source, { ignoreEncryption: true, updateMetadata: false }),
    PDFDocument.load(translated, { updateMetadata: false }),
  ]);
  if (original.getPageCount() > translation.getPageCount()) {
    throw new Error(`The translation has ${translation.getPageCount()} pages where the source has ${original.getPageCount()}; the bilingual PDF was not made.`);
  }
  const out = await PDFDocument.create();
  const indices = original.getPageIndices();
  const [sourcePages, translatedPages] = await Promise.all([out.copyPages(original, indices), out.copyPages(translation, translation.getPageIndices())]);
  indices.forEach((i) => {
    out.addPage(sourcePages[i]!);
    out.addPage(translatedPages[i]!);
  });
  for (const notes of translatedPages.slice(indices.length)) out.addPage(notes);
  out.setProducer('Signet');
  return out.save();
}
