// One suite, every ObjectStore: the folder store, S3 against s3rver, and (with SIGNET_TEST_S3_URL) a real
// S3 endpoint — s3rver never checks the secret key or real S3's edge cases, which is why that block exists.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { after, before, describe, test } from 'node:test';
import { createFsObjectStore } from '../../src/storage/fs.ts';
import { SettingsError } from '../../src/config/settings.ts';
import { countedBody, ObjectNotFoundError, StorageUnavailableError, type ObjectStore } from '../../src/storage/object-store.ts';
import { openObjectStore, parseStorageUrl, type StorageSettings } from '../../src/storage/open.ts';
import { startS3 } from '../helpers/s3.ts';

type Subject = { store: ObjectStore; prefix: string; dispose(): Promise<void> };

const MB = 1024 * 1024;

/** A body arriving in chunks, as an upload does. */
function streamOf(bytes: Buffer, chunkSize = 64 * 1024): Readable {
  const chunks: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += chunkSize) chunks.push(bytes.subarray(at, at + chunkSize));
  return Readable.from(chunks, { objectMode: false });
}

/** A body whose source fails after `bytes` bytes, as a dropped upload does. */
function breaksOffAfter(bytes: number): Readable {
  return Readable.from(
    (async function* () {
      for (let sent = 0; sent < bytes; sent += MB) yield randomBytes(Math.min(MB, bytes - sent));
      throw new Error('the upload broke off');
    })(),
    { objectMode: false },
  );
}

async function read(store: ObjectStore, key: string, range?: { start: number; end?: number }): Promise<Buffer> {
  const { body } = await store.get(key, range);
  return Buffer.concat(await body.toArray());
}

/** Size and content type of an object; the body is not needed, so it is let go ("read it or destroy it"). */
async function describeObject(store: ObjectStore, key: string): Promise<{ size: number; contentType?: string }> {
  const { body, ...rest } = await store.get(key);
  body.destroy();
  return rest;
}

async function putMany(store: ObjectStore, keys: string[]): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < keys.length) await store.put(keys[next++]!, Buffer.from('x'));
  };
  await Promise.all(Array.from({ length: 32 }, worker));
}

/** Fails unless promise rejects with StorageUnavailableError within 5 s (measured, not slept). */
async function rejectsUnavailableQuickly(promise: Promise<unknown>): Promise<void> {
  const started = performance.now();
  await assert.rejects(promise, StorageUnavailableError);
  const elapsed = performance.now() - started;
  assert.ok(elapsed < 5_000, `took ${Math.round(elapsed)} ms`);
}

