// The bench's second truth (issue 41): docling's own published ground truth for the files of the
// `docling/` set — the DoclingDocument JSON files in docling's `tests/data/pdf/groundtruth/` and
// `tests/data/odf/groundtruth/` — rendered to this corpus's truth format (one `<!-- page N -->` section
// a page, by each item's `prov.page_no`), unchanged otherwise: no reading order, heading or table is
// corrected here (the corpus notes say where docling's truth is wrong). Data only: docling's files are
// read from a local clone and nothing of its code is used.
//
//   node bench/docparse/docling-truth.ts GIT_DIR [COMMIT]
//
// writes bench/docparse/public/docling/<id>.docling.md for every entry of the set whose manifest names a
// `second_truth`, from the JSON file it names.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PUBLIC_CORPUS } from './public-corpus.ts';

type Ref = { $ref: string };
type Prov = { page_no: number };
type Item = { self_ref: string; label: string; text?: string; level?: number; prov?: Prov[]; children?: Ref[]; captions?: Ref[]; footnotes?: Ref[]; content_layer?: string; enumerated?: boolean; marker?: string; data?: TableData; name?: string };
type TableCell = { text: string; start_row_offset_idx: number; end_row_offset_idx: number; start_col_offset_idx: number; end_col_offset_idx: number; column_header?: boolean };
type TableData = { table_cells: TableCell[]; num_rows: number; num_cols: number };
type DoclingJson = { body: Item; furniture: Item; texts: Item[]; tables: Item[]; pictures: Item[]; groups: Item[]; key_value_items?: Item[]; form_items?: Item[] };

const escapeHtml = (text: string) => text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] ?? c);

/**
 * A docling table as an HTML table, each cell once with its spans (the JSON's cells, not the Markdown
 * export's repeated text), laid on its grid as docling-core's `TableData.grid` and `export_to_html`
 * lay it: a position no cell covers (the JSON lists only the cells that were found, an empty one is
 * often left out) is an empty `<td>`, so the cells after it keep their columns.
 */
function tableHtml(data: TableData): string {
  const covered = (r: number, c: number) => data.table_cells.some((x) => x.start_row_offset_idx <= r && r < x.end_row_offset_idx && x.start_col_offset_idx <= c && c < x.end_col_offset_idx);
  const rows: string[] = [];
  for (let r = 0; r < data.num_rows; r += 1) {
    const tds: string[] = [];
    for (let c = 0; c < data.num_cols; c += 1) {
      const cell = data.table_cells.find((x) => x.start_row_offset_idx === r && x.start_col_offset_idx === c);
      if (!cell) {
        if (!covered(r, c)) tds.push('<td></td>');
        continue;
      }
      const colspan = cell.end_col_offset_idx - cell.start_col_offset_idx;
      const rowspan = cell.end_row_offset_idx - cell.start_row_offset_idx;
      const tag = cell.column_header ? 'th' : 'td';
      tds.push(`<${tag}${colspan > 1 ? ` colspan="${colspan}"` : ''}${rowspan > 1 ? ` rowspan="${rowspan}"` : ''}>${escapeHtml(cell.text.replace(/\s+/g, ' ').trim())}</${tag}>`);
    }
    rows.push(`<tr>${tds.join('')}</tr>`);
  }
  return ['<table>', ...rows, '</table>'].join('\n');
}

/** A pipe-table row's cells (docling's Markdown export: `| a | b |`, no escaped pipes in its tables). */
const pipeCells = (line: string) => line.trim().replace(/^\|/, '').replace(/\|$/, '').split('|').map((c) => c.trim());
const isPipeRow = (line: string) => line.trim().startsWith('|');
const isSeparator = (line: string) => pipeCells(line).every((c) => /^:?-+:?$/.test(c));

/**
 * A table of docling's Markdown export back as the JSON holds it: the export writes a spanning cell's
 * text in every position it covers, so a rectangle of one non-empty text (grown right, then down while
 * every position of the next row matches) is one cell with its spans; the first row is the header.
 */
