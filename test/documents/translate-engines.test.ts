import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createApertium, parseModes } from '../../src/documents/translate/apertium.ts';
import { createTranslator } from '../../src/documents/translate/create.ts';
import { backoffDelay, type Sleep } from '../../src/documents/translate/retry.ts';
import { NoTranslatorConfiguredError, TranslationError, UnsupportedLanguagePairError, type Translator } from '../../src/documents/translate/translator.ts';
import { skipUnlessAvailable } from '../helpers/services.ts';
import { startLibreTranslateServer, startOpenAiServer, type FakeServer } from '../helpers/translation-servers.ts';

const EN_ES = { source: 'en', target: 'es' };
const API_KEY = 'sk-test-0123456789abcdef';
const noSleep: Sleep = async () => {};

function recordingSleep(): { sleep: Sleep; waits: number[] } {
  const waits: number[] = [];
  return { waits, sleep: async (ms) => void waits.push(ms) };
}

function errorMatching(check: (error: TranslationError) => void) {
  return (error: unknown) => {
    assert.ok(error instanceof TranslationError, `expected a TranslationError, got ${String(error)}`);
    check(error);
    return true;
  };
}

type Engine = 'libretranslate' | 'openai';
const HTTP_ENGINES: Array<{ engine: Engine; start: () => Promise<FakeServer>; path: string }> = [
  { engine: 'libretranslate', start: () => startLibreTranslateServer(), path: '/translate' },
  { engine: 'openai', start: () => startOpenAiServer(), path: '/v1/chat/completions' },
];

for (const { engine, start, path: endpoint } of HTTP_ENGINES) {
  describe(`${engine} adapter`, () => {
    let server: FakeServer;
    before(async () => (server = await start()));
    after(() => server.close());

    const make = (sleep: Sleep = noSleep, timeoutMs?: number): Translator =>
      createTranslator({ engine, url: server.url, model: 'test-model', apiKey: API_KEY }, { http: { retry: { sleep }, timeoutMs } });
    const sent = () => server.requestsTo(endpoint);

    test('a multi-segment batch comes back as one translation per segment, in order', async () => {
      const before = sent().length;
      const result = await make().translate(['The house is big.', 'Second line', 'Third'], EN_ES);
      assert.deepEqual(result, ['[es] The house is big.', '[es] Second line', '[es] Third']);
      assert.equal(sent().length - before, 1, 'the whole batch goes in one request');
    });

    test('503 and 429 are retried with back-off (honouring Retry-After), then succeed', async () => {
      const { sleep, waits } = recordingSleep();
      server.troubleNext({ kind: 'status', status: 503 });
      server.troubleNext({ kind: 'status', status: 429, retryAfter: '2' });
      const before = sent().length;
      assert.deepEqual(await make(sleep).translate(['Hello'], EN_ES), ['[es] Hello']);
      assert.equal(sent().length - before, 3);
      assert.equal(waits.length, 2);
      assert.ok(waits[0]! >= 250 && waits[0]! <= 500, `first back-off ${waits[0]} is 500 ms with jitter`);
      assert.equal(waits[1], 2000, 'Retry-After: 2 means two seconds');
    });

    test('persistent failure ends in a TranslationError naming the engine and the URL, never the API key', async () => {
      // The service echoes the key back; the message must still not carry it.
      server.troubleNext({ kind: 'status', status: 503, body: JSON.stringify({ error: `overloaded (key ${API_KEY})` }) }, 4);
      const before = sent().length;
      await assert.rejects(
        make().translate(['Hello'], EN_ES),
        errorMatching((error) => {
          assert.match(error.message, new RegExp(`^${engine} at ${server.url}${endpoint} answered HTTP 503`));
          assert.match(error.message, /gave up after 4 attempts/);
          assert.ok(!error.message.includes(API_KEY), error.message);
          assert.equal(error.retryable, true);
        }),
      );
      assert.equal(sent().length - before, 4, 'four attempts in all');
    });

    test('a 400 is not retried', async () => {
      server.troubleNext({ kind: 'status', status: 400 });
      const before = sent().length;
      await assert.rejects(make().translate(['Hello'], EN_ES), errorMatching((error) => assert.equal(error.retryable, false)));
      assert.equal(sent().length - before, 1);
    });

    test('a stalled service times out, is retried, and ends in a TranslationError saying it did not answer', async () => {
      server.troubleNext({ kind: 'stall' }, 4);
      const started = Date.now();
      await assert.rejects(make(noSleep, 100).translate(['Hello'], EN_ES), errorMatching((error) => assert.match(error.message, /did not answer within 100 ms/)));
      assert.ok(Date.now() - started < 5000);
    });

    test("the caller's abort stops a request at once, without retrying", async () => {
      server.troubleNext({ kind: 'stall' });
      const before = sent().length;
      await assert.rejects(make().translate(['Hello'], EN_ES, AbortSignal.timeout(50)), (error: unknown) => !(error instanceof TranslationError));
      assert.equal(sent().length - before, 1);
    });

    test('an answer of the wrong shape is a TranslationError, not retried', async () => {
      server.troubleNext({ kind: 'wrong-shape' });
      await assert.rejects(make().translate(['Hello'], EN_ES), errorMatching((error) => assert.match(error.message, /unexpected shape/)));
    });
  });
}