function objectStoreSuite(name: string, open: () => Promise<Subject>, skip: string | false = false): void {
  describe(name, { skip }, () => {
    let subject: Subject;
    let store: ObjectStore;
    const key = (name: string) => `${subject.prefix}${name}`;
    before(async () => {
      subject = await open();
      store = subject.store;
    });
    after(() => subject?.dispose());

    test('"put streams body into key; resolves with the byte count": a streamed body comes back byte for byte', async () => {
      const bytes = randomBytes(300 * 1024 + 7);
      assert.deepEqual(await store.put(key('streamed.bin'), streamOf(bytes)), { size: bytes.length });
      const got = await store.get(key('streamed.bin'));
      assert.equal(got.size, bytes.length);
      assert.ok(Buffer.concat(await got.body.toArray()).equals(bytes));
    });

    for (const [label, size] of [['5 MB', 5 * MB], ['6 MB (more than one S3 part)', 6 * MB]] as const) {
      test(`a ${label} streamed body round-trips`, async () => {
        const bytes = randomBytes(size);
        assert.deepEqual(await store.put(key(`large-${size}.bin`), streamOf(bytes)), { size });
        assert.ok((await read(store, key(`large-${size}.bin`))).equals(bytes));
      });
    }

    test('an empty body is an object of 0 bytes', async () => {
      assert.deepEqual(await store.put(key('empty.bin'), new Uint8Array(0)), { size: 0 });
      assert.deepEqual(await store.put(key('empty-stream.bin'), streamOf(Buffer.alloc(0))), { size: 0 });
      assert.equal((await describeObject(store, key('empty.bin'))).size, 0);
      assert.equal((await read(store, key('empty-stream.bin'))).length, 0);
    });

    test('"a byte range (inclusive end, like HTTP Range)": get returns those bytes and the whole size', async () => {
      const bytes = Buffer.from('0123456789abcdefghij');
      await store.put(key('range.txt'), bytes);
      const cases: Array<[{ start: number; end?: number }, string]> = [
        [{ start: 1, end: 4 }, '1234'],
        [{ start: 10, end: 10 }, 'a'],
        [{ start: 15 }, 'fghij'],
        [{ start: 18, end: 1000 }, 'ij'], // an end past the object is cut to its last byte
      ];
      for (const [range, expected] of cases) {
        const got = await store.get(key('range.txt'), range);
        assert.equal(got.size, bytes.length, 'size is the whole object');
        assert.equal(Buffer.concat(await got.body.toArray()).toString(), expected, JSON.stringify(range));
      }
    });

    test('a range starting past the end fails with RangeError', async () => {
      await store.put(key('short.txt'), Buffer.from('abc'));
      await assert.rejects(store.get(key('short.txt'), { start: 3 }), RangeError);
      await assert.rejects(store.get(key('short.txt'), { start: 2, end: 1 }), RangeError);
      await store.put(key('nothing.txt'), new Uint8Array(0));
      await assert.rejects(store.get(key('nothing.txt'), { start: 0 }), RangeError);
    });

    test('the content type given to put comes back from get; without one it is application/octet-stream', async () => {
      await store.put(key('doc.pdf'), Buffer.from('%PDF-1.7'), { contentType: 'application/pdf' });
      await store.put(key('plain.bin'), Buffer.from('x'));
      assert.equal((await describeObject(store, key('doc.pdf'))).contentType, 'application/pdf');
      assert.equal((await describeObject(store, key('plain.bin'))).contentType, 'application/octet-stream');
    });

    test('a put over an existing key replaces the object and its content type', async () => {
      await store.put(key('over.txt'), Buffer.from('first version'), { contentType: 'text/plain' });
      await store.put(key('over.txt'), Buffer.from('second'), { contentType: 'text/markdown' });
      const got = await store.get(key('over.txt'));
      assert.equal(got.contentType, 'text/markdown');
      assert.equal(got.size, 6);
      assert.equal(Buffer.concat(await got.body.toArray()).toString(), 'second');
    });

    test('"a missing object surfaces as ObjectNotFoundError"', async () => {
      await assert.rejects(store.get(key('never-written.bin')), ObjectNotFoundError);
      await assert.rejects(store.get(key('never/written/deep.bin')), ObjectNotFoundError);
    });

    test('delete removes the object; "an object that does not exist is not an error"', async () => {
      await store.put(key('gone.txt'), Buffer.from('x'));
      await store.delete(key('gone.txt'));
      await assert.rejects(store.get(key('gone.txt')), ObjectNotFoundError);
      await store.delete(key('gone.txt'));
      await store.delete(key('never/existed.txt'));
    });

    test('deleteMany of 1,500 keys (more than one batch of 1000) leaves none; missing keys are not an error', async () => {
      const keys = Array.from({ length: 1500 }, (_, i) => key(`many/${String(i).padStart(4, '0')}.txt`));
      await putMany(store, keys);
      assert.equal((await store.list(key('many/'))).length, 1500);
      await store.deleteMany([...keys, key('many/missing.txt')]);
      assert.deepEqual(await store.list(key('many/')), []);
    });

    test('list returns the keys under a prefix, sorted', async () => {
      for (const name of ['list/b.txt', 'list/a/1.txt', 'listing.txt', 'other/list.txt']) await store.put(key(name), Buffer.from('x'));
      assert.deepEqual(await store.list(key('list/')), [key('list/a/1.txt'), key('list/b.txt')]);
      assert.deepEqual(await store.list(key('list')), [key('list/a/1.txt'), key('list/b.txt'), key('listing.txt')]);
      assert.deepEqual(await store.list(key('nothing-here/')), []);
    });

    for (const [label, bytes] of [['in its first part', 1000], ['after the first S3 part', 6 * MB]] as const) {
      test(`"on failure nothing is left under key": a body that breaks off ${label}`, async () => {
        await assert.rejects(store.put(key(`broken-${bytes}.bin`), breaksOffAfter(bytes)), /broke off/);
        await assert.rejects(store.get(key(`broken-${bytes}.bin`)), ObjectNotFoundError);
        assert.deepEqual(await store.list(key(`broken-${bytes}`)), []);
      });
    }

    test('a failed put over an existing object leaves the old one', async () => {
      await store.put(key('kept.txt'), Buffer.from('old'), { contentType: 'text/plain' });
      await assert.rejects(store.put(key('kept.txt'), breaksOffAfter(1000), { contentType: 'text/html' }), /broke off/);
      const got = await store.get(key('kept.txt'));
      assert.equal(got.contentType, 'text/plain');
      assert.equal(Buffer.concat(await got.body.toArray()).toString(), 'old');
    });

    test('an aborted put fails with AbortError and leaves nothing under key', async () => {
      const controller = new AbortController();
      const body = new Readable({ read() {} });
      body.push(randomBytes(1000));
      const put = store.put(key('aborted.bin'), body, { signal: controller.signal });
      controller.abort();
      await assert.rejects(put, { name: 'AbortError' });
      await assert.rejects(store.put(key('aborted.bin'), Buffer.from('x'), { signal: controller.signal }), { name: 'AbortError' });
      await assert.rejects(store.get(key('aborted.bin')), ObjectNotFoundError);
    });

    const BAD_KEYS = ['', '/tasks/a.pdf', 'tasks/../secret', '../x', 'tasks//a.pdf', 'tasks/', 'tasks/./a.pdf', 'a b.pdf', 'tâche.pdf', 'a~b', 'a\\b', 'x'.repeat(1025)];
    test('"validate keys (no .., no leading /, only [A-Za-z0-9._/-])": bad keys are refused with a plain Error', async () => {
      for (const bad of BAD_KEYS) {
        const isPlainError = (error: unknown) => error instanceof Error && error.constructor === Error;
        await assert.rejects(store.put(bad, Buffer.from('x')), isPlainError, `put ${JSON.stringify(bad)}`);
        await assert.rejects(store.get(bad), isPlainError, `get ${JSON.stringify(bad)}`);
        await assert.rejects(store.delete(bad), isPlainError, `delete ${JSON.stringify(bad)}`);
        await assert.rejects(store.deleteMany([key('fine.txt'), bad]), isPlainError, `deleteMany ${JSON.stringify(bad)}`);
      }
    });

    test('ping resolves when the store can be reached', async () => {
      await store.ping();
    });
  });
}

