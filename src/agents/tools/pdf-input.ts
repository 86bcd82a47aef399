// The PDF a tool is given: base64 `data` with its `filename`, or (signet mcp only) a `path` on this
// machine. Checked here, before any task is made: the size as the upload API's (SIGNET_UPLOAD_MAX_MB),
// the encoding, and that exactly one way was used.
import { z } from 'zod';
import { ToolInputError, type DocumentBackend, type PdfInput } from '../backend.ts';

/** The argument shapes: `data` + `filename` always, `path` only where tools may read local files. */
export function pdfArguments(backend: DocumentBackend): { data: z.ZodOptional<z.ZodString>; filename: z.ZodOptional<z.ZodString>; path?: z.ZodOptional<z.ZodString> } {
  const mb = megabytes(backend.maxPdfBytes);
  return {
    data: z.string().describe(`The PDF, base64-encoded (at most ${mb} MB once decoded).`).optional(),
    filename: z.string().max(255).describe('The PDF\'s file name, e.g. "report.pdf": the task is listed under it.').optional(),
    ...(backend.localFiles ? { path: z.string().max(4096).describe('A PDF file on this machine, instead of data (an absolute path, or relative to where signet mcp was started).').optional() } : {}),
  };
}

const megabytes = (bytes: number) => Math.round(bytes / 1024 / 1024);

// Standard or URL-safe alphabet (Buffer reads both), with or without padding.
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

/** The one PDF the arguments name, or a ToolInputError that says what to send instead. */
export function pdfInput(backend: DocumentBackend, args: { data?: string | undefined; filename?: string | undefined; path?: unknown }): PdfInput {
  const ways = [args.data !== undefined, args.path !== undefined].filter(Boolean).length;
  const what = backend.localFiles ? 'data (base64) with filename, or path' : 'data (base64) with filename';
  if (ways === 0) throw new ToolInputError(`Send the PDF: ${what}.`);
  if (ways > 1) throw new ToolInputError('Send the PDF one way only: data with filename, or path.');
  if (args.path !== undefined) {
    if (!backend.localFiles) throw new ToolInputError('path is for local files (signet mcp); send data (base64) with filename.');
    if (typeof args.path !== 'string' || args.path.trim() === '') throw new ToolInputError('path is empty; give the PDF file\'s path.');
    return { path: args.path };
  }
  const filename = args.filename?.trim();
  if (!filename) throw new ToolInputError('filename is missing: give the PDF\'s name with its data, e.g. "report.pdf".');
  const data = (args.data ?? '').replace(/\s+/g, '');
  // Checked before decoding, so an oversized argument is never decoded: 4 characters carry 3 bytes.
  if (Math.floor((data.length * 3) / 4) > backend.maxPdfBytes + 2) {
    throw new ToolInputError(`The file is larger than ${megabytes(backend.maxPdfBytes)} MB. Send a smaller PDF, or split it.`);
  }
  if (data.length === 0) throw new ToolInputError('data is empty; send the PDF\'s bytes, base64-encoded.');
  if (data.length % 4 === 1 || !BASE64.test(data)) throw new ToolInputError('data is not base64; send the PDF\'s bytes base64-encoded (A–Z, a–z, 0–9, +, /, = padding).');
  const bytes = Buffer.from(data, 'base64');
  if (bytes.length > backend.maxPdfBytes) throw new ToolInputError(`The file is larger than ${megabytes(backend.maxPdfBytes)} MB. Send a smaller PDF, or split it.`);
  return { data: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), filename };
}
