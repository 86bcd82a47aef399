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
type Item = { self_ref: string; label: string; text?: string; level?: number; prov?: Prov[]; children?: Ref[]; captions?: Ref[]; content_layer?: string; enumerated?: boolean; marker?: string; data?: TableData; name?: string };
type TableCell = { text: string; start_row_offset_idx: number; end_row_offset_idx: number; start_col_offset_idx: number; end_col_offset_idx: number; column_header?: boolean };
type TableData = { table_cells: TableCell[]; num_rows: number; num_cols: number };
type DoclingJson = { body: Item; furniture: Item; texts: Item[]; tables: Item[]; pictures: Item[]; groups: Item[]; key_value_items?: Item[]; form_items?: Item[] };

const escapeHtml = (text: string) => text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] ?? c);

/** A docling table as an HTML table, each cell once with its spans (the JSON's cells, not the Markdown export's repeated text). */
function tableHtml(data: TableData): string {
  const rows: string[] = [];
  for (let r = 0; r < data.num_rows; r += 1) {
    const cells = data.table_cells.filter((c) => c.start_row_offset_idx === r).sort((a, b) => a.start_col_offset_idx - b.start_col_offset_idx);
    const tds = cells.map((c) => {
      const colspan = c.end_col_offset_idx - c.start_col_offset_idx;
      const rowspan = c.end_row_offset_idx - c.start_row_offset_idx;
      const tag = c.column_header ? 'th' : 'td';
      return `<${tag}${colspan > 1 ? ` colspan="${colspan}"` : ''}${rowspan > 1 ? ` rowspan="${rowspan}"` : ''}>${escapeHtml(c.text.replace(/\s+/g, ' ').trim())}</${tag}>`;
    });
    rows.push(`<tr>${tds.join('')}</tr>`);
  }
  return ['<table>', ...rows, '</table>'].join('\n');
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
        break;
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
    // Where docling publishes only the Markdown (its JSON is too large for the stored clone), that file is the truth of the whole document.
    const truth = second.path.endsWith('.md')
      ? `<!-- docling's ground truth, copied from ${source}; not corrected -->\n\n<!-- page 1 -->\n\n${text.trim()}\n`
      : doclingTruthMarkdown(JSON.parse(text) as DoclingJson, entry.pages, second.pages, second.whole === true, source);
    writeFileSync(path.join(PUBLIC_CORPUS, 'docling', `${entry.id}.docling.md`), truth);
    process.stdout.write(`${entry.id}: ${second.path}\n`);
  }
}
