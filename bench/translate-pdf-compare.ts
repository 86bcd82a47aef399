// Before and after, per page, from the JSON files npm run bench:translate-pdf wrote:
//   node bench/translate-pdf-compare.ts before,before-zh after,after-redbook,after-amt,after-paper
// (labels joined by commas are one run measured in parts). Prints a Markdown table.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

type Row = { file: string; pair: string; sourcePage: number; overlapPlaces: number; overlappingWords: number; gutterCrossings: number; intoDrawings: number; belowMargin: number; smallestSize?: number; sourceSmallestSize?: number; belowFloor: number; blocks?: { total: number; present: number; kept?: number; missing: string[] }; class: string };
const results = path.join(path.dirname(fileURLToPath(import.meta.url)), 'results');
const load = (labels: string) => {
  const rows = new Map<string, Row>();
  for (const label of labels.split(',')) {
    const file = path.join(results, `translate-pdf-corpus-${label}.json`);
    if (!existsSync(file)) continue;
    for (const row of (JSON.parse(readFileSync(file, 'utf8')) as { pages: Row[] }).pages) rows.set(`${row.file} p${row.sourcePage} ${row.pair}`, row);
  }
  return rows;
};
const [before, after] = [load(process.argv[2] ?? 'before'), load(process.argv[3] ?? 'after')];
const cell = (r: Row | undefined) => (r ? `${r.overlappingWords} (${r.overlapPlaces}) · ${r.gutterCrossings} · ${r.intoDrawings} · ${r.belowMargin} · ${r.smallestSize?.toFixed(1) ?? '-'}/${r.sourceSmallestSize?.toFixed(1) ?? '-'} · ${r.belowFloor} · ${r.blocks ? `${r.blocks.present}/${r.blocks.total}${r.blocks.kept ? `+${r.blocks.kept}k` : ''}` : '-'}` : 'not measured');
console.log('| page | pair | class | before | after |\n|---|---|---|---|---|');
for (const key of new Set([...before.keys(), ...after.keys()])) {
  const r = after.get(key) ?? before.get(key)!;
  console.log(`| ${r.file} p${r.sourcePage} | ${r.pair} | ${r.class} | ${cell(before.get(key))} | ${cell(after.get(key))} |`);
}
const total = (rows: Map<string, Row>, keys: string[]) => {
  const list = keys.map((k) => rows.get(k)).filter((r): r is Row => r !== undefined);
  const sum = (f: (r: Row) => number) => list.reduce((n, r) => n + f(r), 0);
  return `${list.length} pages: overlapping words ${sum((r) => r.overlappingWords)} (${sum((r) => r.overlapPlaces)} places), gutter ${sum((r) => r.gutterCrossings)}, on drawings ${sum((r) => r.intoDrawings)}, below margin ${sum((r) => r.belowMargin)}, runs < 70 % ${sum((r) => r.belowFloor)}, pages clean (0 overlap, 0 gutter) ${list.filter((r) => r.overlappingWords === 0 && r.gutterCrossings === 0).length}`;
};
const both = [...before.keys()].filter((k) => after.has(k));
console.log(`\nEach cell: overlapping words (places) · gutter crossings · words on drawings · below margin · smallest size/source's · runs below 70 % · blocks translated (+kept as drawn).`);
console.log(`Pages measured in both runs — before: ${total(before, both)}\nafter: ${total(after, both)}`);
