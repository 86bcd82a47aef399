// Objects as files in one folder (default `<data dir>/objects`): key `tasks/<id>/source.pdf` is the file
// `<root>/tasks/<id>/source.pdf`, its content type a small `~meta.json` file beside it.
import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm, rmdir, stat, unlink, writeFile, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  assertValidKey,
  assertValidPrefix,
  assertValidRange,
  countedBody,
  DEFAULT_CONTENT_TYPE,
  ObjectNotFoundError,
  StorageUnavailableError,
  systemErrorCodes,
  type ObjectStore,
} from './object-store.ts';

// Only the service account may read uploaded documents.
const FOLDER_MODE = 0o700;
const FILE_MODE = 0o600;

// "~" is not allowed in keys, so a name holding it is never an object: temp files, sidecars and the
// ping probe can never collide with a key, and list() skips them.
const OWN_MARK = '~';
const metaFileOf = (file: string) => `${file}~meta.json`;
const tempFileOf = (file: string) => `${file}~${randomBytes(8).toString('hex')}.tmp`;

// The disk is full, read-only, gone or not ours: every request would fail the same way until someone acts.
const UNAVAILABLE_CODES = new Set(['EIO', 'ENOSPC', 'EDQUOT', 'EROFS', 'EACCES', 'EPERM', 'EMFILE', 'ENFILE', 'ESTALE', 'ETIMEDOUT', 'ENOTCONN', 'EHOSTDOWN']);
// The key names no file: nothing there, or a folder, or a path through a file.
const MISSING_CODES = new Set(['ENOENT', 'ENOTDIR', 'EISDIR']);

// Enough parallel unlinks to be quick without running out of file descriptors.
const DELETE_CONCURRENCY = 16;

