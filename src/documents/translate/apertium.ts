// Apertium (https://wiki.apertium.org), run as Debian's `apertium` command with a language-pair
// package such as apertium-eng-spa. Modes are named by ISO 639-3 codes (`eng-spa`); we speak 639-1.
//
// A batch goes to one process as HTML, one <p data-i="N"> per segment, so segment boundaries survive
// (Apertium's HTML format keeps block elements and translates only their text) and the start-up cost
// is paid once per batch rather than once per segment.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { cacheSuccess, formatPair, TranslationError, UnsupportedLanguagePairError, type LanguagePair, type Translator } from './translator.ts';

export type ApertiumOptions = {
  /** The command to run; `apertium` on the PATH by default. */
  command?: string;
  /** How long one batch may run before it is stopped as a failure. */
  timeoutMs?: number;
  /** Where the per-batch input and output files go; the system's temp folder by default. */
  tmpDir?: string;
};

export const APERTIUM_TIMEOUT_MS = 120_000;

/** ISO 639-3 (Apertium's mode names) → ISO 639-1, for the languages Apertium has released pairs for. */
const ISO_639_1: Record<string, string> = {
  afr: 'af', ara: 'ar', arg: 'an', bel: 'be', bre: 'br', bul: 'bg', cat: 'ca', ces: 'cs', cym: 'cy',
  dan: 'da', deu: 'de', ell: 'el', eng: 'en', epo: 'eo', est: 'et', eus: 'eu', fin: 'fi', fra: 'fr',
  gle: 'ga', glg: 'gl', heb: 'he', hin: 'hi', hrv: 'hr', hun: 'hu', ind: 'id', isl: 'is', ita: 'it',
  jpn: 'ja', kaz: 'kk', kor: 'ko', lav: 'lv', lit: 'lt', mkd: 'mk', mlt: 'mt', msa: 'ms', nld: 'nl',
  nno: 'nn', nob: 'nb', oci: 'oc', pol: 'pl', por: 'pt', ron: 'ro', rus: 'ru', slk: 'sk', slv: 'sl',
  sme: 'se', spa: 'es', srp: 'sr', swe: 'sv', tat: 'tt', tur: 'tr', ukr: 'uk', urd: 'ur', zho: 'zh',
};
const KNOWN_639_1 = new Set(Object.values(ISO_639_1));

type Mode = { name: string; pair: LanguagePair };

export function createApertium(options: ApertiumOptions = {}): Translator {
  const command = options.command ?? 'apertium';
  const timeoutMs = options.timeoutMs ?? APERTIUM_TIMEOUT_MS;

  const modes = cacheSuccess(async (signal) => {
    const listing = await run(command, ['-l'], { timeoutMs, signal });
    return parseModes(listing.stdout);
  });

  return {
    engine: 'apertium',
    async languagePairs(signal) {
      return (await modes(signal)).map((m) => m.pair);
    },
    async translate(segments, pair, signal, hints) {
      if (segments.length === 0) return [];
      const available = await modes(signal);
      const mode = available.find((m) => m.pair.source === pair.source && m.pair.target === pair.target);
      if (!mode) throw new UnsupportedLanguagePairError('apertium', pair, available.map((m) => m.pair));

      const dir = await mkdtemp(path.join(options.tmpDir ?? tmpdir(), 'signet-apertium-'));
      try {
        const input = path.join(dir, 'in.html');
        const output = path.join(dir, 'out.html');
        await writeFile(input, toHtml(segments, hints?.markup === true));
        // Files, not pipes: the apertium wrapper reads /dev/stdin, which fails on a Node pipe
        // ("Could not detect input stream format") and still exits 0 with no output.
        // -u: no '*' before unknown words, which would otherwise end up in the translation.
        const result = await run(command, ['-u', '-f', 'html', mode.name, input, output], { timeoutMs, signal });
        if (result.code !== 0) {
          throw new TranslationError(`apertium ${mode.name} failed (exit code ${result.code}): ${tail(result.stderr)}`, { retryable: false });
        }
        const html = await readFile(output, 'utf8').catch(() => '');
        return fromHtml(html, segments.length, hints?.markup === true, () => `apertium ${mode.name} (${formatPair(pair)}) returned no translation for some segments: ${tail(result.stderr) || 'no error output'}`);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  };
}

/** Lines of `apertium -l` such as `  eng-spa`; variants (`spa-eng_US`) and unknown languages are left out. */
export function parseModes(listing: string): Mode[] {
  const modes: Mode[] = [];
  for (const line of listing.split('\n')) {
    const match = /^([a-z]{2,3})-([a-z]{2,3})$/.exec(line.trim());
    if (!match) continue;
    const source = toIso6391(match[1]!);
    const target = toIso6391(match[2]!);
    if (!source || !target || modes.some((m) => m.pair.source === source && m.pair.target === target)) continue;
    modes.push({ name: match[0], pair: { source, target } });
  }
  return modes;
}

function toIso6391(code: string): string | undefined {
  if (code.length === 2) return KNOWN_639_1.has(code) ? code : undefined;
  return ISO_639_1[code];
}

/** Segments as paragraphs; markup segments are HTML already (escaped text and their style tags). */
export function toHtml(segments: string[], markup = false): string {
  return segments.map((text, i) => `<p data-i="${i}">${markup ? text : escapeHtml(text)}</p>`).join('\n');
}

/** Splits Apertium's HTML back into segments by their data-i; every index must come back. */
export function fromHtml(html: string, count: number, markup: boolean, describeMissing: () => string): string[] {
  const texts = new Array<string | undefined>(count).fill(undefined);
  for (const match of html.matchAll(/<p\b[^>]*\bdata-i="(\d+)"[^>]*>([\s\S]*?)<\/p>/g)) {
    const i = Number(match[1]);
    // Plain segments had no markup, so any tag here is Apertium's own; markup segments come back as
    // HTML with their style tags, which the caller reads (translate/styles.ts).
    if (i < count) texts[i] = markup ? match[2]!.replace(/<(?!\/?span\b)[^>]*>/g, '') : unescapeHtml(match[2]!.replace(/<[^>]*>/g, ''));
  }
  const result: string[] = [];
  for (const text of texts) {
    if (text === undefined) throw new TranslationError(describeMissing(), { retryable: false });
    result.push(text);
  }
  return result;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] ?? c);
}

