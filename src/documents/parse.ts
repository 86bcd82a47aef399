// The document engine's one entry, called by a parsing task and by `signet parse`: a PDF in; the
// parsed document (pdf/ → layout/), its Markdown, docling-style JSON, HTML and plain text (export/) out.
import { withoutFurniture, type Block, type FurnitureMode, type ParsedDocument } from './document.ts';
import { toDoclingJson } from './export/docling.ts';
import { toHtml } from './export/html.ts';
import { toMarkdown } from './export/markdown.ts';
import { toText } from './export/text.ts';
import { extractDocument, type ExtractOptions } from './pdf/extract.ts';

export type DocparseOptions = ExtractOptions & {
  /** The document's name in the JSON (default "document"). */
  name?: string;
  /**
   * The folder the pictures' links point into, relative to the Markdown and JSON files: a task's
   * results keep `pictures/` beside `document.md` (none); `signet parse` writes `NAME/pictures/`.
   */
  pictureDir?: string;
  /** false: tables come out as paragraphs of their text, row by row, without a grid (docling-serve's do_table_structure). */
  tableStructure?: boolean;
  /** Page headers and footers in the Markdown, HTML and text: left out (`drop`, the default) or kept where they are printed (`keep`); the JSON has them under `furniture` either way. */
  furniture?: FurnitureMode;
  /** The HTML's <title> when the document has no title of its own (default: `name`). */
  title?: string;
  /** The document's language for the HTML's `lang` when it is known (a BCP 47 tag); guessed from the text otherwise. */
  lang?: string;
};

/** What the engine writes of one PDF: each export format (made when first read), and the parsed document they were made from. */
export type DocparseResult = { markdown: string; json: string; html: string; text: string; document: ParsedDocument };

/** Each table as a paragraph of its text, row by row: the table's place and words without its rows and columns. */
function withoutTableStructure(document: ParsedDocument): ParsedDocument {
  const flat = (block: Block): Block => {
    if (block.label !== 'table') return block;
    const { cells, table: _grid, ...rest } = block;
    const text = (cells ?? []).map((row) => row.filter((cell) => cell !== '').join(' ')).filter((row) => row !== '').join('\n') || block.text;
    return { ...rest, label: 'text', text };
  };
  return { ...document, pages: document.pages.map((page) => ({ ...page, blocks: page.blocks.map(flat) })) };
}

/** A picture's link: its result name under `dir`, each segment percent-encoded so spaces and parentheses cannot end a Markdown link. */
const linkUnder = (dir: string, file: string) =>
  [...dir.split('/'), ...file.split('/')]
    .filter((segment) => segment !== '')
    .map((segment) => encodeURIComponent(segment).replace(/[()]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`))
    .join('/');

/** The document with its pictures' links under `dir`. */
function picturesUnder(document: ParsedDocument, dir: string): ParsedDocument {
  return { ...document, pages: document.pages.map((page) => (page.pictures ? { ...page, pictures: page.pictures.map((p) => (p.file === '' ? p : { ...p, file: linkUnder(dir, p.file) })) } : page)) };
}

/**
 * Parses a PDF into Markdown, docling-style JSON, HTML (pictures linked to their result files; see
 * export/html.ts withImageMode for the other image modes), plain text and the parsed document itself.
 */
export async function runDocparse(data: Uint8Array, options: DocparseOptions): Promise<DocparseResult> {
  const extracted = await extractDocument(data, options);
  const document = options.tableStructure === false ? withoutTableStructure(extracted) : extracted;
  const linked = options.pictureDir ? picturesUnder(document, options.pictureDir) : document;
  // spec (issue 41): page furniture is left out of the Markdown, HTML and text unless kept.
  const shown = options.furniture === 'keep' ? linked : withoutFurniture(linked);
  // Each format is written when first asked for (once): `signet parse --format md` makes no JSON, HTML or text.
  const once = <T>(make: () => T): (() => T) => {
    let made: { value: T } | undefined;
    return () => (made ??= { value: make() }).value;
  };
  const markdown = once(() => toMarkdown(shown));
  const json = once(() => `${JSON.stringify(toDoclingJson(linked, options.name ?? 'document'), null, 2)}\n`);
  const html = once(() => toHtml(shown, { title: options.title ?? options.name, ...(options.lang ? { lang: options.lang } : {}) }));
  const text = once(() => toText(options.furniture === 'keep' ? document : withoutFurniture(document)));
  return {
    get markdown() {
      return markdown();
    },
    get json() {
      return json();
    },
    get html() {
      return html();
    },
    get text() {
      return text();
    },
    document,
  };
}
