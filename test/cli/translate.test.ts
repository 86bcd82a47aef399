// `signet translate` as a person runs it (issue 34): the real command in a child process, in an empty
// folder with no Signet data, on public pages of the translation corpus (bench/translate-pdf/corpus,
// manifest.json says where each comes from) — en→es by Debian's Apertium, zh→en by an
// OpenAI-compatible server on loopback answering from the corpus dictionary.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { PDFDocument } from 'pdf-lib';
import { runSignet, SIGNET_BIN, type CliResult } from '../helpers/cli.ts';
import { startDictionaryChatServer, type DictionaryServer } from '../helpers/dictionary-chat-server.ts';
import { ghostscriptUnavailableReason, popplerUnavailableReason } from '../helpers/poppler.ts';
import { skipUnlessAvailable } from '../helpers/services.ts';

const CORPUS = path.resolve(import.meta.dirname, '../../bench/translate-pdf/corpus');
const HANDBOOK = 'amt-handbook.pdf';
const CHINESE = 'debian-edu-zh.pdf';

function unavailable(): string | undefined {
  const apertium = spawnSync('apertium', ['-l'], { encoding: 'utf8' });
  if (apertium.error || !/^\s*eng-spa\s*$/m.test(apertium.stdout)) return 'apertium with the eng-spa mode is not installed';
  return ghostscriptUnavailableReason() ?? popplerUnavailableReason();
}

const folders: string[] = [];
after(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

function emptyFolder(...pdfs: string[]): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'signet-translate-'));
  folders.push(dir);
  for (const pdf of pdfs) copyFileSync(path.join(CORPUS, pdf), path.join(dir, pdf));
  return dir;
}

/** Settings any server command would stop at: translate needs none of them. */
function hostileSettings(dir: string): Record<string, string> {
  writeFileSync(path.join(dir, '.env'), 'SIGNET_BASE_URL=not a url\nSIGNET_DATABASE_URL=postgres://127.0.0.1:1/none\n');
  return { HOME: dir, SIGNET_DATA_DIR: path.join(dir, 'data'), SIGNET_BASE_URL: 'not a url', SIGNET_DATABASE_URL: 'postgres://127.0.0.1:1/none', SIGNET_LOG_LEVEL: 'nonsense' };
}

type Check = { overlapping_words: number; overlap_places: number; smallest_size?: number; source_smallest_size?: number; gutter_words: number; words_on_drawings: number; below_margin: number; runs_below_70_percent: number; missing_glyphs: number; pages_to_look_at: unknown[] };
type Summary = { files: Array<{ input: string; outputs?: string[]; from?: string; to?: string; engine?: string; pages?: number; check?: Check; error?: string }>; translated: number; failed: number };
const summaryOf = (result: CliResult): Summary => JSON.parse(result.stdout) as Summary;
const translate = (args: string[], cwd: string, env: Record<string, string>) => runSignet(['translate', ...args], { cwd, env });
const pageCount = async (file: string) => (await PDFDocument.load(readFileSync(file))).getPageCount();