/** An ObjectStore on the local file system, rooted at `root` (an absolute folder, created on first use). */
export function createFsObjectStore(root: string): ObjectStore {
  const fileOf = (key: string) => path.join(root, ...key.split('/'));

  /** StorageUnavailableError for a failure that means the folder cannot be used; anything else unchanged. */
  const unavailableOr = (error: unknown): unknown => {
    const code = systemErrorCodes(error).find((c) => UNAVAILABLE_CODES.has(c));
    if (code === undefined) return error;
    return new StorageUnavailableError(`the storage folder ${root} cannot be used (${code}); check the disk and its permissions`, { cause: error });
  };

  /** A missing file is ObjectNotFoundError, unless the whole folder is gone (an unmounted volume is an outage, not a 404). */
  const notFoundOr = async (error: unknown, key: string): Promise<unknown> => {
    if (!systemErrorCodes(error).some((c) => MISSING_CODES.has(c))) return unavailableOr(error);
    const rootExists = await stat(root).then((s) => s.isDirectory(), () => false);
    if (!rootExists) return new StorageUnavailableError(`the storage folder ${root} is missing; check that its volume is mounted`, { cause: error });
    return new ObjectNotFoundError(`no object at ${key}`, { cause: error });
  };

  /** Removes the folders a delete emptied, up to the root, so finished tasks leave no empty folders behind. */
  const pruneEmptyFolders = async (folder: string): Promise<void> => {
    for (let current = folder; current.startsWith(root + path.sep); current = path.dirname(current)) {
      try {
        await rmdir(current);
      } catch {
        return; // not empty (or already gone): the normal way to stop
      }
    }
  };

  const deleteOne = async (key: string): Promise<void> => {
    const file = fileOf(key);
    try {
      // The object file goes first: once it is gone the object is gone, whatever happens to the sidecar.
      await unlink(file).catch((error: unknown) => {
        if (!systemErrorCodes(error).some((c) => MISSING_CODES.has(c))) throw error;
      });
      await rm(metaFileOf(file), { force: true });
    } catch (error) {
      throw unavailableOr(error);
    }
    await pruneEmptyFolders(path.dirname(file));
  };

  return {
    async put(key, body, options = {}) {
      assertValidKey(key);
      const { signal } = options;
      signal?.throwIfAborted();
      const file = fileOf(key);
      const temp = tempFileOf(file);
      const tempMeta = `${temp}.meta`;
      const counted = countedBody(body, signal);
      try {
        const handle = await openForWriting(temp);
        // flush: fsync before close, so the rename below never publishes data still in the page cache.
        await pipeline(counted.stream, handle.createWriteStream({ flush: true }));
        const meta = JSON.stringify({ contentType: options.contentType ?? DEFAULT_CONTENT_TYPE });
        await writeFile(tempMeta, meta, { mode: FILE_MODE, flag: 'wx', flush: true });
        signal?.throwIfAborted();
        // The object file's rename is the commit point: until it happens a reader sees the old object or none.
        await rename(tempMeta, metaFileOf(file));
        await rename(temp, file);
        await fsyncFolder(path.dirname(file));
        return { size: counted.size() };
      } catch (error) {
        await Promise.all([rm(temp, { force: true }), rm(tempMeta, { force: true })]).catch(() => {});
        if (body instanceof Readable) body.destroy(); // as pipeline would: the caller's stream is finished with
        // A body that broke off (a dropped upload) is reported as itself, never as a disk problem.
        throw counted.failure() ?? unavailableOr(error);
      }
    },

    async get(key, range) {
      assertValidKey(key);
      if (range) assertValidRange(range);
      const file = fileOf(key);
      let handle: FileHandle;
      try {
        handle = await open(file, 'r');
      } catch (error) {
        throw await notFoundOr(error, key);
      }
      try {
        // Reading through the handle we opened keeps the object we sized, even if a put replaces it meanwhile.
        const info = await handle.stat();
        if (!info.isFile()) throw new ObjectNotFoundError(`no object at ${key}`);
        if (range && range.start >= info.size) {
          throw new RangeError(`range start ${range.start} is past the end of ${key} (${info.size} bytes)`);
        }
        const contentType = await readContentType(file);
        const body: Readable = handle.createReadStream(range ? { start: range.start, ...(range.end !== undefined && { end: range.end }) } : {});
        return { body, size: info.size, contentType };
      } catch (error) {
        await handle.close();
        throw unavailableOr(error);
      }
    },

    async delete(key) {
      assertValidKey(key);
      await deleteOne(key);
    },

    async deleteMany(keys) {
      keys.forEach(assertValidKey);
      const failures: Array<{ key: string; error: unknown }> = [];
      let next = 0;
      const worker = async () => {
        while (next < keys.length) {
          const key = keys[next++]!;
          await deleteOne(key).catch((error: unknown) => failures.push({ key, error }));
        }
      };
      await Promise.all(Array.from({ length: Math.min(DELETE_CONCURRENCY, keys.length) }, worker));
      if (failures.length === 0) return;
      const first = failures[0]!;
      if (first.error instanceof StorageUnavailableError) throw first.error;
      throw new Error(`could not delete ${failures.length} of ${keys.length} objects, first ${first.key}: ${String(first.error)}`, { cause: first.error });
    },

    async ping() {
      // Writing a probe (not just checking the folder exists) also catches a read-only or full disk.
      const probe = path.join(root, `${OWN_MARK}ping-${randomBytes(8).toString('hex')}`);
      try {
        await mkdir(root, { recursive: true, mode: FOLDER_MODE });
        await writeFile(probe, 'ok', { mode: FILE_MODE, flush: true });
        await unlink(probe);
      } catch (error) {
        await rm(probe, { force: true }).catch(() => {});
        throw new StorageUnavailableError(`cannot write to the storage folder ${root} (${systemErrorCodes(error)[0] ?? String(error)}); check that it exists and the service may write to it`, { cause: error });
      }
    },

    async list(prefix) {
      assertValidPrefix(prefix);
      // Only the folder holding the prefix's last "/" can contain matches.
      const folder = path.join(root, ...prefix.split('/').slice(0, -1));
      let entries;
      try {
        entries = await readdir(folder, { recursive: true, withFileTypes: true });
      } catch (error) {
        if (systemErrorCodes(error).some((c) => MISSING_CODES.has(c))) return [];
        throw unavailableOr(error);
      }
      return entries
        .filter((entry) => entry.isFile() && !entry.name.includes(OWN_MARK))
        .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'))
        .filter((key) => key.startsWith(prefix))
        .sort();
    },

    async close() {},
  };
}

/** Creates the temp file (and its folders). A concurrent delete may prune a folder we just made; then we make it again. */
async function openForWriting(file: string): Promise<FileHandle> {
  for (let attempt = 1; ; attempt++) {
    await mkdir(path.dirname(file), { recursive: true, mode: FOLDER_MODE });
    try {
      return await open(file, 'wx', FILE_MODE);
    } catch (error) {
      if (attempt >= 3 || !systemErrorCodes(error).includes('ENOENT')) throw error;
    }
  }
}

/** A rename is durable only once its folder's entry is on disk. */
async function fsyncFolder(folder: string): Promise<void> {
  const handle = await open(folder, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function readContentType(file: string): Promise<string> {
  let text: string;
  try {
    text = await readFile(metaFileOf(file), 'utf8');
  } catch (error) {
    if (systemErrorCodes(error).includes('ENOENT')) return DEFAULT_CONTENT_TYPE; // a file put there by hand
    throw error;
  }
  const meta: unknown = JSON.parse(text);
  return typeof meta === 'object' && meta !== null && 'contentType' in meta && typeof meta.contentType === 'string' ? meta.contentType : DEFAULT_CONTENT_TYPE;
}