// ---- the folder store -------------------------------------------------------------------------

async function folderSubject(): Promise<Subject & { root: string }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'signet-objects-'));
  const root = path.join(dir, 'objects');
  return { root, store: createFsObjectStore(root), prefix: 'tasks/', dispose: () => rm(dir, { recursive: true, force: true }) };
}

objectStoreSuite('ObjectStore on the file system', folderSubject);

describe('the file system store', () => {
  test('"directories 0700, files 0600", and no temp file is left after a put or a failed put', async () => {
    const { root, store, dispose } = await folderSubject();
    await store.put('tasks/t1/source.pdf', Buffer.from('%PDF'));
    await assert.rejects(store.put('tasks/t1/broken.pdf', breaksOffAfter(1000)));
    assert.equal((await stat(path.join(root, 'tasks', 't1'))).mode & 0o777, 0o700);
    assert.equal((await stat(path.join(root, 'tasks', 't1', 'source.pdf'))).mode & 0o777, 0o600);
    assert.deepEqual(await readdir(path.join(root, 'tasks', 't1')), ['source.pdf', 'source.pdf~meta.json']);
    await dispose();
  });

  test('deleting the last object of a task removes its emptied folders', async () => {
    const { root, store, dispose } = await folderSubject();
    await store.put('tasks/t1/a.pdf', Buffer.from('a'));
    await store.deleteMany(['tasks/t1/a.pdf']);
    assert.deepEqual(await readdir(root), []);
    await dispose();
  });

  test('"ping checks the root folder exists and is writable (create it if missing)"', async () => {
    const { root, store, dispose } = await folderSubject();
    await store.ping();
    assert.ok((await stat(root)).isDirectory());
    await dispose();
  });

  test('fails because the root folder cannot be created: ping answers StorageUnavailableError', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'signet-objects-'));
    await writeFile(path.join(dir, 'a-file'), 'not a folder');
    const store = createFsObjectStore(path.join(dir, 'a-file', 'objects'));
    await assert.rejects(store.ping(), StorageUnavailableError);
    await rm(dir, { recursive: true, force: true });
  });

  test('a missing root folder (an unmounted volume) is StorageUnavailableError, not ObjectNotFoundError', async () => {
    const { store, dispose } = await folderSubject();
    await assert.rejects(store.get('tasks/t1/source.pdf'), StorageUnavailableError);
    await dispose();
  });
});

