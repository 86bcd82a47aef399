// The reader process: PDFium runs here, in a child of the worker with its own heap limits (PDFium's
// WebAssembly heap capped, V8's heap capped), so a hostile PDF (a decompression bomb, a page of
// absurd size) can exhaust only this process — the worker kills it, gets its memory back and fails
// the task with a message (issue 17, item 9; issue 31, item 5).
// Protocol (IPC, advanced serialization): {ready} when loaded; {open: path, password?} → {opened: pages};
// {page: n} → {content}; {render: …} → {image}; {close} ends the document (the process may take the
// next one); errors → {error}. argv[2] is PDFium's heap cap in bytes.
import { readFile } from 'node:fs/promises';
import { NotAPdfError, UnreadablePdfError } from './errors.ts';
import { DEFAULT_HEAP_CAP_BYTES, heapWasExhausted, loadPdfium } from './pdfium.ts';
import { openPdf, readPage, type OpenPdf } from './reader.ts';
import { renderPage, type RenderRequest } from './render.ts';

export type ReaderRequest = { open: string; password?: string } | { page: number } | { render: RenderRequest } | { close: true };
export type ReaderError = { kind: 'not_a_pdf' | 'unreadable' | 'memory' | 'internal'; message: string };

const heapCapBytes = Number(process.argv[2]) || DEFAULT_HEAP_CAP_BYTES;
let current: OpenPdf | undefined;

function describe(error: unknown): ReaderError {
  if (heapWasExhausted()) return { kind: 'memory', message: 'PDFium ran out of its capped heap' };
  if (error instanceof NotAPdfError) return { kind: 'not_a_pdf', message: error.message };
  if (error instanceof UnreadablePdfError) return { kind: 'unreadable', message: error.message };
  return { kind: 'internal', message: error instanceof Error ? error.message : String(error) };
}

const send = (message: unknown) => process.send?.(message);

async function handle(request: ReaderRequest): Promise<void> {
  try {
    if ('close' in request) {
      const open = current;
      current = undefined;
      open?.close();
    } else if ('open' in request) {
      const previous = current;
      current = undefined;
      previous?.close();
      current = await openPdf(await readFile(request.open), { heapCapBytes, ...(request.password === undefined ? {} : { password: request.password }) });
      send({ opened: current.pages });
    } else if ('render' in request) {
      if (!current) throw new Error('no document is open');
      const image = renderPage(current, request.render);
      send({ image });
    } else {
      if (!current) throw new Error('no document is open');
      send({ content: readPage(current, request.page) });
    }
  } catch (error) {
    const described = describe(error);
    send({ error: described });
    // A capped heap that ran out (or a WebAssembly trap) leaves PDFium unusable: the process ends and is replaced.
    if (described.kind === 'memory' || error instanceof WebAssembly.RuntimeError) setImmediate(() => process.exit(1));
  }
}

// One request at a time, in order: a close is finished before the next open starts.
let queue = Promise.resolve();
process.on('message', (request: ReaderRequest) => {
  queue = queue.then(() => handle(request));
});
await loadPdfium(heapCapBytes);
send({ ready: true });
// The parent going away (a worker that stopped) ends this process too.
process.on('disconnect', () => process.exit(0));
