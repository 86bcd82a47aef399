// The public corpus of issue 25: PDFs from other projects' test suites, each set a folder under
// bench/docparse/public/ with a manifest.json, the PDFs and their truth Markdown (one `<!-- page N -->`
// line before each page's truth). Read and checked here, for the benchmark and for its test.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { markdownPages } from './score.ts';

export const PUBLIC_CORPUS = path.join(import.meta.dirname, 'public');

export const DOCUMENT_CLASSES = ['multi-column', 'paper', 'report', 'manual', 'table', 'toc', 'cjk', 'rtl', 'form', 'scan'] as const;
export type DocumentClass = (typeof DOCUMENT_CLASSES)[number];

const entrySchema = z.object({
  id: z.string().regex(/^[\w.+-]+$/),
  file: z.string().regex(/^[\w.+-]+\.pdf$/),
  // Where the PDF comes from: a file of a public repository (at a commit), of a Debian package, or an address.
  source: z.union([
    z.object({ repo: z.string().min(1), path: z.string().min(1), commit: z.string().min(1).optional() }),
    z.object({ debian: z.string().min(1), path: z.string().min(1), version: z.string().optional() }),
    z.object({ url: z.string().url() }),
  ]),
  license: z.string().min(1),
  pages: z.number().int().positive(),
  class: z.enum(DOCUMENT_CLASSES),
  tex: z.boolean(),
  truth: z.string().min(1),
  // "page": the whole page is truth (NID, TEDS, MHS); "tables": only its tables are (TEDS only).
  scope: z.enum(['page', 'tables']),
  notes: z.string().optional(),
  // A second truth not written here (issue 41): another project's published ground truth for the same file,
  // rendered to `<id>.docling.md` by bench/docparse/docling-truth.ts. `pages`: which of the source's pages
  // each of this file's pages is; `whole`: the truth has no pages and is the whole document's.
  second_truth: z.object({ repo: z.string().min(1), path: z.string().min(1), commit: z.string().min(1), pages: z.array(z.number().int().positive()).optional(), whole: z.boolean().optional() }).optional(),
});
export type ManifestEntry = z.infer<typeof entrySchema>;

export type PublicDocument = ManifestEntry & {
  set: string;
  pdfPath: string;
  /** The truth Markdown of each page, by page number (1-based, within this file). */
  truthPages: Map<number, string>;
  /** The second truth's pages (`second_truth`); with `whole`, page 1 is the whole document's truth. */
  secondTruthPages?: Map<number, string>;
};

/** The second truth's file beside the set's own: `<id>.docling.md`. */
export const secondTruthFile = (dir: string, id: string) => path.join(dir, `${id}.docling.md`);

/** Every set folder (one holding a manifest.json), in name order. */
export function corpusSets(root = PUBLIC_CORPUS): string[] {
  if (!existsSync(root)) return [];
  return readdirSync(root)
    .filter((name) => statSync(path.join(root, name)).isDirectory() && existsSync(path.join(root, name, 'manifest.json')))
    .sort();
}

/** What is wrong with one set's manifest and files (empty when nothing is). */
export function manifestProblems(root: string, set: string): string[] {
  const dir = path.join(root, set);
  const problems: string[] = [];
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
  } catch (error) {
    return [`${set}/manifest.json: not JSON (${(error as Error).message})`];
  }
  const parsed = z.array(z.unknown()).safeParse(raw);
  if (!parsed.success) return [`${set}/manifest.json: not a list of entries`];
  const seen = new Set<string>();
  parsed.data.forEach((item, index) => {
    const entry = entrySchema.safeParse(item);
    if (!entry.success) {
      problems.push(`${set}/manifest.json entry ${index}: ${entry.error.issues.map((i) => `${i.path.join('.')} ${i.message}`).join('; ')}`);
      return;
    }
    const { id, file, pages, scope } = entry.data;
    if (seen.has(id)) problems.push(`${set}/${id}: id listed twice`);
    seen.add(id);
    if (!existsSync(path.join(dir, file))) problems.push(`${set}/${id}: ${file} does not exist`);
    const truthFile = path.join(dir, `${id}.md`);
    if (!existsSync(truthFile)) {
      problems.push(`${set}/${id}: ${id}.md does not exist`);
      return;
    }
    const truth = markdownPages(readFileSync(truthFile, 'utf8'));
    for (const n of truth.keys()) if (n < 1 || n > pages) problems.push(`${set}/${id}: truth has <!-- page ${n} --> but the file has ${pages} pages`);
    if (scope === 'page') for (let n = 1; n <= pages; n += 1) if (!truth.has(n)) problems.push(`${set}/${id}: no <!-- page ${n} --> in ${id}.md`);
    if (scope === 'tables' && ![...truth.values()].some((md) => /<table|^\|.*\|\s*$/m.test(md))) problems.push(`${set}/${id}: scope "tables" but ${id}.md has no table`);
    if (entry.data.second_truth && !existsSync(secondTruthFile(dir, id))) problems.push(`${set}/${id}: second_truth given but ${id}.docling.md does not exist (node bench/docparse/docling-truth.ts)`);
  });
  return problems;
}

/**
 * The documents of every set (or of `sets`), with their truth read. A malformed set throws, or with
 * `onMalformed` is reported there and left out (the benchmark runs the others and says why).
 */
export function publicDocuments(options: { root?: string; sets?: string[]; onMalformed?: (set: string, problems: string[]) => void } = {}): PublicDocument[] {
  const root = options.root ?? PUBLIC_CORPUS;
  const documents: PublicDocument[] = [];
  for (const set of corpusSets(root)) {
    if (options.sets && !options.sets.includes(set)) continue;
    const problems = manifestProblems(root, set);
    if (problems.length > 0 && options.onMalformed) {
      options.onMalformed(set, problems);
      continue;
    }
    if (problems.length > 0) throw new Error(`the corpus set ${set} is malformed:\n${problems.join('\n')}`);
    const entries = z.array(entrySchema).parse(JSON.parse(readFileSync(path.join(root, set, 'manifest.json'), 'utf8')));
    for (const entry of entries) {
      const truthPages = markdownPages(readFileSync(path.join(root, set, `${entry.id}.md`), 'utf8'));
      const second = entry.second_truth ? markdownPages(readFileSync(secondTruthFile(path.join(root, set), entry.id), 'utf8')) : undefined;
      documents.push({ ...entry, set, pdfPath: path.join(root, set, entry.file), truthPages, ...(second ? { secondTruthPages: second } : {}) });
    }
  }
  return documents;
}