export function pipeTableHtml(lines: string[]): string {
  const grid = lines.filter((l) => !isSeparator(l)).map(pipeCells);
  const taken = grid.map((row) => row.map(() => false));
  const rows = grid.map((row, r) => {
    const tds: string[] = [];
    for (let c = 0; c < row.length; c += 1) {
      if (taken[r]?.[c]) continue;
      const text = row[c] ?? '';
      let cols = 1;
      while (text !== '' && row[c + cols] === text && !taken[r]?.[c + cols]) cols += 1;
      let rowsDown = 1;
      while (text !== '' && grid[r + rowsDown] !== undefined && Array.from({ length: cols }, (_, k) => grid[r + rowsDown]?.[c + k]).every((t, k) => t === text && !taken[r + rowsDown]?.[c + k])) rowsDown += 1;
      for (let y = r; y < r + rowsDown; y += 1) {
        const row = taken[y];
        for (let x = c; x < c + cols; x += 1) if (row) row[x] = true;
      }
      const tag = r === 0 ? 'th' : 'td';
      tds.push(`<${tag}${cols > 1 ? ` colspan="${cols}"` : ''}${rowsDown > 1 ? ` rowspan="${rowsDown}"` : ''}>${escapeHtml(text)}</${tag}>`);
    }
    return `<tr>${tds.join('')}</tr>`;
  });
  return ['<table>', ...rows, '</table>'].join('\n');
}

/**
 * docling's Markdown export as the JSON would be rendered here: tables with their spans (above); a
 * picture's own data — right after its `<!-- image -->`, a table, or a one-line label and a table
 * (its classification, "Bar chart", and its chart data, which the JSON keeps in the picture's `meta`)
 * — left out, as a picture's words are left out of the JSON's rendering.
 */
export function doclingMarkdownTruth(markdown: string): string {
  const blocks = markdown.trim().split(/\n{2,}/);
  const isTable = (block: string | undefined) => {
    const lines = (block ?? '').split('\n');
    return lines.length >= 2 && lines.every(isPipeRow) && isSeparator(lines[1] ?? '');
  };
  const out: string[] = [];
  for (let i = 0; i < blocks.length; i += 1) {
    const block = blocks[i] ?? '';
    if (block.trim() === '<!-- image -->') {
      if (isTable(blocks[i + 1])) i += 1;
      else if (!(blocks[i + 1] ?? '').includes('\n') && isTable(blocks[i + 2])) i += 2;
      continue;
    }
    out.push(isTable(block) ? pipeTableHtml(block.split('\n')) : block);
  }
  return out.join('\n\n');
}

/** The JSON rendered page by page, the way docling's Markdown export renders it (furniture and pictures left out, captions kept). */
export function doclingPages(doc: DoclingJson): Map<number, string[]> {
  const byRef = (ref: string): Item | undefined => {
    const [, kind, index] = ref.split('/');
    const list = kind === 'texts' ? doc.texts : kind === 'tables' ? doc.tables : kind === 'pictures' ? doc.pictures : kind === 'groups' ? doc.groups : kind === 'key_value_items' ? doc.key_value_items : kind === 'form_items' ? doc.form_items : undefined;
    return list?.[Number(index)];
  };
  const pages = new Map<number, string[]>();
  const put = (item: Item, markdown: string) => {
    const page = item.prov?.[0]?.page_no ?? 1;
    pages.set(page, [...(pages.get(page) ?? []), markdown]);
  };
  const done = new Set<string>();
  const walk = (item: Item, inList: { enumerated: boolean; n: number } | undefined) => {
    if (done.has(item.self_ref)) return;
    done.add(item.self_ref);
    if (item.content_layer === 'furniture' || item.label === 'page_header' || item.label === 'page_footer') return;
    const text = (item.text ?? '').trim();
    const children = (item.children ?? []).map((c) => byRef(c.$ref)).filter((c): c is Item => c !== undefined);
    switch (item.label) {
      case 'title':
        put(item, `# ${text}`);
        break;
      case 'section_header':
        put(item, `${'#'.repeat(Math.min(6, (item.level ?? 1) + 1))} ${text}`);
        break;
      case 'list_item': {
        const marker = inList?.enumerated ? `${(inList.n += 1)}.` : '-';
        if (text !== '') put(item, `${marker} ${text}`);
        break;
      }
      case 'code':
        put(item, `\`\`\`\n${item.text ?? ''}\n\`\`\``);
        break;
      case 'formula':
        if (text !== '') put(item, `$$\n${text}\n$$`);
        break;
      case 'table':
      case 'document_index': {
        for (const caption of (item.captions ?? []).map((c) => byRef(c.$ref)).filter((c): c is Item => c !== undefined)) walk(caption, undefined);
        if (item.data && item.data.table_cells.length > 0) put(item, tableHtml(item.data));
        // A rich cell's lists, paragraphs and nested tables are the table's children: docling's exports
        // write them inside their cells (their words are in the cell's text), never again after the
        // table. Its footnotes (children too) follow it, as printed.
        const inside = (child: Item): void => {
          done.add(child.self_ref);
          for (const c of child.children ?? []) {
            const grand = byRef(c.$ref);
            if (grand) inside(grand);
          }
        };
        const footnotes = (item.footnotes ?? []).map((c) => byRef(c.$ref)).filter((c): c is Item => c !== undefined);
        children.filter((c) => !footnotes.includes(c)).forEach(inside);
        for (const footnote of footnotes) walk(footnote, undefined);
        return;
      }
      case 'inline': {
        // An inline group (a paragraph whose runs differ in style) is one paragraph, as docling's exports write it.
        const words = children.map((c) => (c.text ?? '').trim()).filter((t) => t !== '');
        for (const child of children) done.add(child.self_ref);
        if (words.length > 0) put({ ...item, prov: item.prov ?? children.find((c) => c.prov)?.prov }, words.join(' '));
        return;
      }
      case 'picture':
      case 'chart': {
        // A picture's words are part of its image; its captions are kept.
        for (const caption of (item.captions ?? []).map((c) => byRef(c.$ref)).filter((c): c is Item => c !== undefined)) walk(caption, undefined);
        for (const child of children) done.add(child.self_ref);
        return;
      }
      default:
        if (text !== '') put(item, text);
    }
    const list = item.label === 'list' || item.label === 'ordered_list' ? { enumerated: item.label === 'ordered_list' || children.some((c) => c.enumerated), n: 0 } : undefined;
    for (const child of children) walk(child, list ?? (item.label === 'list_item' ? undefined : inList));
  };
  walk(doc.body, undefined);
  return pages;
}

