import { readFileSync } from 'node:fs';
import { extractDocument } from './src/tasks/engines/pdf/extract.ts';
const doc = await extractDocument(readFileSync(process.argv[2]!), { ocr: null });
const p = doc.pages[Number(process.argv[3] ?? 0)]!;
for (const b of p.blocks) console.log(b.label, b.level ?? '', JSON.stringify(b.bbox, (k, v) => typeof v === 'number' ? Math.round(v) : v), b.fontSize, b.text.slice(0, 50));
console.log(JSON.stringify(p.pictures));
process.exit(0);
