// The document engine's one entry, called by a parsing task and by `signet parse`: a PDF in; the
// parsed document (pdf/ → layout/), its Markdown and its docling-style JSON (export/) out.
import type { ParsedDocument } from './document.ts';
import { toDoclingJson } from './export/docling.ts';
import { toMarkdown } from './export/markdown.ts';
import { extractDocument, type ExtractOptions } from './pdf/extract.ts';

/** Parses a PDF into Markdown, docling-style JSON and the parsed document itself. */
export async function runDocparse(
  data: Uint8Array,
  options: ExtractOptions & { name?: string },
): Promise<{ markdown: string; json: string; document: ParsedDocument }> {
  const document = await extractDocument(data, options);
  return {
    markdown: toMarkdown(document),
    json: `${JSON.stringify(toDoclingJson(document, options.name ?? 'document'), null, 2)}\n`,
    document,
  };
}
