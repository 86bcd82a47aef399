// An in-process S3 server (s3rver) for tests: a random free port on 127.0.0.1, a temporary folder and
// one bucket. stop() and restart() keep the port and the folder, so a test can take the store away and
// bring it back with its objects.
import crypto from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';

type S3rverOptions = {
  address: string;
  port: number;
  directory: string;
  silent: boolean;
  configureBuckets: Array<{ name: string }>;
};
type S3rverInstance = { run(): Promise<AddressInfo>; close(): Promise<void>; httpServer?: Server };
type S3rverAccount = { createKeyPair(accessKeyId: string, secretAccessKey: string): void };

// s3rver is CommonJS without types; these are the few members we use.
const require = createRequire(import.meta.url);
const S3rver = require('s3rver') as new (options: S3rverOptions) => S3rverInstance;
const { DUMMY_ACCOUNT } = require('s3rver/lib/models/account.js') as { DUMMY_ACCOUNT: S3rverAccount };

// s3rver encrypts ListObjectsV2 continuation tokens with single DES, which OpenSSL 3 (Node ≥ 17) refuses
// without --openssl-legacy-provider: any listing of more than 1000 keys fails with InternalError. Three-key
// DES with three equal keys is single DES, so s3rver's tokens come out exactly as intended.
function letS3rverPaginate(): void {
  const original = { cipher: crypto.createCipheriv, decipher: crypto.createDecipheriv };
  const asTripleDes = (algorithm: string, key: crypto.CipherKey): [string, crypto.CipherKey] =>
    algorithm === 'des' && Buffer.isBuffer(key) && key.length === 8 ? ['des-ede3-cbc', Buffer.concat([key, key, key])] : [algorithm, key];
  if (original.cipher.name === 'createCipherivForS3rver') return;
  crypto.createCipheriv = function createCipherivForS3rver(algorithm: string, key: crypto.CipherKey, iv: crypto.BinaryLike | null) {
    return original.cipher(...asTripleDes(algorithm, key), iv);
  } as typeof crypto.createCipheriv;
  crypto.createDecipheriv = function createDecipherivForS3rver(algorithm: string, key: crypto.CipherKey, iv: crypto.BinaryLike | null) {
    return original.decipher(...asTripleDes(algorithm, key), iv);
  } as typeof crypto.createDecipheriv;
}
letS3rverPaginate();

export type TestS3 = {
  /** The SIGNET_STORAGE_URL for this bucket. */
  url: string;
  endpoint: string;
  bucket: string;
  stop(): Promise<void>;
  /** Starts again on the same port with the same folder (and so the same objects). */
  restart(): Promise<void>;
  /** Every key in the bucket, read from s3rver's folder through its own listing. */
  listKeys(): Promise<string[]>;
  /** Stops the server and removes its folder. */
  dispose(): Promise<void>;
};

/**
 * Starts s3rver. The SDK finds credentials in the environment: S3RVER/S3RVER unless some are set already,
 * in which case that access key is registered with s3rver (it checks the key id, never the secret).
 */
export async function startS3(bucket = 'signet-test'): Promise<TestS3> {
  process.env.AWS_ACCESS_KEY_ID ??= 'S3RVER';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'S3RVER';
  process.env.AWS_REGION ??= 'us-east-1';
  DUMMY_ACCOUNT.createKeyPair(process.env.AWS_ACCESS_KEY_ID, process.env.AWS_SECRET_ACCESS_KEY);

  const directory = await mkdtemp(path.join(tmpdir(), 'signet-s3-'));
  let server: S3rverInstance | undefined;
  const start = async (port: number): Promise<number> => {
    // A fresh instance each time: s3rver closes its logger when its HTTP server closes.
    const instance = new S3rver({ address: '127.0.0.1', port, directory, silent: true, configureBuckets: [{ name: bucket }] });
    const address = await instance.run();
    server = instance;
    return address.port;
  };
  const stop = async (): Promise<void> => {
    const running = server;
    server = undefined;
    if (!running) return;
    const closed = running.close();
    // Kept-alive SDK connections would hold close() open; a stopped store drops them, as a crash would.
    running.httpServer?.closeAllConnections();
    await closed;
  };

  const port = await start(0);
  const endpoint = `http://127.0.0.1:${port}`;
  const url = `s3://${bucket}?endpoint=${encodeURIComponent(endpoint)}&region=us-east-1&forcePathStyle=true`;
  return {
    url,
    endpoint,
    bucket,
    stop,
    async restart() {
      await stop();
      await start(port);
    },
    async listKeys() {
      const response = await fetch(`${endpoint}/${bucket}?list-type=2&max-keys=1000`);
      const xml = await response.text();
      if (!response.ok) throw new Error(`s3rver listing failed: HTTP ${response.status} ${xml}`);
      if (xml.includes('<IsTruncated>true</IsTruncated>')) throw new Error('listKeys() reads one page; the bucket holds more than 1000 keys');
      return [...xml.matchAll(/<Key>([^<]*)<\/Key>/g)].map((match) => match[1]!).sort();
    },
    async dispose() {
      await stop();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