const NAMED_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };

function unescapeHtml(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (entity, name: string) => {
    if (name[0] === '#') {
      const code = name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : Number(name.slice(1));
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : entity;
    }
    return NAMED_ENTITIES[name.toLowerCase()] ?? entity;
  });
}

type RunResult = { code: number | null; stdout: string; stderr: string };

/**
 * Runs the command in its own process group, so stopping it (abort or time-out) also stops the
 * pipeline of lt-proc, cg-proc … that the apertium wrapper script starts. A stopped run settles only
 * once the processes are gone (their shared stderr closes), so a caller never leaves one behind.
 */
function run(command: string, args: string[], options: { timeoutMs: number; signal?: AbortSignal }): Promise<RunResult> {
  options.signal?.throwIfAborted();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    let stopped: unknown;
    let forceKill: NodeJS.Timeout | undefined;
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr = tail(stderr + chunk, 4000)));

    const signalGroup = (name: NodeJS.Signals) => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, name);
      } catch {
        // the group is already gone
      }
    };
    const stop = (reason: unknown) => {
      if (stopped !== undefined) return;
      stopped = reason;
      signalGroup('SIGTERM');
      forceKill = setTimeout(() => signalGroup('SIGKILL'), 2000);
    };
    const onAbort = () => stop(options.signal?.reason);
    const timer = setTimeout(
      () => stop(new TranslationError(`apertium did not finish within ${options.timeoutMs >= 1000 ? `${Math.round(options.timeoutMs / 1000)} s` : `${options.timeoutMs} ms`}; translate a shorter document or check the machine's load`, { retryable: true })),
      options.timeoutMs,
    );
    options.signal?.addEventListener('abort', onAbort, { once: true });
    const cleanUp = () => {
      clearTimeout(timer);
      clearTimeout(forceKill);
      options.signal?.removeEventListener('abort', onAbort);
    };

    child.on('error', (error: NodeJS.ErrnoException) => {
      cleanUp();
      const message =
        error.code === 'ENOENT'
          ? `the ${command} command was not found; install Debian's apertium package and a language pair (such as apertium-eng-spa), or set SIGNET_TRANSLATE_ENGINE to libretranslate or openai`
          : `${command} could not be started: ${error.message}`;
      reject(new TranslationError(message, { retryable: false, cause: error }));
    });
    child.on('close', (code) => {
      cleanUp();
      if (stopped !== undefined) reject(stopped);
      else resolve({ code, stdout, stderr });
    });
  });
}

function tail(text: string, max = 500): string {
  const trimmed = text.trim();
  return trimmed.length > max ? `…${trimmed.slice(-max)}` : trimmed;
}