describe('countedBody (what put reports when it fails)', () => {
  test('fails because the store failed: the body\'s failure() stays empty, so the store\'s error is reported', async () => {
    const counted = countedBody(streamOf(randomBytes(1000), 100), undefined);
    const full = new Writable({ write: (_chunk, _encoding, done) => done(Object.assign(new Error('disk full'), { code: 'ENOSPC' })) });
    await assert.rejects(pipeline(counted.stream, full), { code: 'ENOSPC' });
    assert.equal(counted.failure(), undefined);
  });

  test('fails because the body broke off: failure() is the body\'s own error', async () => {
    const counted = countedBody(breaksOffAfter(1000), undefined);
    await assert.rejects(pipeline(counted.stream, new Writable({ write: (_chunk, _encoding, done) => done() })), /broke off/);
    assert.match(String(counted.failure()), /broke off/);
  });
});

// ---- S3 against s3rver ------------------------------------------------------------------------

async function s3rverSubject(): Promise<Subject> {
  const s3 = await startS3();
  const store = openObjectStore(parseStorageUrl(s3.url));
  return { store, prefix: 'tasks/', dispose: async () => (await store.close(), await s3.dispose()) };
}

objectStoreSuite('ObjectStore on S3 (s3rver)', s3rverSubject);

describe('S3 when the store cannot be reached', () => {
  test('"store unreachable … surfaces as StorageUnavailableError" within seconds, and works again after a restart', async () => {
    const s3 = await startS3();
    const store = openObjectStore(parseStorageUrl(s3.url));
    await store.put('tasks/t1/source.pdf', Buffer.from('%PDF'));
    assert.deepEqual(await s3.listKeys(), ['tasks/t1/source.pdf']);

    await s3.stop();
    await rejectsUnavailableQuickly(store.ping());
    await rejectsUnavailableQuickly(store.put('tasks/t1/result.pdf', streamOf(randomBytes(1000))));
    await rejectsUnavailableQuickly(store.get('tasks/t1/source.pdf'));
    await rejectsUnavailableQuickly(store.deleteMany(['tasks/t1/source.pdf']));

    await s3.restart();
    await store.ping();
    assert.equal((await read(store, 'tasks/t1/source.pdf')).toString(), '%PDF');
    await store.put('tasks/t1/result.pdf', Buffer.from('done'));
    await store.deleteMany(['tasks/t1/source.pdf', 'tasks/t1/result.pdf']);
    assert.deepEqual(await s3.listKeys(), []);
    await store.close();
    await s3.dispose();
  });

  test('fails because the bucket does not exist: ping answers StorageUnavailableError', async () => {
    const s3 = await startS3();
    const store = openObjectStore(parseStorageUrl(s3.url.replace('s3://signet-test', 's3://no-such-bucket')));
    await assert.rejects(store.ping(), /bucket does not exist/);
    await store.close();
    await s3.dispose();
  });
});