describe('libretranslate specifics', () => {
  let server: FakeServer;
  before(async () => (server = await startLibreTranslateServer()));
  after(() => server.close());
  const make = () => createTranslator({ engine: 'libretranslate', url: `${server.url}/`, model: undefined, apiKey: API_KEY });

  test('the API key goes in the body as api_key, not in a header', async () => {
    await make().translate(['Hello'], EN_ES);
    const request = server.requestsTo('/translate').at(-1)!;
    assert.deepEqual(request.body, { q: ['Hello'], source: 'en', target: 'es', format: 'text', api_key: API_KEY });
    assert.equal(request.headers.authorization, undefined);
  });

  test('language pairs come from GET /languages, with "zh-Hans" as zh, and are cached after the first call', async () => {
    const translator = make();
    const pairs = await translator.languagePairs();
    assert.deepEqual(pairs, [
      { source: 'en', target: 'es' },
      { source: 'en', target: 'zh' },
      { source: 'es', target: 'en' },
      { source: 'zh', target: 'en' },
    ]);
    const before = server.requestsTo('/languages').length;
    await translator.languagePairs();
    await translator.translate(['Hi'], { source: 'en', target: 'zh' });
    assert.equal(server.requestsTo('/languages').length, before);
    assert.equal((server.requestsTo('/translate').at(-1)!.body as { target: string }).target, 'zh-Hans');
  });

  test('a pair the service does not list is an UnsupportedLanguagePairError naming what it offers', async () => {
    await assert.rejects(make().translate(['Hi'], { source: 'en', target: 'fr' }), (error: unknown) => error instanceof UnsupportedLanguagePairError && /en→es/.test(error.message));
  });

  test('fails because the service returned fewer translations than segments', async () => {
    server.troubleNext({ kind: 'drop-id' });
    await assert.rejects(make().translate(['a', 'b'], EN_ES), errorMatching((error) => assert.match(error.message, /returned 1 translations for 2 segments/)));
  });

  test('an unreachable service is a retryable TranslationError saying to check SIGNET_TRANSLATE_URL', async () => {
    const gone = await startLibreTranslateServer();
    await gone.close();
    const translator = createTranslator({ engine: 'libretranslate', url: gone.url, model: undefined, apiKey: undefined }, { http: { retry: { sleep: noSleep } } });
    await assert.rejects(translator.languagePairs(), errorMatching((error) => assert.match(error.message, /could not be reached.*SIGNET_TRANSLATE_URL/)));
  });
});

