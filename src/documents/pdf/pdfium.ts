// PDFium, Chrome's PDF engine, compiled to WebAssembly (npm @embedpdf/pdfium): loaded once per
// process from the package's own pdfium.wasm (no network), with a hard cap on how far its heap may
// grow, and the few memory helpers every reader needs — a document opened from bytes (with an
// optional password) and closed again, UTF-16 strings read back out of the heap. Only this folder
// knows PDFium (docs/documents/pdf-reader.md).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { init, type WrappedPdfiumModule } from '@embedpdf/pdfium';

export type Pdfium = WrappedPdfiumModule;

const require = createRequire(import.meta.url);
const WASM_PAGE = 65_536;

/** The default cap on PDFium's heap: 1 GiB (issue 31, item 5: "a hard cap per document"). */
export const DEFAULT_HEAP_CAP_BYTES = 1024 * 2 ** 20;

/** PDFium ran out of its capped heap: the document needs more memory than it may have. */
export class PdfiumHeapExhausted extends Error {
  override name = 'PdfiumHeapExhausted';
}

let loading: Promise<Pdfium> | undefined;
let heapCapBytes = DEFAULT_HEAP_CAP_BYTES;
/** Set when growing the heap was refused: PDFium may then abort, and the caller reports memory, not damage. */
let refusedGrowth = false;

/** The heap's current size in bytes (it only grows; a reader that grew far is replaced, see reader-client.ts). */
export const heapBytes = (pdfium: Pdfium) => wasmMemory(pdfium).buffer.byteLength;

/** The module's linear memory (its heap), as Emscripten exports it. */
function wasmMemory(pdfium: Pdfium): WebAssembly.Memory {
  const memory = (pdfium.pdfium.wasmExports as unknown as { memory?: WebAssembly.Memory }).memory;
  if (!memory) throw new Error('PDFium module has no exported memory');
  return memory;
}

/** The heap as bytes; a fresh view each time, since a growing heap replaces its buffer. */
export const heapU8 = (pdfium: Pdfium) => new Uint8Array(wasmMemory(pdfium).buffer);

/** Whether PDFium asked for more heap than the cap allowed since the process started. */
export const heapWasExhausted = () => refusedGrowth;

/**
 * PDFium's module, initialised once per process (or worker thread). `capBytes` bounds its heap: a
 * growth past it is refused (malloc then fails and PDFium stops), so one hostile document cannot
 * take more. The cap given first wins; later calls return the same module.
 */
export function loadPdfium(capBytes = DEFAULT_HEAP_CAP_BYTES): Promise<Pdfium> {
  heapCapBytes = capBytes;
  loading ??= (async () => {
    const wasmBinary = readFileSync(require.resolve('@embedpdf/pdfium/pdfium.wasm'));
    // Emscripten prints to the console by default; PDFium's own warnings are of no use to a person here.
    const quiet = () => {};
    const pdfium = await init({ wasmBinary: wasmBinary.buffer.slice(wasmBinary.byteOffset, wasmBinary.byteOffset + wasmBinary.byteLength), print: quiet, printErr: quiet });
    capHeap(pdfium);
    callDirectly(pdfium);
    pdfium.PDFiumExt_Init();
    return pdfium;
  })();
  return loading;
}

/**
 * The calls made once per character or path segment, and what they return. The package wraps every
 * function in Emscripten's ccall, which looks the export up by name and converts each argument on
 * every call, through a wrapper that asserts on each call: a third of a page's reading time in the
 * profile. These take numbers only, so the WebAssembly export itself does the same work.
 */
const HOT_CALLS = {
  FPDFText_IsGenerated: 'number',
  FPDFText_GetUnicode: 'number',
  FPDFText_GetTextObject: 'number',
  FPDFText_GetCharOrigin: 'boolean',
  FPDFText_GetLooseCharBox: 'boolean',
  FPDFText_GetFontSize: 'number',
  FPDFText_GetCharAngle: 'number',
  FPDFTextObj_GetFont: 'number',
  FPDFPage_GetObject: 'number',
  FPDFFormObj_GetObject: 'number',
  FPDFPageObj_GetType: 'number',
  FPDFPageObj_GetMatrix: 'boolean',
  FPDFPageObj_GetFillColor: 'boolean',
  FPDFPageObj_GetMarkedContentID: 'number',
  FPDFPageObj_CountMarks: 'number',
  FPDFPath_GetPathSegment: 'number',
  FPDFPathSegment_GetPoint: 'boolean',
  FPDFPathSegment_GetType: 'number',
  FPDFPathSegment_GetClose: 'boolean',
  FPDFPath_CountSegments: 'number',
  FPDFPath_GetDrawMode: 'boolean',
  FPDFPageObj_GetBounds: 'boolean',
  FPDFPage_CountObjects: 'number',
  FPDFFormObj_CountObjects: 'number',
  FPDFText_CountChars: 'number',
} as const satisfies Partial<Record<keyof Pdfium, 'number' | 'boolean'>>;

function callDirectly(pdfium: Pdfium): void {
  // The WebAssembly instance's own exports: the module's `_name` functions are checking wrappers around them.
  const exports = pdfium.pdfium.wasmExports as unknown as Record<string, unknown>;
  const module = pdfium as unknown as Record<string, unknown>;
  for (const [name, returns] of Object.entries(HOT_CALLS)) {
    const raw = exports[name];
    if (typeof raw !== 'function') continue;
    const call = raw as (...args: number[]) => number;
    module[name] = returns === 'boolean' ? (...args: number[]) => call(...args) !== 0 : call;
  }
}

