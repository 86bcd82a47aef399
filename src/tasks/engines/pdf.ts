// Kept so imports of the old single-file reader keep working while callers move to pdf/ (issue 17
// split it into pdf/reader, rulings, render, extract). New code imports from ./pdf/ directly.
export { extractDocument, inspectPdf } from './pdf/extract.ts';
export { NotAPdfError, UnreadablePdfError } from './pdf/errors.ts';
export { rulingsFrom } from './pdf/rulings.ts';
