// Markdown pipe tables → HTML tables, and a small parser for the HTML tables found in a document,
// as opendataloader-bench does before scoring (src/converter_markdown_table.py:
// convert_to_markdown_with_html_tables; src/evaluator_table.py: extract_tables with BeautifulSoup,
// the HTML read by lxml with comments removed, `<thead>`/`<tbody>` dropped, `<th>` renamed `<td>`).

/** Python's html.escape(text, quote=True). */
const htmlEscape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#x27;');

/** _split_markdown_row: a line with a `|` split into stripped cells (escaped pipes are split too, as there). */
function splitRow(line: string): string[] | undefined {
  const trimmed = line.trim();
  if (trimmed === '' || !trimmed.includes('|')) return undefined;
  let cells = trimmed.split('|');
  if (trimmed.startsWith('|')) cells = cells.slice(1);
  if (cells.length > 0 && trimmed.endsWith('|')) cells = cells.slice(0, -1);
  cells = cells.map((c) => c.trim());
  return cells.length === 0 ? undefined : cells;
}

/** _is_separator_row: every cell made of `-` and `:` only (spaces ignored), none empty. */
function isSeparator(cells: string[]): boolean {
  return cells.length > 0 && cells.every((cell) => {
    const content = cell.replace(/ /g, '');
    return content !== '' && /^[-:]+$/.test(content);
  });
}

/** _normalize_cells: pads or cuts a row to the header's width; three cells over a wider table spread the middle one. */
function normalizeCells(cells: string[], width: number): string[] {
  if (width <= 0 || cells.length === width) return cells;
  if (cells.length === 3 && width > 3) return [cells[0] ?? '', ...Array.from({ length: width - 2 }, () => cells[1] ?? ''), cells[2] ?? ''];
  if (cells.length < width) return [...cells, ...Array.from({ length: width - cells.length }, () => '')];
  return cells.slice(0, width);
}

const tableHtml = (header: string[], rows: string[][]) =>
  `<table><tr>${header.map((c) => `<th>${htmlEscape(c)}</th>`).join('')}</tr>${rows.map((row) => `<tr>${row.map((c) => `<td>${htmlEscape(c)}</td>`).join('')}</tr>`).join('')}</table>`;

/** convert_to_markdown_with_html_tables: each pipe table (header row, separator row, body rows) becomes one line of HTML. */
export function markdownTablesToHtml(markdown: string): string {
  if (!markdown) return markdown;
  const lines = markdown.match(/[^\r\n]*(?:\r\n|\n|\r|$)/g)?.filter((l) => l !== '') ?? [];
  const out: string[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i] ?? '';
    let header = splitRow(line);
    const separator = i + 1 < lines.length ? splitRow(lines[i + 1] ?? '') : undefined;
    if (!header || !separator || !isSeparator(separator)) {
      out.push(line);
      i += 1;
      continue;
    }
    const width = Math.max(header.length, separator.length);
    header = normalizeCells(header, width);
    const body: string[][] = [];
    let walker = i + 2;
    while (walker < lines.length) {
      const cells = splitRow(lines[walker] ?? '');
      if (!cells) break;
      body.push(normalizeCells(cells, width));
      walker += 1;
    }
    if (header.every((c) => c === '') && body.length > 0) header = body.shift() ?? header;
    const ending = /\r\n$/.test(line) ? '\r\n' : /\n$/.test(line) ? '\n' : /\r$/.test(line) ? '\r' : '';
    out.push(tableHtml(header, body) + ending);
    i = walker;
  }
  return out.join('');
}

// --- HTML tables -------------------------------------------------------------------------------

export type HtmlElement = { tag: string; attrs: Record<string, string>; children: Array<HtmlElement | string> };

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };

/** Python's html.unescape for the entities that occur in tables. */
export function unescapeHtml(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, name: string) => {
    if (name[0] === '#') return String.fromCodePoint(name[1] === 'x' || name[1] === 'X' ? Number.parseInt(name.slice(2), 16) : Number(name.slice(1)));
    return ENTITIES[name.toLowerCase()] ?? whole;
  });
}

const VOID = new Set(['br', 'hr', 'img', 'col', 'input', 'meta', 'link', 'wbr']);

/** Parses well-formed HTML (comments dropped, unclosed elements closed by an ancestor's end tag) into elements. */
export function parseHtml(html: string): HtmlElement {
  const root: HtmlElement = { tag: '#root', attrs: {}, children: [] };
  const stack = [root];
  const top = () => stack.at(-1) ?? root;
  const token = /<!--[\s\S]*?-->|<\/([a-zA-Z][\w-]*)\s*>|<([a-zA-Z][\w-]*)((?:\s+[^\s=/>]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>]+))?)*)\s*(\/?)>|([^<]+|<)/g;
  for (const match of html.matchAll(token)) {
    const [whole, close, open, attrText, selfClose, text] = match;
    if (whole.startsWith('<!--')) continue;
    if (text !== undefined) {
      const parent = top();
      const last = parent.children.at(-1);
      if (typeof last === 'string') parent.children[parent.children.length - 1] = last + unescapeHtml(text);
      else parent.children.push(unescapeHtml(text));
    } else if (close !== undefined) {
      const tag = close.toLowerCase();
      const at = stack.findLastIndex((e) => e.tag === tag);
      if (at > 0) stack.length = at;
    } else if (open !== undefined) {
      const attrs: Record<string, string> = {};
      for (const a of (attrText ?? '').matchAll(/([^\s=/>]+)(?:\s*=\s*("[^"]*"|'[^']*'|[^\s>]+))?/g)) {
        attrs[(a[1] ?? '').toLowerCase()] = unescapeHtml((a[2] ?? '').replace(/^["']|["']$/g, ''));
      }
      const element: HtmlElement = { tag: open.toLowerCase(), attrs, children: [] };
      top().children.push(element);
      if (!selfClose && !VOID.has(element.tag)) stack.push(element);
    }
  }
  return root;
}

/** Every `<table>` element, outermost first in document order (BeautifulSoup's find_all('table')). */
export function findTables(node: HtmlElement): HtmlElement[] {
  const out: HtmlElement[] = [];
  for (const child of node.children) {
    if (typeof child === 'string') continue;
    if (child.tag === 'table') out.push(child);
    out.push(...findTables(child));
  }
  return out;
}

/** `<thead>` and `<tbody>` dropped (their rows kept), `<th>` read as `<td>`, as the evaluator does before comparing. */
export function normaliseTable(element: HtmlElement): HtmlElement {
  const children: Array<HtmlElement | string> = [];
  for (const child of element.children) {
    if (typeof child === 'string') children.push(child);
    else if ((child.tag === 'thead' || child.tag === 'tbody') && Object.keys(child.attrs).length === 0) children.push(...normaliseTable(child).children);
    else children.push(normaliseTable(child));
  }
  return { tag: element.tag === 'th' ? 'td' : element.tag, attrs: element.attrs, children };
}

/** A cell's content as the evaluator tokenises it: its text, with any inner element as `<tag>…</tag>`. */
export function innerContent(element: HtmlElement): string {
  return element.children.map((c) => (typeof c === 'string' ? c : `<${c.tag}>${innerContent(c)}</${c.tag}>`)).join('');
}