/** A per-page truth file: the pages docling has, and the ones it left empty as empty sections. */
export function doclingTruthMarkdown(doc: DoclingJson, pageCount: number, pageMap: number[] | undefined, whole: boolean, source: string): string {
  const pages = doclingPages(doc);
  const head = `<!-- docling's ground truth, rendered from ${source} by bench/docparse/docling-truth.ts; not corrected -->`;
  if (whole) return `${head}\n\n<!-- page 1 -->\n\n${[...pages.keys()].sort((a, b) => a - b).flatMap((n) => pages.get(n) ?? []).join('\n\n')}\n`;
  const parts = [head];
  for (let n = 1; n <= pageCount; n += 1) {
    const from = pageMap?.[n - 1] ?? n;
    parts.push(`<!-- page ${n} -->`, ...(pages.get(from) ?? []));
  }
  return `${parts.join('\n\n')}\n`;
}

type SecondTruth = { repo: string; path: string; commit: string; pages?: number[]; whole?: boolean };

if (import.meta.main) {
  const [gitDir, commit = 'HEAD'] = process.argv.slice(2);
  if (!gitDir) throw new Error('usage: node bench/docparse/docling-truth.ts GIT_DIR [COMMIT]');
  const manifestPath = path.join(PUBLIC_CORPUS, 'docling', 'manifest.json');
  const entries = JSON.parse(readFileSync(manifestPath, 'utf8')) as Array<{ id: string; pages: number; second_truth?: SecondTruth }>;
  for (const entry of entries) {
    const second = entry.second_truth;
    if (!second) continue;
    const text = execFileSync('git', ['--git-dir', gitDir, 'show', `${commit}:${second.path}`], { maxBuffer: 256 * 2 ** 20 }).toString('utf8');
    const source = `${second.repo} ${second.path} at ${second.commit.slice(0, 7)}`;
    // Where docling publishes only the Markdown (its JSON is too large for the stored clone), that file is the truth of the whole document,
    // its tables' spans and its pictures' data read back as the JSON holds them.
    const truth = second.path.endsWith('.md')
      ? `<!-- docling's ground truth, read from ${source} by bench/docparse/docling-truth.ts (doclingMarkdownTruth: spans and the picture's data as the JSON holds them); not corrected -->\n\n<!-- page 1 -->\n\n${doclingMarkdownTruth(text)}\n`
      : doclingTruthMarkdown(JSON.parse(text) as DoclingJson, entry.pages, second.pages, second.whole === true, source);
    writeFileSync(path.join(PUBLIC_CORPUS, 'docling', `${entry.id}.docling.md`), truth);
    process.stdout.write(`${entry.id}: ${second.path}\n`);
  }
}
