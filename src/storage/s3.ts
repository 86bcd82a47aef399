// Objects in an S3 bucket (AWS or any S3-compatible server). Credentials come from the SDK's default
// chain: AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY in the environment, a profile, or an instance role.
import {
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  ListObjectsV2Command,
  S3Client,
  type GetObjectCommandOutput,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { Readable } from 'node:stream';
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

export type S3StoreOptions = {
  bucket: string;
  /** An S3-compatible server such as `http://127.0.0.1:9000`; undefined means AWS itself. */
  endpoint: string | undefined;
  /** undefined leaves it to the SDK (AWS_REGION). */
  region: string | undefined;
  forcePathStyle: boolean;
};

// DeleteObjects takes at most 1000 keys per request.
const DELETE_BATCH = 1000;

// Network failures: the endpoint is down, unknown, or dropped us.
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN', 'ENETUNREACH', 'ENETDOWN', 'EHOSTUNREACH', 'EHOSTDOWN']);
// S3's own "not now" answers (some come with a 4xx status), the SDK's timeouts, and a bucket that is not there.
const UNAVAILABLE_NAMES = new Set(['SlowDown', 'ServiceUnavailable', 'InternalError', 'RequestTimeout', 'Throttling', 'ThrottlingException', 'TimeoutError', 'NoSuchBucket']);

/** An ObjectStore on one S3 bucket. */
export function createS3ObjectStore(options: S3StoreOptions): ObjectStore {
  const { bucket } = options;
  const where = `S3 bucket "${bucket}"${options.endpoint ? ` at ${options.endpoint}` : ''}`;
  const client = new S3Client({
    ...(options.endpoint !== undefined && { endpoint: options.endpoint }),
    ...(options.region !== undefined && { region: options.region }),
    forcePathStyle: options.forcePathStyle,
    // Only the checksums S3 demands (DeleteObjects): S3-compatible servers often reject the newer
    // default (CRC32 trailers on every upload) or send no checksum back to validate.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: 3,
    // Bounded, so a store that hangs becomes a StorageUnavailableError (503) instead of a request that never ends:
    // 5 s to connect, 30 s until the response starts, 30 s without a byte on an open socket.
    requestHandler: { connectionTimeout: 5_000, requestTimeout: 30_000, throwOnRequestTimeout: true, socketTimeout: 30_000 },
  });

  /** StorageUnavailableError for "cannot be reached / not now"; anything else unchanged. */
  const unavailableOr = (error: unknown): unknown => {
    if (isAbortError(error)) return error;
    const status = httpStatusOf(error);
    const name = error instanceof Error ? error.name : '';
    const code = systemErrorCodes(error).find((c) => UNREACHABLE_CODES.has(c));
    if (code === undefined && !UNAVAILABLE_NAMES.has(name) && !(status !== undefined && status >= 500)) return error;
    const reason = code ?? (name === 'NoSuchBucket' ? 'the bucket does not exist' : `${name}${status ? `, HTTP ${status}` : ''}`);
    return new StorageUnavailableError(`${where} is not available (${reason}); check that the endpoint is up and the bucket exists`, { cause: error });
  };

  return {
    async put(key, body, putOptions = {}) {
      assertValidKey(key);
      putOptions.signal?.throwIfAborted();
      // Aborting destroys the body: Upload then fails before PutObject, or aborts its multipart upload.
      const counted = countedBody(body, putOptions.signal);
      const upload = new Upload({
        client,
        params: { Bucket: bucket, Key: key, Body: counted.stream, ContentType: putOptions.contentType ?? DEFAULT_CONTENT_TYPE },
        // Upload buffers queueSize × 5 MB parts in memory per put; two keeps that bounded.
        queueSize: 2,
        // A failed multipart upload is aborted, so no parts linger (and none are billed).
        leavePartsOnError: false,
      });
      try {
        await upload.done();
      } catch (error) {
        // The body's own failure is the cause; an error cleaning up after it (s3rver, for one, cannot abort
        // a multipart upload) is not the one to report.
        if (body instanceof Readable) body.destroy(); // as pipeline would: the caller's stream is finished with
        throw counted.failure() ?? unavailableOr(error);
      }
      return { size: counted.size() };
    },

    async get(key, range) {
      assertValidKey(key);
      if (range) assertValidRange(range);
      let response: GetObjectCommandOutput;
      try {
        response = await client.send(
          new GetObjectCommand({ Bucket: bucket, Key: key, ...(range && { Range: `bytes=${range.start}-${range.end ?? ''}` }) }),
        );
      } catch (error) {
        if (error instanceof Error && (error.name === 'NoSuchKey' || (error.name === 'NotFound' && httpStatusOf(error) === 404))) {
          throw new ObjectNotFoundError(`no object at ${key}`, { cause: error });
        }
        if (error instanceof Error && (error.name === 'InvalidRange' || httpStatusOf(error) === 416)) {
          throw new RangeError(`range start ${range?.start} is past the end of ${key}`, { cause: error });
        }
        throw unavailableOr(error);
      }
      const body = response.Body;
      if (!(body instanceof Readable)) throw new Error(`S3 returned no readable body for ${key}`);
      // With a range, ContentLength is the part's length; the whole object's size ends Content-Range.
      const size = Number(/\/(\d+)$/.exec(response.ContentRange ?? '')?.[1] ?? response.ContentLength ?? 0);
      if (range && range.start >= size) {
        body.destroy();
        throw new RangeError(`range start ${range.start} is past the end of ${key} (${size} bytes)`);
      }
      return { body, size, contentType: response.ContentType ?? DEFAULT_CONTENT_TYPE };
    },

    async delete(key) {
      assertValidKey(key);
      try {
        // S3 answers 204 for a key that does not exist, which is what we want.
        await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
      } catch (error) {
        throw unavailableOr(error);
      }
    },

    async deleteMany(keys) {
      keys.forEach(assertValidKey);
      for (let start = 0; start < keys.length; start += DELETE_BATCH) {
        const batch = keys.slice(start, start + DELETE_BATCH);
        let errors;
        try {
          // Quiet: the answer lists only the keys that could not be removed.
          const result = await client.send(
            new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true } }),
          );
          errors = (result.Errors ?? []).filter((e) => e.Code !== 'NoSuchKey');
        } catch (error) {
          throw unavailableOr(error);
        }
        const first = errors[0];
        if (first === undefined) continue;
        const detail = `could not delete ${errors.length} of ${batch.length} objects from ${where}, first ${first.Key}: ${first.Code} ${first.Message ?? ''}`.trim();
        if (errors.some((e) => UNAVAILABLE_NAMES.has(e.Code ?? ''))) throw new StorageUnavailableError(detail);
        throw new Error(detail);
      }
    },

    async ping() {
      try {
        await client.send(new HeadBucketCommand({ Bucket: bucket }));
      } catch (error) {
        const translated = unavailableOr(error);
        if (translated instanceof StorageUnavailableError) throw translated;
        // Wrong credentials or a missing bucket also make the store unusable; say which.
        const status = httpStatusOf(error);
        const reason =
          status === 404 ? 'the bucket does not exist'
          : status === 403 ? 'access denied; check AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and the bucket policy'
          : String(error);
        throw new StorageUnavailableError(`${where} cannot be used: ${reason}`, { cause: error });
      }
    },

    async list(prefix) {
      assertValidPrefix(prefix);
      const keys: string[] = [];
      let token: string | undefined;
      try {
        do {
          const page = await client.send(
            new ListObjectsV2Command({ Bucket: bucket, ...(prefix && { Prefix: prefix }), ...(token && { ContinuationToken: token }) }),
          );
          for (const object of page.Contents ?? []) if (object.Key !== undefined) keys.push(object.Key);
          token = page.IsTruncated ? page.NextContinuationToken : undefined;
        } while (token);
      } catch (error) {
        throw unavailableOr(error);
      }
      return keys.sort();
    },

    async close() {
      client.destroy();
    },
  };
}

function httpStatusOf(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null || !('$metadata' in error)) return undefined;
  const metadata = error.$metadata;
  if (typeof metadata !== 'object' || metadata === null || !('httpStatusCode' in metadata)) return undefined;
  return typeof metadata.httpStatusCode === 'number' ? metadata.httpStatusCode : undefined;
}

function isAbortError(error: unknown): boolean {
  return error instanceof Error && error.name === 'AbortError';
}