// ---- SIGNET_STORAGE_URL --------------------------------------------------------------------------

describe('SIGNET_STORAGE_URL', () => {
  const GOOD: Array<[string, StorageSettings]> = [
    ['file:/srv/signet/objects', { kind: 'file', root: '/srv/signet/objects' }],
    ['file:///srv/signet/objects', { kind: 'file', root: '/srv/signet/objects' }],
    ['file:data/objects', { kind: 'file', root: path.resolve('data/objects') }],
    ['s3://signet-docs?endpoint=http://127.0.0.1:9000&region=eu-west-1', { kind: 's3', bucket: 'signet-docs', endpoint: 'http://127.0.0.1:9000', region: 'eu-west-1', forcePathStyle: true }],
    ['s3://signet.docs?forcePathStyle=false', { kind: 's3', bucket: 'signet.docs', endpoint: undefined, region: undefined, forcePathStyle: false }],
  ];
  for (const [url, expected] of GOOD) {
    test(`"file:PATH and s3://BUCKET?endpoint=URL&region=R&forcePathStyle=true": ${url}`, () => {
      assert.deepEqual(parseStorageUrl(url), expected);
    });
  }

  const BAD: Array<[string, RegExp]> = [
    ['ftp://files.example/objects', /expected file:PATH or s3:\/\//],
    ['file:', /needs a folder/],
    ['s3://Signet_Docs', /not an S3 bucket name/],
    ['s3://signet-docs/some/path', /nothing after the bucket name/],
    ['s3://signet-docs?endpoint=127.0.0.1:9000', /endpoint must be an http\(s\) URL/],
    ['s3://signet-docs?regoin=eu-west-1', /unknown parameter "regoin"/],
    ['s3://signet-docs?forcePathStyle=yes', /true or false/],
    ['s3://KEY:SECRET@signet-docs', /AWS_ACCESS_KEY_ID/],
  ];
  for (const [url, message] of BAD) {
    test(`a wrong value stops the start with one line naming the variable: ${url}`, () => {
      assert.throws(
        () => parseStorageUrl(url),
        (error: unknown) => error instanceof SettingsError && error.variable === 'SIGNET_STORAGE_URL' && message.test(error.message),
      );
    });
  }
});

// ---- a real S3 endpoint (optional, even in CI) ------------------------------------------------

const conformanceUrl = process.env.SIGNET_TEST_S3_URL;
if (!conformanceUrl) process.stderr.write('# skipped S3 conformance tests: set SIGNET_TEST_S3_URL=s3://BUCKET?endpoint=…&region=… (and AWS credentials) to run them\n');
objectStoreSuite(
  'ObjectStore on a real S3 endpoint (SIGNET_TEST_S3_URL)',
  async () => {
    const store = openObjectStore(parseStorageUrl(conformanceUrl!));
    // Everything this run writes lives under one fresh prefix and is removed afterwards.
    const prefix = `signet-conformance/${randomUUID()}/`;
    return { store, prefix, dispose: async () => (await store.deleteMany(await store.list(prefix)), await store.close()) };
  },
  conformanceUrl ? false : 'SIGNET_TEST_S3_URL is not set',
);