describe('openai specifics', () => {
  let server: FakeServer;
  before(async () => (server = await startOpenAiServer()));
  after(() => server.close());
  const make = (url = server.url) => createTranslator({ engine: 'openai', url, model: 'test-model', apiKey: API_KEY }, { http: { retry: { sleep: noSleep } } });
  const lastBody = () => server.requestsTo('/v1/chat/completions').at(-1)!.body as { model: string; temperature: number; messages: Array<{ content: string }> };

  test('the API key goes in the Authorization header, not in the body; model and temperature 0 are sent', async () => {
    await make().translate(['Hello'], EN_ES);
    const request = server.requestsTo('/v1/chat/completions').at(-1)!;
    assert.equal(request.headers.authorization, `Bearer ${API_KEY}`);
    assert.ok(!JSON.stringify(request.body).includes(API_KEY));
    assert.equal(lastBody().model, 'test-model');
    assert.equal(lastBody().temperature, 0);
    assert.match(lastBody().messages[0]!.content, /from English \(en\) into Spanish \(es\)/);
    assert.deepEqual(JSON.parse(lastBody().messages[1]!.content), [{ id: 0, text: 'Hello' }]);
  });

  test('a URL that already ends with /v1 is not doubled', async () => {
    assert.deepEqual(await make(`${server.url}/v1/`).translate(['Hi'], EN_ES), ['[es] Hi']);
  });

  test('an answer wrapped in a ```json fence is accepted', async () => {
    server.troubleNext({ kind: 'fence' });
    assert.deepEqual(await make().translate(['a', 'b'], EN_ES), ['[es] a', '[es] b']);
  });

  test('an answer missing an id is retried once, then succeeds', async () => {
    server.troubleNext({ kind: 'drop-id' });
    const before = server.requests.length;
    assert.deepEqual(await make().translate(['a', 'b', 'c'], EN_ES), ['[es] a', '[es] b', '[es] c']);
    assert.equal(server.requests.length - before, 2);
  });

  test('an answer missing an id twice is refused with a TranslationError', async () => {
    server.troubleNext({ kind: 'drop-id' }, 2);
    await assert.rejects(
      make().translate(['a', 'b', 'c'], EN_ES),
      errorMatching((error) => {
        assert.match(error.message, /no translation for id 2/);
        assert.equal(error.retryable, false);
      }),
    );
  });

  test('an answer with an id that was not sent is refused after one retry', async () => {
    server.troubleNext({ kind: 'extra-id' }, 2);
    await assert.rejects(make().translate(['a'], EN_ES), errorMatching((error) => assert.match(error.message, /unexpected id 8/)));
  });

  test('openai cannot list its language pairs', async () => {
    assert.equal(await make().languagePairs(), undefined);
  });
});

describe('createTranslator', () => {
  test('with no engine it throws NoTranslatorConfiguredError naming SIGNET_TRANSLATE_ENGINE', () => {
    assert.throws(
      () => createTranslator({ engine: undefined, url: undefined, model: undefined, apiKey: undefined }),
      (error: unknown) => error instanceof NoTranslatorConfiguredError && /set SIGNET_TRANSLATE_ENGINE to apertium, libretranslate or openai/.test(error.message),
    );
  });

  test('openai without a model throws NoTranslatorConfiguredError naming SIGNET_TRANSLATE_MODEL', () => {
    assert.throws(
      () => createTranslator({ engine: 'openai', url: 'http://127.0.0.1:1', model: undefined, apiKey: undefined }),
      (error: unknown) => error instanceof NoTranslatorConfiguredError && /SIGNET_TRANSLATE_MODEL/.test(error.message),
    );
  });
});

test('back-off doubles from baseMs with jitter and never exceeds maxMs, Retry-After included', () => {
  const options = { baseMs: 500, maxMs: 8000, random: () => 1 };
  assert.deepEqual([1, 2, 3, 4, 5, 6].map((n) => backoffDelay(n, undefined, options)), [500, 1000, 2000, 4000, 8000, 8000]);
  assert.equal(backoffDelay(1, undefined, { ...options, random: () => 0 }), 250);
  assert.equal(backoffDelay(1, 120_000, options), 8000);
});

