// quick: run only selected docs with dump
import { writeFileSync, mkdirSync } from 'node:fs';
import { runDocparse } from './src/tasks/engines/docparse.ts';
import { debianDocuments } from './bench/docparse/debian.ts';
import { generatedDocuments } from './bench/docparse/generated.ts';
import { scoreDocument } from './bench/docparse/score.ts';
import { scanPdf } from './test/helpers/scans.ts';
const which = process.argv.slice(2);
const corpus = [...await generatedDocuments(), ...(await debianDocuments()).documents];
mkdirSync('/tmp/dump', { recursive: true });
for (const [i, d0] of corpus.entries()) {
  for (const scan of [false, true]) {
    const key = `${i}${scan ? 's' : ''}`;
    if (!which.includes(key)) continue;
    const d = scan ? { ...d0, kind: 'scan' as const, pdf: await scanPdf(d0.pdf, 300) } : d0;
    const r = await runDocparse(d.pdf, { name: 'x', onPicture: async () => {} } as never);
    writeFileSync(`/tmp/dump/${key}.parsed.md`, r.markdown);
    writeFileSync(`/tmp/dump/${key}.truth.md`, d.pages.map((p) => p.markdown.join('\n\n')).join('\n\n<!-- page -->\n\n'));
    writeFileSync(`/tmp/dump/${key}.pdf`, d.pdf);
    const s = scoreDocument(d, r, { pagesPerSecond: 1, pdftotextPagesPerSecond: 1 });
    console.log(key, JSON.stringify({ perPage: s.perPage, cells: s.cells, headings: s.headings, ocr: s.ocr }));
  }
}
process.exit(0);
