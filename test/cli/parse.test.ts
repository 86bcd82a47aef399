// `signet parse` as a person runs it: the real command in a child process, in an empty folder with no
// Signet data, on public PDFs nobody here wrote (test/fixtures/public/README.md).
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { runSignet, SIGNET_BIN, type CliResult } from '../helpers/cli.ts';
import { skipUnlessAvailable } from '../helpers/services.ts';

const PUBLIC = path.resolve(import.meta.dirname, '../fixtures/public');
const PAPER_PAGE = '2305.03393v1-pg9.pdf';
const FIGURES = 'picture_classification.pdf';
const SCAN = 'ocr_test.pdf';
const ENCRYPTED = 'issue6010_1.pdf';
const LONG = 'multi_page.pdf';

const tesseractMissing = spawnSync('tesseract', ['--version']).error ? 'tesseract is not installed' : undefined;

const folders: string[] = [];
after(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

/** A new, empty working folder holding copies of the named public PDFs. */
function emptyFolder(...pdfs: string[]): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'signet-parse-'));
  folders.push(dir);
  for (const pdf of pdfs) copyFileSync(path.join(PUBLIC, pdf), path.join(dir, pdf));
  return dir;
}

/**
 * Settings that would stop any command that reads them (a base URL that is no URL, a database that
 * cannot be reached, a data dir that must not appear), also in a `.env` beside the files: parse
 * needs none of them.
 */
function hostileSettings(dir: string): Record<string, string> {
  writeFileSync(path.join(dir, '.env'), 'SIGNET_BASE_URL=not a url\nSIGNET_DATABASE_URL=postgres://127.0.0.1:1/none\n');
  return { HOME: dir, SIGNET_DATA_DIR: path.join(dir, 'data'), SIGNET_BASE_URL: 'not a url', SIGNET_DATABASE_URL: 'postgres://127.0.0.1:1/none', SIGNET_LOG_LEVEL: 'nonsense' };
}

const parse = (args: string[], cwd: string, env: Record<string, string> = { HOME: cwd }) => runSignet(['parse', ...args], { cwd, env });

type Summary = { files: Array<{ input: string; outputs?: string[]; pictures?: string[]; pages?: number; ocr_pages?: number; seconds?: number; notes?: string[]; error?: string }>; parsed: number; failed: number };
const summaryOf = (result: CliResult): Summary => JSON.parse(result.stdout) as Summary;

const stderrLines = (result: CliResult) => result.stderr.split('\n').filter(Boolean);

/** Every file under `dir`, relative, sorted. */
function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)))
    .sort();
}

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** The Markdown's image links, each resolved against the Markdown file's folder. */
function imageLinks(markdownFile: string): string[] {
  const markdown = readFileSync(markdownFile, 'utf8');
  return [...markdown.matchAll(/!\[[^\]]*\]\(([^)\s]+)\)/g)].map((m) => path.join(path.dirname(markdownFile), decodeURIComponent(m[1]!)));
}

