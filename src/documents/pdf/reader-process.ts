// The reader process: pdf.js runs here, in a child of the worker with its own heap limit, so a
// hostile PDF (a decompression bomb, a page of absurd size) can exhaust only this process — the
// worker kills it, gets its memory back and fails the task with a message (issue 17, item 9).
// Protocol (IPC, advanced serialization): {ready} when loaded; {open: path} → {opened: pages};
// {page: n} → {content}; {close} ends the document (the process may take the next one); errors → {error}.
import { readFile } from 'node:fs/promises';
import { NotAPdfError, UnreadablePdfError } from './errors.ts';
import { openPdf, readPage, type OpenPdf } from './reader.ts';
import { openTags, type DocumentTags } from './tags.ts';

export type ReaderRequest = { open: string } | { page: number } | { close: true };
export type ReaderError = { kind: 'not_a_pdf' | 'unreadable' | 'internal'; message: string };

let current: OpenPdf | undefined;
let tags: DocumentTags | undefined;

function describe(error: unknown): ReaderError {
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
      tags?.close();
      tags = undefined;
      await open?.close();
    } else if ('open' in request) {
      const previous = current;
      current = undefined;
      tags?.close();
      tags = undefined;
      await previous?.close();
      const data = await readFile(request.open);
      current = await openPdf(data);
      // A tagged PDF (MarkInfo /Marked true) or one with bookmarks is opened a second time, with PDFium, for its tags.
      const marked = (await current.pdf.getMarkInfo())?.Marked === true;
      if (marked || (await current.pdf.getOutline())?.length) tags = await openTags(data);
      send({ opened: current.pdf.numPages, outline: tags?.outline ?? [] });
    } else {
      if (!current) throw new Error('no document is open');
      const content = await readPage(current.pdf, request.page);
      const structure = tags?.structure(request.page);
      send({ content: structure ? { ...content, structure } : content });
    }
  } catch (error) {
    send({ error: describe(error) });
  }
}

// One request at a time, in order: a close is finished before the next open starts.
let queue = Promise.resolve();
process.on('message', (request: ReaderRequest) => {
  queue = queue.then(() => handle(request));
});
send({ ready: true });
// The parent going away (a worker that stopped) ends this process too.
process.on('disconnect', () => process.exit(0));