/** Emscripten grows the heap through the exported Memory's grow(); refusing past the cap makes malloc fail there. */
function capHeap(pdfium: Pdfium): void {
  const memory = wasmMemory(pdfium);
  const grow = memory.grow.bind(memory);
  memory.grow = (delta: number) => {
    if (memory.buffer.byteLength + delta * WASM_PAGE > heapCapBytes) {
      refusedGrowth = true;
      throw new RangeError(`PDFium's heap may not grow past ${Math.round(heapCapBytes / 2 ** 20)} MB`);
    }
    return grow(delta);
  };
}

/** FPDF_GetLastError's codes (fpdfview.h). */
export const FPDF_ERR = { SUCCESS: 0, UNKNOWN: 1, FILE: 2, FORMAT: 3, PASSWORD: 4, SECURITY: 5, PAGE: 6 } as const;

/** An open document and the heap copy of its bytes, which PDFium reads from until it is closed. */
export type PdfiumDocument = { handle: number; pages: number; close: () => void };

export class PdfiumOpenError extends Error {
  override name = 'PdfiumOpenError';
  readonly code: number;
  constructor(code: number) {
    super(`PDFium could not open the document (error ${code})`);
    this.code = code;
  }
}

/** Opens `data` (copied into PDFium's heap); throws PdfiumOpenError with FPDF_GetLastError's code. Always close() it. */
export function openDocument(pdfium: Pdfium, data: Uint8Array, password?: string): PdfiumDocument {
  const { pdfium: wasm } = pdfium;
  const buffer = wasm.wasmExports.malloc(Math.max(1, data.byteLength));
  if (buffer === 0) throw new PdfiumHeapExhausted('no room in PDFium heap for the file');
  heapU8(pdfium).set(data, buffer);
  const handle = pdfium.FPDF_LoadMemDocument(buffer, data.byteLength, password ?? '');
  if (handle === 0) {
    const code = pdfium.FPDF_GetLastError();
    wasm.wasmExports.free(buffer);
    throw new PdfiumOpenError(code);
  }
  let open = true;
  return {
    handle,
    pages: pdfium.FPDF_GetPageCount(handle),
    close: () => {
      if (!open) return;
      open = false;
      pdfium.FPDF_CloseDocument(handle);
      wasm.wasmExports.free(buffer);
    },
  };
}

/**
 * A string from one of PDFium's two-call getters: `read(buffer, bytes)` returns the bytes the
 * string needs (terminator included), and fills the buffer when it is big enough. UTF-16 for
 * text (FPDFText_*, FPDF_StructElement_*, FPDFBookmark_GetTitle), UTF-8 for names (FPDFFont_GetBaseFontName).
 */
function readString(pdfium: Pdfium, read: (buffer: number, bytes: number) => number, decode: (buffer: number) => string, terminator: number): string {
  const needed = read(0, 0);
  if (needed <= terminator) return '';
  return withBuffer(pdfium, needed, (buffer) => {
    read(buffer, needed);
    return decode(buffer);
  });
}

export const readUtf16 = (pdfium: Pdfium, read: (buffer: number, bytes: number) => number) => readString(pdfium, read, (b) => pdfium.pdfium.UTF16ToString(b), 2);

export const readUtf8 = (pdfium: Pdfium, read: (buffer: number, bytes: number) => number) => readString(pdfium, read, (b) => pdfium.pdfium.UTF8ToString(b), 1);

/** `use` with `bytes` of scratch heap, freed afterwards. */
export function withBuffer<T>(pdfium: Pdfium, bytes: number, use: (buffer: number) => T): T {
  const buffer = pdfium.pdfium.wasmExports.malloc(Math.max(1, bytes));
  if (buffer === 0) throw new PdfiumHeapExhausted(`no room in PDFium heap for ${bytes} bytes`);
  try {
    return use(buffer);
  } finally {
    pdfium.pdfium.wasmExports.free(buffer);
  }
}

/**
 * A small block of heap for out-parameters (doubles, floats, ints written by PDFium), read back
 * by slot. Views are rebuilt when the heap has grown (growing replaces the buffer). free() it.
 */
export class Scratch {
  readonly ptr: number;
  private readonly pdfium: Pdfium;
  private buffer: ArrayBuffer | undefined;
  private view: DataView | undefined;
  constructor(pdfium: Pdfium, bytes = 64) {
    this.pdfium = pdfium;
    this.ptr = pdfium.pdfium.wasmExports.malloc(bytes);
    if (this.ptr === 0) throw new PdfiumHeapExhausted('no room in PDFium heap for scratch space');
  }
  private data(): DataView {
    // A heap that grew left the old buffer detached (its length 0): only then is the memory asked again
    // (its buffer getter costs more than the read itself, and out-parameters are read per character).
    if (!this.view || this.buffer?.byteLength === 0) {
      const buffer = wasmMemory(this.pdfium).buffer as ArrayBuffer;
      [this.buffer, this.view] = [buffer, new DataView(buffer)];
    }
    return this.view;
  }
  /** The address of slot `i` of `size` bytes. */
  at(i: number, size = 8): number {
    return this.ptr + i * size;
  }
  f64(i: number): number {
    return this.data().getFloat64(this.ptr + 8 * i, true);
  }
  f32(i: number): number {
    return this.data().getFloat32(this.ptr + 4 * i, true);
  }
  i32(i: number): number {
    return this.data().getInt32(this.ptr + 4 * i, true);
  }
  u32(i: number): number {
    return this.data().getUint32(this.ptr + 4 * i, true);
  }
  u16(i: number): number {
    return this.data().getUint16(this.ptr + 2 * i, true);
  }
  free(): void {
    this.pdfium.pdfium.wasmExports.free(this.ptr);
  }
}