describe('signet parse: the parsing engine on local files, no server, no database, no data dir', () => {
  test('writes NAME.md, NAME.json and NAME/pictures/*.png into a new --out for each good file; a non-PDF and a missing file get their one-line reason on stderr, the others still run, exit 1', async () => {
    const dir = emptyFolder(PAPER_PAGE, FIGURES);
    writeFileSync(path.join(dir, 'notes.txt'), 'not a PDF, just some notes\n');
    const result = await parse([FIGURES, 'notes.txt', 'missing.pdf', PAPER_PAGE, '--out', 'out/new'], dir, hostileSettings(dir));

    assert.equal(result.code, 1, result.stderr);
    // Not on a terminal: no progress lines, only each failure's reason.
    assert.deepEqual(stderrLines(result), ['signet: notes.txt: The file is not a PDF (no %PDF- header in its first 1024 bytes).', 'signet: missing.pdf: no such file']);
    const summary = summaryOf(result);
    assert.deepEqual(
      summary.files.map((f) => [f.input, f.error === undefined ? 'parsed' : 'failed']),
      [[FIGURES, 'parsed'], ['notes.txt', 'failed'], ['missing.pdf', 'failed'], [PAPER_PAGE, 'parsed']],
    );
    assert.deepEqual([summary.parsed, summary.failed], [2, 2]);

    const figures = summary.files[0]!;
    assert.deepEqual(figures.outputs, ['out/new/picture_classification.md', 'out/new/picture_classification.json']);
    assert.deepEqual(figures.pictures, ['out/new/picture_classification/pictures/page-1-1.png', 'out/new/picture_classification/pictures/page-2-1.png']);
    assert.equal(figures.pages, 2);
    assert.equal(figures.ocr_pages, 0);
    assert.ok(typeof figures.seconds === 'number' && figures.seconds > 0);
    assert.deepEqual(figures.notes, []);
    assert.equal(summary.files[3]!.pages, 1);

    assert.deepEqual(filesUnder(path.join(dir, 'out')), [
      'new/2305.03393v1-pg9.json',
      'new/2305.03393v1-pg9.md',
      'new/picture_classification.json',
      'new/picture_classification.md',
      'new/picture_classification/pictures/page-1-1.png',
      'new/picture_classification/pictures/page-2-1.png',
    ]);
    // No data dir, no database: the folder holds what it held and the results.
    assert.deepEqual(readdirSync(dir).sort(), ['.env', PAPER_PAGE, 'notes.txt', 'out', FIGURES].sort());

    const markdownFile = path.join(dir, 'out/new/picture_classification.md');
    const markdown = readFileSync(markdownFile, 'utf8');
    assert.match(markdown, /^# Figures Example$/m);
    assert.match(markdown, /!\[Figure 1: This is an example image\.\]\(picture_classification\/pictures\/page-1-1\.png\)/);
    const links = imageLinks(markdownFile);
    assert.equal(links.length, 2);
    for (const link of links) assert.deepEqual(readFileSync(link).subarray(0, 8), PNG, `${link} is a PNG the Markdown links to`);

    const json = JSON.parse(readFileSync(path.join(dir, 'out/new/picture_classification.json'), 'utf8')) as { schema_name: string; name: string; pictures: Array<{ image: { uri: string } }> };
    assert.equal(json.schema_name, 'DoclingDocument');
    assert.equal(json.name, 'picture_classification');
    assert.deepEqual(json.pictures.map((p) => p.image.uri), ['picture_classification/pictures/page-1-1.png', 'picture_classification/pictures/page-2-1.png']);
    assert.match(readFileSync(path.join(dir, 'out/new/2305.03393v1-pg9.md'), 'utf8'), /Hyper Parameter Optimization/);
  });

  test('--format json writes NAME.json (and the pictures it names) only; without --out the results go beside the input', async () => {
    const dir = emptyFolder();
    mkdirSync(path.join(dir, 'papers'));
    copyFileSync(path.join(PUBLIC, FIGURES), path.join(dir, 'papers', FIGURES));
    const result = await parse([path.join('papers', FIGURES), '--format', 'json'], dir);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stderr, '', 'on success, not on a terminal: stderr stays empty');
    assert.deepEqual(summaryOf(result).files[0]!.outputs, ['papers/picture_classification.json']);
    assert.deepEqual(filesUnder(path.join(dir, 'papers')), [
      'picture_classification.json',
      FIGURES,
      'picture_classification/pictures/page-1-1.png',
      'picture_classification/pictures/page-2-1.png',
    ]);
  });

  test('issue 40: "signet parse --format md,json,html,text" — --format html,text writes NAME.html (its pictures\' links resolve to the files written) and NAME.txt only', async () => {
    const dir = emptyFolder(FIGURES);
    const result = await parse([FIGURES, '--format', 'html,text', '--out', 'out'], dir);
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(summaryOf(result).files[0]!.outputs, ['out/picture_classification.html', 'out/picture_classification.txt']);
    assert.deepEqual(filesUnder(path.join(dir, 'out')), ['picture_classification.html', 'picture_classification.txt', 'picture_classification/pictures/page-1-1.png', 'picture_classification/pictures/page-2-1.png']);
    const html = readFileSync(path.join(dir, 'out/picture_classification.html'), 'utf8');
    assert.match(html, /^<!DOCTYPE html>/);
    const sources = [...html.matchAll(/<img src="([^"]+)"/g)].map((m) => path.join(dir, 'out', decodeURIComponent(m[1]!)));
    assert.equal(sources.length, 2);
    for (const source of sources) assert.deepEqual(readFileSync(source).subarray(0, 8), PNG, `${source} is the picture`);
    const text = readFileSync(path.join(dir, 'out/picture_classification.txt'), 'utf8');
    assert.match(text, /^Figures Example$/m, 'the title as a line of text, no #');
    assert.match(text, /^Figure 1: This is an example image\.$/m);
  });

  test('--no-pictures renders no picture: NAME.md only, with each figure\'s caption kept as text', async () => {
    const dir = emptyFolder();
    copyFileSync(path.join(PUBLIC, FIGURES), path.join(dir, FIGURES));
    const result = await parse([FIGURES, '--format', 'md', '--no-pictures'], dir);
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(summaryOf(result).files[0]!.outputs, ['picture_classification.md']);
    assert.deepEqual(filesUnder(dir), ['picture_classification.md', FIGURES]);
    const markdown = readFileSync(path.join(dir, 'picture_classification.md'), 'utf8');
    assert.doesNotMatch(markdown, /!\[/);
    assert.match(markdown, /Figure 1/);
  });

  test('a file that fails (encrypted, damaged, a folder) leaves nothing written — not even the --out folder it would have created — and says why', async () => {
    const dir = emptyFolder(ENCRYPTED);
    // A real PDF cut short, as an interrupted download leaves it.
    writeFileSync(path.join(dir, 'cut-short.pdf'), readFileSync(path.join(PUBLIC, LONG)).subarray(0, 20_000));
    mkdirSync(path.join(dir, 'folder.pdf'));
    const result = await parse([ENCRYPTED, 'cut-short.pdf', 'folder.pdf', '--out', 'results/here'], dir);
    assert.equal(result.code, 1);
    const lines = stderrLines(result);
    assert.equal(lines.length, 3, result.stderr);
    assert.match(lines[0]!, /^signet: issue6010_1\.pdf: The PDF is protected by a password; remove the password .* and parse it again\.$/);
    assert.match(lines[1]!, /^signet: cut-short\.pdf: The PDF is damaged and cannot be read/);
    assert.equal(lines[2], 'signet: folder.pdf: a folder, not a PDF file');
    assert.deepEqual([summaryOf(result).parsed, summaryOf(result).failed], [0, 3]);
    assert.ok(!existsSync(path.join(dir, 'results')), 'no --out folder is left behind for files that all failed');
    assert.deepEqual(readdirSync(dir).sort(), ['cut-short.pdf', 'folder.pdf', ENCRYPTED].sort());
  });

  test('wrong arguments exit 2 with one line on stderr before anything is read or written', async () => {
    const dir = emptyFolder(SCAN);
    const cases: Array<[string[], RegExp]> = [
      [[SCAN, '--format', 'md,docx'], /--format takes md, json, html and text, one or several joined by commas \(not "md,docx"\)/],
      [[SCAN, '--ocr', 'sometimes'], /'--ocr <mode>' argument 'sometimes' is invalid\. Allowed choices are auto, off, force/],
      [[SCAN, '--lang', 'eng chi'], /--lang takes tesseract language names joined by \+/],
      [[SCAN, '--lang', 'eng', '--ocr', 'off'], /--ocr off turns OCR off/],
      [[], /missing required argument 'files'/],
      [[SCAN, '--out', SCAN], /--out ocr_test\.pdf is a file, not a folder/],
      [[SCAN, '--threads', '0'], /--threads: expected a whole number of reader processes from 1 to 64/],
    ];
    const results = await Promise.all(cases.map(([args]) => parse(args.includes('--out') ? args : [...args, '--out', 'out'], dir)));
    for (const [i, [args, message]] of cases.entries()) {
      const result = results[i]!;
      assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
      assert.equal(result.stdout, '');
      assert.equal(stderrLines(result).length, 1, result.stderr);
      assert.match(result.stderr, message);
    }
    assert.deepEqual(readdirSync(dir), [SCAN], 'nothing written');
  });

  test('interrupted (Ctrl-C) after a picture was cut: exit 130, and nothing of that file written — not the picture, not the --out folder', { skip: skipUnlessAvailable('tesseract', tesseractMissing) }, async () => {
    const dir = emptyFolder(FIGURES);
    // Page 2 read by OCR takes seconds: the interrupt comes after page 1's picture is cut, while page 2 runs.
    const child = spawn(process.execPath, [SIGNET_BIN, 'parse', FIGURES, '--ocr', 'force', '--out', 'out'], { cwd: dir, env: { PATH: process.env.PATH ?? '', HOME: dir }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const pictureCut = () => filesUnder(path.join(dir, 'out')).some((file) => file.endsWith(path.join('pictures', 'page-1-1.png')));
    for (let waited = 0; !pictureCut() && child.exitCode === null && waited < 120_000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(child.exitCode, null, `still running when interrupted: ${stderr}`);
    assert.deepEqual(readdirSync(path.join(dir, 'out')).length, 1, 'the picture waits in a staging folder');
    assert.ok(!existsSync(path.join(dir, 'out', 'picture_classification.md')));
    child.kill('SIGINT');
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    assert.equal(code, 130, stderr);
    assert.match(stderr, /^signet: interrupted; 0 of 1 files were parsed/m);
    assert.ok(!existsSync(path.join(dir, 'out')), `nothing written: ${filesUnder(dir).join(', ')}`);
  });
});

describe('signet parse --ocr and --lang: which pages tesseract reads', { skip: skipUnlessAvailable('tesseract', tesseractMissing) }, () => {
  test('--ocr auto (the default) reads the scanned page by OCR and leaves the page with a text layer alone', async () => {
    const dir = emptyFolder(SCAN, PAPER_PAGE);
    const result = await parse([SCAN, PAPER_PAGE, '--format', 'md'], dir);
    assert.equal(result.code, 0, result.stderr);
    const [scan, paper] = summaryOf(result).files;
    assert.deepEqual([scan!.ocr_pages, paper!.ocr_pages], [1, 0]);
    assert.match(readFileSync(path.join(dir, 'ocr_test.md'), 'utf8'), /Docling bundles PDF document conversion to JSON and Markdown/);
  });

  test('--ocr force --lang eng reads every page by OCR, a page with a text layer too', async () => {
    const dir = emptyFolder(PAPER_PAGE);
    const result = await parse([PAPER_PAGE, '--ocr', 'force', '--lang', 'eng'], dir);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(summaryOf(result).files[0]!.ocr_pages, 1);
    const json = JSON.parse(readFileSync(path.join(dir, '2305.03393v1-pg9.json'), 'utf8')) as { texts: Array<{ text: string }> };
    assert.match(json.texts.map((t) => t.text).join(' '), /Optimization/);
  });

  test('--ocr off never runs OCR: the scan stays a picture, linked from the Markdown, and a note says its text is missing', async () => {
    const dir = emptyFolder(SCAN);
    const result = await parse([SCAN, '--ocr', 'off'], dir);
    assert.equal(result.code, 0, result.stderr);
    const scan = summaryOf(result).files[0]!;
    assert.equal(scan.ocr_pages, 0);
    assert.deepEqual(scan.notes, ['Page 1 has no text layer (it is an image, probably a scan) and OCR was turned off, so its text is missing from the result.']);
    const links = imageLinks(path.join(dir, 'ocr_test.md'));
    assert.deepEqual(links, [path.join(dir, 'ocr_test/pictures/page-1-1.png')]);
    assert.deepEqual(readFileSync(links[0]!).subarray(0, 8), PNG);
  });

  test('--lang with a language tesseract has no data for is refused with exit 2, naming the installed ones', async () => {
    const dir = emptyFolder(SCAN);
    const result = await parse([SCAN, '--lang', 'eng+xyz_nope'], dir);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /^signet: --lang: tesseract has no data for "xyz_nope" \(installed: [^)]*\beng\b[^)]*\); install it \(Debian: apt install tesseract-ocr-xyz-nope\) or choose from those\n$/);
    assert.deepEqual(readdirSync(dir), [SCAN]);
  });
});

describe('signet parse on a terminal', { skip: skipUnlessAvailable('script (util-linux)', spawnSync('script', ['--version']).error ? 'script is not installed' : undefined) }, () => {
  test('a progress line per file on stderr (done/total pages), then the summary as a table', () => {
    const dir = emptyFolder(FIGURES);
    // script(1) gives the command a terminal; its output is what the terminal showed.
    const shown = spawnSync('script', ['-qec', `${JSON.stringify(process.execPath)} ${JSON.stringify(SIGNET_BIN)} parse ${FIGURES} missing.pdf --out out`, '/dev/null'], { cwd: dir, env: { PATH: process.env.PATH ?? '', HOME: dir, TERM: 'dumb' }, encoding: 'utf8', timeout: 120_000 });
    assert.equal(shown.status, 1, shown.stdout);
    const text = shown.stdout;
    assert.match(text, /picture_classification\.pdf: 1\/2 pages\r/);
    assert.match(text, /picture_classification\.pdf: 2 pages in \d+\.\d s\r?\n/);
    assert.match(text, /signet: missing\.pdf: no such file/);
    assert.match(text, /input\s+pages\s+seconds\s+result/);
    assert.match(text, /picture_classification\.pdf\s+2\s+[\d.]+\s+out\/picture_classification\.md, out\/picture_classification\.json, 2 pictures in out\/picture_classification\/pictures/);
    assert.doesNotMatch(text, /^\{/m, 'no JSON on a terminal');
  });
});
