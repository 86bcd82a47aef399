import { readFileSync } from 'node:fs';
import { openPdf, readPage } from './src/documents/pdf/reader.ts';
for (const f of process.argv.slice(2)) {
  const open = await openPdf(new Uint8Array(readFileSync('bench/translate-pdf/corpus/' + f)));
  for (let n = 1; n <= open.pages; n++) {
    const page = readPage(open, n);
    const counts = new Map<string, number>();
    for (const r of page.runs) counts.set(`${r.color}${r.bold ? ' b' : ''}${r.italic ? ' i' : ''}`, (counts.get(`${r.color}${r.bold ? ' b' : ''}${r.italic ? ' i' : ''}`) ?? 0) + r.text.length);
    console.log(f, n, [...counts].sort((a, b) => b[1] - a[1]).slice(0, 8).map(([k, v]) => `${k}:${v}`).join('  '));
  }
  open.close();
}
