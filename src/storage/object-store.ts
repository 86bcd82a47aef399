// Object storage behind one narrow interface: the file system (fs.ts) and S3 (s3.ts) both pass
// test/storage/object-store.test.ts, so the rest of Signet never knows which one it has.
import { addAbortSignal, Readable } from 'node:stream';

export interface ObjectStore {
  /**
   * Streams body into key; resolves with the byte count once durable. On failure nothing is left under key
   * (an object already there keeps its old content). An aborted signal fails the put with an AbortError.
   * Without contentType the object is stored as `application/octet-stream`.
   */
  put(key: string, body: Readable | Uint8Array, options?: { contentType?: string; signal?: AbortSignal }): Promise<{ size: number }>;
  /**
   * Streams an object, optionally a byte range (inclusive end, like HTTP Range; an end past the object is
   * cut to its last byte). `size` is always the whole object's size, so a caller can write
   * `Content-Range: bytes start-end/size`. A range starting at or past the end throws a RangeError.
   * The caller must read the body to the end or destroy it.
   */
  get(key: string, range?: { start: number; end?: number }): Promise<{ body: Readable; size: number; contentType?: string }>;
  /** Removes one object; an object that does not exist is not an error. */
  delete(key: string): Promise<void>;
  /** Removes many objects (S3 DeleteObjects in batches of 1000); missing ones are not an error; throws if any could not be removed. */
  deleteMany(keys: string[]): Promise<void>;
  /** Throws StorageUnavailableError when the store cannot be reached. */
  ping(): Promise<void>;
  /** Lists keys under a prefix (a plain string prefix, as in S3), sorted (for tests and housekeeping). */
  list(prefix: string): Promise<string[]>;
  close(): Promise<void>;
}

/** The key names no object. */
export class ObjectNotFoundError extends Error {
  override name = 'ObjectNotFoundError';
}

/**
 * The store cannot be reached or cannot take the request now (refused or reset connections, timeouts,
 * DNS, S3 5xx and SlowDown, a full or read-only disk, no permission on the folder). The HTTP layer
 * answers 503 with Retry-After; trying again later may work.
 */
export class StorageUnavailableError extends Error {
  override name = 'StorageUnavailableError';
}

export const DEFAULT_CONTENT_TYPE = 'application/octet-stream';

// S3's own limit on a key's length, in bytes; our keys are ASCII, so characters.
const MAX_KEY_LENGTH = 1024;
const KEY_CHARACTERS = /^[A-Za-z0-9._/-]+$/;

/**
 * Throws a plain Error unless key is `segment/segment/…` of `[A-Za-z0-9._-]`, with no empty, `.` or `..`
 * segment: such a key means the same object on a file system and on S3, and cannot climb out of the folder.
 */
export function assertValidKey(key: string): void {
  if (key.length === 0 || key.length > MAX_KEY_LENGTH) {
    throw new Error(`object key must be 1 to ${MAX_KEY_LENGTH} characters, got ${key.length}`);
  }
  if (!KEY_CHARACTERS.test(key)) {
    throw new Error(`object key may contain only A-Z a-z 0-9 . _ / -, got ${JSON.stringify(key)}`);
  }
  if (key.split('/').some((segment) => segment === '' || segment === '.' || segment === '..')) {
    throw new Error(`object key must not start or end with /, nor have an empty, . or .. segment, got ${JSON.stringify(key)}`);
  }
}

/** A list prefix is empty, or any start of a valid key (so it may end with /). */
export function assertValidPrefix(prefix: string): void {
  if (prefix === '') return;
  assertValidKey(prefix.endsWith('/') ? `${prefix}x` : prefix);
}

/** Throws a RangeError for a range no object could satisfy (negative, fractional, or ending before it starts). */
export function assertValidRange(range: { start: number; end?: number }): void {
  const { start, end } = range;
  if (!Number.isSafeInteger(start) || start < 0) throw new RangeError(`range start must be a whole number ≥ 0, got ${start}`);
  if (end !== undefined && (!Number.isSafeInteger(end) || end < start)) {
    throw new RangeError(`range end must be a whole number ≥ start (${start}), got ${end}`);
  }
}

/** A Node system error's code (ECONNREFUSED, ENOSPC, …), looking through `cause` and AggregateError's `errors`. */
export function systemErrorCodes(error: unknown): string[] {
  const codes: string[] = [];
  const seen = new Set<unknown>();
  const visit = (value: unknown): void => {
    if (typeof value !== 'object' || value === null || seen.has(value)) return;
    seen.add(value);
    if ('code' in value && typeof value.code === 'string') codes.push(value.code);
    if ('cause' in value) visit(value.cause);
    if (value instanceof AggregateError) for (const inner of value.errors) visit(inner);
  };
  visit(error);
  return codes;
}

/**
 * The body as one byte stream that counts what passes through it, so `put` can report the size without
 * buffering. An aborted signal destroys the stream with an AbortError, which fails whatever is reading it.
 * `failure()` is the body's own error (the source broke off, or the abort), which a put reports in
 * preference to whatever the store said afterwards: an upload the client dropped is not an outage.
 */
export function countedBody(
  body: Readable | Uint8Array,
  signal: AbortSignal | undefined,
): { stream: Readable; size(): number; failure(): unknown } {
  let size = 0;
  let failure: unknown;
  async function* count(): AsyncGenerator<Uint8Array> {
    if (body instanceof Uint8Array) {
      size = body.byteLength;
      if (size > 0) yield body;
      return;
    }
    const chunks: AsyncIterator<Uint8Array | string> = body[Symbol.asyncIterator]();
    try {
      for (;;) {
        let next: IteratorResult<Uint8Array | string>;
        try {
          next = await chunks.next();
        } catch (error) {
          failure ??= error; // the body's own error; a failing store reaches us at the yield below instead
          throw error;
        }
        if (next.done) return;
        const bytes = typeof next.value === 'string' ? Buffer.from(next.value) : next.value;
        size += bytes.byteLength;
        yield bytes;
      }
    } finally {
      await chunks.return?.(); // a store that stopped early releases the body
    }
  }
  const stream = Readable.from(count(), { objectMode: false });
  if (signal) {
    addAbortSignal(signal, stream);
    // Runs right after addAbortSignal's listener has destroyed the stream with this AbortError.
    stream.once('error', (error) => signal.aborted && (failure ??= error));
  }
  return { stream, size: () => size, failure: () => failure };
}