test('apertium modes: only plain xxx-yyy lines with known languages become pairs', () => {
  const modes = parseModes('  eng-spa\n  spa-eng\n  spa-eng_US\n  eng-cat-valencia\n  xyz-eng\n');
  assert.deepEqual(modes, [
    { name: 'eng-spa', pair: { source: 'en', target: 'es' } },
    { name: 'spa-eng', pair: { source: 'es', target: 'en' } },
  ]);
});

function apertiumUnavailableReason(): string | undefined {
  const listing = spawnSync('apertium', ['-l'], { encoding: 'utf8' });
  if (listing.error) return `the apertium command is not installed (${listing.error.message})`;
  if (!/^\s*eng-spa\s*$/m.test(listing.stdout)) return 'the eng-spa mode is not installed (Debian package apertium-eng-spa)';
  return undefined;
}

describe('apertium engine (the real command)', { skip: skipUnlessAvailable('apertium', apertiumUnavailableReason()) }, () => {
  test('eng-spa translates "The house is big." into Spanish with "casa"', async () => {
    const [spanish] = await createApertium().translate(['The house is big.'], EN_ES);
    assert.match(spanish!, /casa/);
  });

  test('lists en→es among its pairs', async () => {
    const pairs = await createApertium().languagePairs();
    assert.ok(pairs?.some((p) => p.source === 'en' && p.target === 'es'));
  });

  test('multi-paragraph segments keep their boundaries, and markup-like text comes back as text', async () => {
    const result = await createApertium().translate(['The house is big.\n\nThe car is red.', 'The dog is small.', 'Zorblax & <b>"5 < 6"</b>'], EN_ES);
    assert.equal(result.length, 3);
    const [first, second] = result[0]!.split('\n\n');
    assert.match(first!, /casa/);
    assert.match(second!, /coche/);
    assert.match(result[1]!, /perro/);
    assert.ok(result[2]!.includes('Zorblax & <b>'), result[2]);
    assert.ok(!result.join('').includes('*'), 'unknown-word marks are left out');
  });

  test('a pair without a mode is an UnsupportedLanguagePairError', async () => {
    await assert.rejects(createApertium().translate(['Hi'], { source: 'en', target: 'zh' }), UnsupportedLanguagePairError);
  });

  test('an aborted signal stops apertium: the call rejects and no apertium process is left', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'signet-abort-test-'));
    try {
      const segments = Array.from({ length: 3000 }, (_, i) => `The house number ${i} is big and the red car is fast while the dog runs in the park.`);
      const controller = new AbortController();
      setTimeout(() => controller.abort(new Error('stopped by test')), 300);
      const started = Date.now();
      await assert.rejects(createApertium({ tmpDir: dir }).translate(segments, EN_ES, controller.signal), /stopped by test/);
      assert.ok(Date.now() - started < 3000, 'stopped well before the translation would have finished');
      const running = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' }).split('\n').filter((line) => line.includes(dir));
      assert.deepEqual(running, []);
      assert.deepEqual(readdirSync(dir), [], 'the batch files are removed');
      await assert.rejects(createApertium().translate(['Hi'], EN_ES, controller.signal), /stopped by test/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a batch running past its time-out is stopped and is a TranslationError', async () => {
    const segments = Array.from({ length: 3000 }, (_, i) => `The house number ${i} is big and the red car is fast.`);
    const translator = createApertium({ timeoutMs: 300 });
    await translator.languagePairs(); // the mode listing is not what should time out
    await assert.rejects(translator.translate(segments, EN_ES), errorMatching((error) => assert.match(error.message, /did not finish within/)));
  });
});

test('a missing apertium command is a TranslationError saying what to install', async () => {
  await assert.rejects(
    createApertium({ command: '/nonexistent/apertium' }).languagePairs(),
    errorMatching((error) => assert.match(error.message, /install Debian's apertium package/)),
  );
});
