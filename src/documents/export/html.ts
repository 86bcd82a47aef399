// The parsed document as a standalone, accessible HTML file, in the elements docling-core's HTML
// serializer uses (transforms/serializer/html.py), so tools that read docling's `html_content` find
// what they expect: headings as <h1>…<h6>, <p>, lists as <ul>/<ol>, tables with <th> header cells
// and rowspan/colspan and their caption as <caption>, pictures as <figure> with <figcaption>, code and
// formulas as <pre><code>. Page headers and footers are left out, as in the Markdown (body.ts).
//
// Safe by construction: every text of the PDF is escaped where it is written, nothing is produced
// from Markdown, no link is made from the PDF's text, and the only URLs are the pictures' relative
// result paths (or their data: URIs); no script, no event handler, no style attribute.
import type { Block, Page, ParsedDocument, Picture, Table, TableCell } from '../document.ts';
import { isLettered, markerNumber, pageBody, type BodyPart } from './body.ts';
import { guessLanguage, textDirection } from './language.ts';

/** docling-serve's `image_export_mode`: a comment in place of each picture, its PNG as a data: URI, or a link to its result file. */
export type ImageMode = 'placeholder' | 'embedded' | 'referenced';

export type HtmlOptions = {
  /** The <title> when the document has no title block of its own (the file's name). */
  title?: string;
  /** The document's language (BCP 47); guessed from its text when absent. */
  lang?: string;
};

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' };
/** Text of the PDF as HTML text or a (double-quoted) attribute value: nothing in it can open a tag or end an attribute. */
export const escapeHtml = (text: string) => text.replace(/[&<>"]/g, (c) => ESCAPES[c] ?? c);

const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim();

/** ` dir="rtl"` for a right-to-left text inside a left-to-right document (and the reverse), else nothing. */
function dirFor(text: string, documentDir: 'rtl' | 'ltr'): string {
  const dir = textDirection(text);
  return dir === documentDir || !/\p{L}/u.test(text) ? '' : ` dir="${dir}"`;
}

/** Rows that are column headers only, from the top, and that no cell spans out of: the table's <thead>. */
function headRowCount(table: Table): number {
  let count = 0;
  for (let row = 0; row < table.numRows; row += 1) {
    const cells = table.cells.filter((cell) => cell.row === row);
    if (cells.length === 0 || !cells.every((cell) => cell.columnHeader)) break;
    count = row + 1;
  }
  while (count > 0 && table.cells.some((cell) => cell.row < count && cell.row + cell.rowSpan > count)) count -= 1;
  return count;
}

/** A cell as <th> with its scope (WCAG H63) when it is a header and has text, else <td>; spans as rowspan/colspan. */
function cellHtml(cell: TableCell, dir: 'rtl' | 'ltr'): string {
  const text = oneLine(cell.text);
  // An empty header cell (the corner above the row headers) names nothing: it is a data cell.
  const scope = text === '' ? undefined : cell.columnHeader ? (cell.colSpan > 1 ? 'colgroup' : 'col') : cell.rowHeader ? (cell.rowSpan > 1 ? 'rowgroup' : 'row') : undefined;
  const tag = scope ? 'th' : 'td';
  const attributes = `${scope ? ` scope="${scope}"` : ''}${cell.rowSpan > 1 ? ` rowspan="${cell.rowSpan}"` : ''}${cell.colSpan > 1 ? ` colspan="${cell.colSpan}"` : ''}${dirFor(text, dir)}`;
  return `<${tag}${attributes}>${escapeHtml(text)}</${tag}>`;
}

/** A table block without a grid (rows of texts): its first row is the header row, as in the Markdown's pipe table and docling's JSON. */
function gridOf(block: Block): Table {
  if (block.table) return block.table;
  const rows = block.cells ?? [];
  const numCols = Math.max(0, ...rows.map((row) => row.length));
  const cells = rows.flatMap((row, r) => Array.from({ length: numCols }, (_, c): TableCell => ({ text: row[c] ?? '', bbox: block.bbox, row: r, col: c, rowSpan: 1, colSpan: 1, columnHeader: r === 0, rowHeader: false })));
  return { numRows: rows.length, numCols, cells };
}

function tableHtml(block: Block, captions: Block[], dir: 'rtl' | 'ltr'): string {
  const table = gridOf(block);
  const rows = Array.from({ length: table.numRows }, (_, r) => table.cells.filter((cell) => cell.row === r).sort((a, b) => a.col - b.col));
  const rowHtml = (cells: TableCell[]) => `<tr>${cells.map((cell) => cellHtml(cell, dir)).join('')}</tr>`;
  const head = headRowCount(table);
  const caption = captions.length > 0 ? `<caption${dirFor(captions[0]!.text, dir)}>${captions.map((c) => escapeHtml(c.text)).join('<br>')}</caption>\n` : '';
  const thead = head > 0 ? `<thead>\n${rows.slice(0, head).map(rowHtml).join('\n')}\n</thead>\n` : '';
  return `<table>\n${caption}${thead}<tbody>\n${rows.slice(head).map(rowHtml).join('\n')}\n</tbody>\n</table>`;
}

/**
 * A list: numbered items as <ol> keeping their numbers; bullets as <ul>; lettered or mixed markers
 * ("a)", "(iv)") as an <ol> showing each marker as printed (a CSS counter cannot say "(iv)").
 */
function listHtml(items: Block[], dir: 'rtl' | 'ltr'): string {
  const numbers = items.map((item) => markerNumber(item.marker));
  if (numbers.every((n) => n !== undefined)) {
    const first = numbers[0] as number;
    const lis = items.map((item, i) => `<li${numbers[i] === first + i ? '' : ` value="${numbers[i]}"`}${dirFor(item.text, dir)}>${escapeHtml(item.text)}</li>`);
    return `<ol${first === 1 ? '' : ` start="${first}"`}>\n${lis.join('\n')}\n</ol>`;
  }
  if (!items.some((item) => isLettered(item.marker) || markerNumber(item.marker) !== undefined)) {
    return `<ul>\n${items.map((item) => `<li${dirFor(item.text, dir)}>${escapeHtml(item.text)}</li>`).join('\n')}\n</ul>`;
  }
  const lis = items.map((item) => `<li${dirFor(item.text, dir)}>${item.marker ? `<span class="marker">${escapeHtml(item.marker)}</span> ` : ''}${escapeHtml(item.text)}</li>`);
  return `<ol class="marked">\n${lis.join('\n')}\n</ol>`;
}

/** A relative path under the result folder; anything else (a scheme, an absolute path) is not linked. */
const isResultPath = (src: string) => src !== '' && !/^[a-z][a-z0-9+.-]*:/i.test(src) && !src.startsWith('/') && !src.startsWith('\\');

/** A picture as <figure>: its result file as <img> (alt: its caption, else where it is), its caption as <figcaption>. */
function pictureHtml(picture: Picture, pageNo: number, dir: 'rtl' | 'ltr'): string {
  const caption = picture.caption ? oneLine(picture.caption) : '';
  const image = isResultPath(picture.file) ? `<img src="${escapeHtml(picture.file)}" alt="${escapeHtml(caption || `Picture on page ${pageNo}`)}">` : IMAGE_PLACEHOLDER;
  return `<figure>\n${image}${caption ? `\n<figcaption${dirFor(caption, dir)}>${escapeHtml(caption)}</figcaption>` : ''}\n</figure>`;
}

/** docling's mark for a picture whose image is not in the file (image_export_mode placeholder). */
const IMAGE_PLACEHOLDER = '<!-- image -->';

function blockHtml(block: Block, text: string, dir: 'rtl' | 'ltr'): string {
  const d = dirFor(text, dir);
  if (block.label === 'title') return `<h1${d}>${escapeHtml(text)}</h1>`;
  // The same depth as the Markdown's #s: layout counts the title's size as level 1.
  if (block.label === 'section_header') return `<h${Math.min(6, Math.max(1, block.level ?? 1))}${d}>${escapeHtml(text)}</h${Math.min(6, Math.max(1, block.level ?? 1))}>`;
  if (block.label === 'code') return `<pre tabindex="0"><code>${escapeHtml(text)}</code></pre>`;
  if (block.label === 'formula') return `<pre class="formula" tabindex="0"><code>${escapeHtml(text)}</code></pre>`;
  if (block.label === 'caption') return `<p class="caption"${d}>${escapeHtml(text)}</p>`;
  if (block.label === 'footnote') return `<p class="footnote"${d}>${escapeHtml(text)}</p>`;
  return `<p${d}>${escapeHtml(text)}</p>`;
}

function pageHtml(page: Page, dir: 'rtl' | 'ltr'): string {
  const parts = pageBody(page);
  // A table's caption goes into its <caption>, wherever the caption block stands in reading order.
  const tableCaptions = new Map<number, Block[]>();
  const inCaption = new Set<Block>();
  for (const part of parts) {
    if (part.kind !== 'block' || part.block.label !== 'caption' || part.block.captionOf?.kind !== 'table') continue;
    const index = part.block.captionOf.index;
    if (page.blocks[index]?.label !== 'table') continue;
    tableCaptions.set(index, [...(tableCaptions.get(index) ?? []), { ...part.block, text: part.text }]);
    inCaption.add(part.block);
  }
  const html = (part: BodyPart): string[] => {
    if (part.kind === 'picture') return [pictureHtml(part.picture, page.pageNo, dir)];
    if (part.kind === 'list') return [listHtml(part.items, dir)];
    if (part.block.label === 'table') return [tableHtml(part.block, tableCaptions.get(part.index) ?? [], dir)];
    if (inCaption.has(part.block)) return [];
    return [blockHtml(part.block, part.text, dir)];
  };
  return `<div class="page" id="page-${page.pageNo}">\n${parts.flatMap(html).join('\n')}\n</div>`;
}

/** Just enough to read comfortably, print, and tell captions and footnotes from the text. */
const STYLE = `body { font: 1rem/1.55 system-ui, sans-serif; color: #1a1a1a; background: #fff; max-width: 52rem; margin: 0 auto; padding: 1.5rem; }
h1, h2, h3, h4, h5, h6 { line-height: 1.25; margin: 1.4em 0 0.5em; }
.page + .page { border-top: 1px dashed #767676; margin-top: 2rem; padding-top: 1rem; }
table { border-collapse: collapse; margin: 1em 0; }
caption { text-align: start; font-style: italic; padding-bottom: 0.4em; }
th, td { border: 1px solid #767676; padding: 0.3em 0.6em; text-align: start; vertical-align: top; }
th { background: #f0f0f0; }
figure { margin: 1.5em 0; }
img { max-width: 100%; height: auto; }
figcaption, .caption { font-style: italic; color: #444; }
.footnote { font-size: 0.875em; color: #444; }
pre { background: #f5f5f5; padding: 0.75em; overflow: auto; }
ol.marked { list-style: none; padding-inline-start: 1.5em; }`;

/** The title a reader sees on the tab: the document's title block, else the name it was given, else its first heading. */
function titleOf(doc: ParsedDocument, fallback: string | undefined): string {
  const blocks = doc.pages.flatMap((page) => page.blocks);
  const title = blocks.find((block) => block.label === 'title') ?? (fallback ? undefined : blocks.find((block) => block.label === 'section_header'));
  return oneLine(title?.text ?? fallback ?? '') || 'Document';
}

/** The document as a standalone HTML file; pictures as links to their result files (`referenced`; see withImageMode). */
export function toHtml(doc: ParsedDocument, options: HtmlOptions = {}): string {
  const lang = options.lang ?? guessLanguage(doc.pages.flatMap((page) => page.blocks.map((block) => block.text)).join('\n'));
  const dir = ['ar', 'fa', 'he', 'ur', 'yi', 'ps', 'ug', 'dv', 'syr'].includes(lang.split('-')[0]!.toLowerCase()) ? 'rtl' : 'ltr';
  return [
    '<!DOCTYPE html>',
    `<html lang="${escapeHtml(lang)}"${dir === 'rtl' ? ' dir="rtl"' : ''}>`,
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="generator" content="Signet">',
    `<title>${escapeHtml(titleOf(doc, options.title))}</title>`,
    `<style>\n${STYLE}\n</style>`,
    '</head>',
    '<body>',
    '<main>',
    ...doc.pages.map((page) => pageHtml(page, dir)),
    '</main>',
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

/** Every picture of an HTML file toHtml wrote: only it writes `<img`, since every text of the PDF has its `<` escaped. */
const IMG = /<img src="([^"]*)" alt="([^"]*)">/g;

/**
 * The HTML toHtml wrote (pictures `referenced`) with its pictures in another mode: `placeholder`
 * puts docling's `<!-- image -->` in place of each; `embedded` makes each a data: URI of its PNG,
 * read by `readPicture` from the picture's result path (as written, percent-decoded) — a picture it
 * cannot find becomes a placeholder. The figure and its caption stay either way.
 */
export async function withImageMode(html: string, mode: ImageMode, readPicture?: (file: string) => Promise<Uint8Array | undefined>): Promise<string> {
  if (mode === 'referenced') return html;
  if (mode === 'placeholder' || !readPicture) return html.replace(IMG, IMAGE_PLACEHOLDER);
  const sources = new Map<string, string>();
  for (const [, src] of html.matchAll(IMG)) {
    if (src === undefined || sources.has(src)) continue;
    let file: string;
    try {
      file = unescapeAttribute(src).split('/').map(decodeURIComponent).join('/');
    } catch {
      continue;
    }
    const png = await readPicture(file);
    if (png) sources.set(src, `data:image/png;base64,${Buffer.from(png.buffer, png.byteOffset, png.byteLength).toString('base64')}`);
  }
  return html.replace(IMG, (_whole, src: string, alt: string) => {
    const uri = sources.get(src);
    return uri === undefined ? IMAGE_PLACEHOLDER : `<img src="${uri}" alt="${alt}">`;
  });
}

const unescapeAttribute = (value: string) => value.replace(/&(amp|lt|gt|quot);/g, (_, name: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"' })[name] ?? '');