describe('signet translate: the translation engine on local files, no server, no database', { skip: skipUnlessAvailable('signet translate on real pages', unavailable()) }, () => {
  let chat: DictionaryServer;
  before(async () => {
    chat = await startDictionaryChatServer(JSON.parse(readFileSync(path.join(CORPUS, 'zh-en.json'), 'utf8')) as Record<string, string>);
  });
  after(() => chat.close());

  test('"writes NAME.LANG.pdf and NAME.LANG.bilingual.pdf into --out and prints each file\'s layout check"; a missing file gets its reason, the others still run, exit 1', async () => {
    const dir = emptyFolder(HANDBOOK);
    const result = await translate([HANDBOOK, 'missing.pdf', '--to', 'es', '--out', 'out'], dir, hostileSettings(dir));
    assert.equal(result.code, 1, result.stderr);
    assert.deepEqual(result.stderr.split('\n').filter(Boolean), ['signet: missing.pdf: no such file']);
    const summary = summaryOf(result);
    assert.deepEqual([summary.translated, summary.failed], [1, 1]);
    const handbook = summary.files[0]!;
    assert.deepEqual(handbook.outputs, ['out/amt-handbook.es.pdf', 'out/amt-handbook.es.bilingual.pdf']);
    // --from left out: told from the text; --engine left out: Apertium.
    assert.deepEqual([handbook.from, handbook.to, handbook.engine, handbook.pages], ['en', 'es', 'apertium', 1]);
    assert.deepEqual(handbook.check, { overlapping_words: 0, overlap_places: 0, gutter_words: 0, words_on_drawings: 0, below_margin: 0, runs_below_70_percent: 0, missing_glyphs: 0, smallest_size: handbook.check!.smallest_size, source_smallest_size: 5.5, pages_to_look_at: [] });
    assert.equal(await pageCount(path.join(dir, 'out/amt-handbook.es.pdf')), 1);
    assert.equal(await pageCount(path.join(dir, 'out/amt-handbook.es.bilingual.pdf')), 2);
    const text = spawnSync('pdftotext', [path.join(dir, 'out/amt-handbook.es.pdf'), '-'], { encoding: 'utf8' }).stdout;
    assert.match(text, /\b(el|la|los|las|de)\b/, 'the page reads in Spanish');
    // Nothing else: no data dir, no partial files.
    assert.deepEqual(readdirSync(dir).sort(), ['.env', HANDBOOK, 'out'].sort());
    assert.deepEqual(readdirSync(path.join(dir, 'out')).sort(), ['amt-handbook.es.bilingual.pdf', 'amt-handbook.es.pdf']);
  });

  test('"--engine openai" takes SIGNET_TRANSLATE_URL and SIGNET_TRANSLATE_MODEL: a Chinese page zh→en, its language told from its script', async () => {
    const dir = emptyFolder(CHINESE);
    const result = await translate([CHINESE, '--to', 'en', '--engine', 'openai', '--json'], dir, { HOME: dir, SIGNET_TRANSLATE_URL: chat.url, SIGNET_TRANSLATE_MODEL: 'dictionary' });
    assert.equal(result.code, 0, result.stderr);
    const file = summaryOf(result).files[0]!;
    assert.deepEqual([file.from, file.to, file.engine], ['zh', 'en', 'openai']);
    assert.equal(file.check?.overlapping_words, 0);
    assert.equal(file.check?.missing_glyphs, 0);
    assert.ok(existsSync(path.join(dir, 'debian-edu-zh.en.pdf')) && existsSync(path.join(dir, 'debian-edu-zh.en.bilingual.pdf')), 'written beside the input');
  });

  test('wrong arguments exit 2 with one line and write nothing: no --to, an engine without its address, a glossary that is not JSON, --to a file', async () => {
    const dir = emptyFolder(HANDBOOK);
    writeFileSync(path.join(dir, 'glossary.json'), '{"aircraft": ');
    writeFileSync(path.join(dir, 'a-file'), 'x');
    const cases: Array<[string[], RegExp]> = [
      [[HANDBOOK], /required option '--to <lang>'/],
      [[HANDBOOK, '--to', 'spanish!'], /--to takes a language code/],
      [[HANDBOOK, '--to', 'es', '--engine', 'libretranslate'], /SIGNET_TRANSLATE_URL/],
      [[HANDBOOK, '--to', 'es', '--glossary', 'glossary.json'], /--glossary glossary\.json: The glossary is not valid JSON/],
      [[HANDBOOK, '--to', 'es', '--out', 'a-file'], /--out a-file is a file, not a folder/],
    ];
    for (const [args, message] of cases) {
      const result = await translate(args, dir, { HOME: dir });
      assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
      assert.match(result.stderr, message);
      assert.equal(result.stderr.trim().split('\n').length, 1);
    }
    assert.deepEqual(readdirSync(dir).sort(), ['a-file', 'glossary.json', HANDBOOK].sort());
  });
});

describe('signet translate on a terminal', { skip: skipUnlessAvailable('signet translate on a terminal', unavailable() ?? (spawnSync('script', ['--version']).error ? 'script (util-linux) is not installed' : undefined)) }, () => {
  test('"progress on a terminal": a line per file (reading, translating n/total pages, setting, checking), then the summary as a table with the layout check', () => {
    const dir = emptyFolder(HANDBOOK);
    const shown = spawnSync('script', ['-qec', `${JSON.stringify(process.execPath)} ${JSON.stringify(SIGNET_BIN)} translate ${HANDBOOK} --to es --from en --out out`, '/dev/null'], { cwd: dir, env: { PATH: process.env.PATH ?? '', HOME: dir, TERM: 'dumb' }, encoding: 'utf8', timeout: 300_000 });
    assert.equal(shown.status, 0, shown.stdout);
    const text = shown.stdout;
    assert.match(text, /amt-handbook\.pdf: translating 1\/1 pages\r/);
    assert.match(text, /amt-handbook\.pdf: checking the layout\r/);
    assert.match(text, /amt-handbook\.pdf: 1 page en→es in \d+\.\d s\r?\n/);
    assert.match(text, /input\s+pages\s+result\s+layout check/);
    assert.match(text, /amt-handbook\.pdf\s+1\s+out\/amt-handbook\.es\.pdf, out\/amt-handbook\.es\.bilingual\.pdf\s+clean/);
    assert.doesNotMatch(text, /^\{/m, 'no JSON on a terminal');
  });
});
