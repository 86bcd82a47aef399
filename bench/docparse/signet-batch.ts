// `node bench/docparse/signet-batch.ts OUT_DIR FILE.pdf …`: what `signet parse FILE.pdf … --out OUT_DIR
// --format md` will do, until bin/signet.js has `parse` — every file through the engine as a parsing
// task runs it (pictures cut and not kept, OCR for pages without text), NAME.md written into OUT_DIR,
// a file that fails reported on stderr and the others still run (exit 1 if any failed). The public
// benchmark times this whole process, its start included.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
// The one place the public benchmark imports the engine (moving to src/documents/).
import { runDocparse } from '../../src/tasks/engines/docparse.ts';
import { killSpareReader, spareReaderPids } from '../../src/tasks/engines/pdf/reader-client.ts';

const [outDir, ...files] = process.argv.slice(2);
if (!outDir || files.length === 0) {
  process.stderr.write('usage: node bench/docparse/signet-batch.ts OUT_DIR FILE.pdf …\n');
  process.exit(2);
}
let failed = 0;
for (const file of files) {
  const name = path.basename(file, path.extname(file));
  try {
    // Passed through to extractDocument, as src/tasks/run-task.ts passes its options.
    const options = { name, onPicture: async () => {} };
    const result = await runDocparse(readFileSync(file), options);
    writeFileSync(path.join(outDir, `${name}.md`), result.markdown);
  } catch (error) {
    failed += 1;
    process.stderr.write(`${file}: ${(error as Error).message.split('\n')[0]}\n`);
  }
}
// The idle reader kept for a next document is stopped and reaped before exit, so that its CPU time
// counts in this process's children (the benchmark reads it from /proc), as a finished task's would.
const readers = spareReaderPids();
killSpareReader();
for (let waited = 0; waited < 2000 && readers.some((pid) => existsSync(`/proc/${pid}`)); waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
process.exit(failed > 0 ? 1 : 0);
