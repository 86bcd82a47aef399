// SIGNET_STORAGE_URL → which object store: `file:PATH` (the default, `file:<data dir>/objects`) or
// `s3://BUCKET?endpoint=URL&region=R&forcePathStyle=true`.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SettingsError } from '../config/settings.ts';
import { createFsObjectStore } from './fs.ts';
import type { ObjectStore } from './object-store.ts';
import type { S3StoreOptions } from './s3.ts';

export type StorageSettings = { kind: 'file'; root: string } | ({ kind: 's3' } & S3StoreOptions);

const VARIABLE = 'SIGNET_STORAGE_URL';
const EXPECTED = 'expected file:PATH or s3://BUCKET?endpoint=URL&region=R';
const S3_PARAMETERS = new Set(['endpoint', 'region', 'forcePathStyle']);
// S3's bucket naming rules (lower case, 3 to 63 characters), which S3-compatible servers also enforce.
const BUCKET_NAME = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/** Parses SIGNET_STORAGE_URL. A relative file path is resolved against the working folder. Throws SettingsError. */
export function parseStorageUrl(url: string): StorageSettings {
  if (url.startsWith('file:')) return { kind: 'file', root: parseFilePath(url) };
  if (url.startsWith('s3://')) return parseS3Url(url);
  throw new SettingsError(VARIABLE, `${EXPECTED}, got "${url}"`);
}

/** The store the settings name. Opening connects to nothing; call ping() to check it can be reached. */
export function openObjectStore(settings: StorageSettings): ObjectStore {
  return settings.kind === 'file' ? createFsObjectStore(settings.root) : lazyS3(settings);
}

/** The S3 store, with the AWS SDK loaded on first use rather than at start (it costs ~0.2 s and 30 MB). */
function lazyS3(settings: S3StoreOptions): ObjectStore {
  let loaded: Promise<ObjectStore> | undefined;
  const store = () => (loaded ??= import('./s3.ts').then((m) => m.createS3ObjectStore(settings)));
  return {
    put: async (key, body, options) => (await store()).put(key, body, options),
    get: async (key, range) => (await store()).get(key, range),
    delete: async (key) => (await store()).delete(key),
    deleteMany: async (keys) => (await store()).deleteMany(keys),
    ping: async () => (await store()).ping(),
    list: async (prefix) => (await store()).list(prefix),
    close: async () => (loaded ? (await loaded).close() : undefined),
  };
}

function parseFilePath(url: string): string {
  let file: string;
  if (url.startsWith('file://')) {
    try {
      file = fileURLToPath(url);
    } catch (error) {
      throw new SettingsError(VARIABLE, `"${url}" is not a usable file URL (${(error as Error).message}); write file:/absolute/folder`);
    }
  } else {
    file = url.slice('file:'.length);
  }
  if (file === '') throw new SettingsError(VARIABLE, 'file: needs a folder, such as file:/var/lib/signet/objects');
  return path.resolve(file);
}

function parseS3Url(value: string): StorageSettings {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new SettingsError(VARIABLE, `${EXPECTED}, got "${value}"`);
  }
  const bucket = url.hostname;
  if (!BUCKET_NAME.test(bucket)) {
    throw new SettingsError(VARIABLE, `"${bucket}" is not an S3 bucket name (3 to 63 characters: a-z 0-9 . -)`);
  }
  if (url.username || url.password) {
    throw new SettingsError(VARIABLE, 'put no credentials in the URL; set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY instead');
  }
  if (url.port || (url.pathname !== '' && url.pathname !== '/') || url.hash) {
    throw new SettingsError(VARIABLE, `expected s3://BUCKET with nothing after the bucket name but ?parameters, got "${value}"; put the server in ?endpoint=`);
  }
  for (const name of url.searchParams.keys()) {
    if (!S3_PARAMETERS.has(name)) throw new SettingsError(VARIABLE, `unknown parameter "${name}"; expected endpoint, region or forcePathStyle`);
  }

  const endpoint = url.searchParams.get('endpoint') ?? undefined;
  if (endpoint !== undefined) {
    const parsed = URL.canParse(endpoint) ? new URL(endpoint) : undefined;
    if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
      throw new SettingsError(VARIABLE, `endpoint must be an http(s) URL such as http://127.0.0.1:9000, got "${endpoint}"`);
    }
  }
  const region = url.searchParams.get('region') ?? undefined;
  if (region !== undefined && !/^[a-z0-9-]+$/.test(region)) {
    throw new SettingsError(VARIABLE, `region must look like us-east-1, got "${region}"`);
  }
  const forcePathStyle = url.searchParams.get('forcePathStyle') ?? 'true';
  if (forcePathStyle !== 'true' && forcePathStyle !== 'false') {
    throw new SettingsError(VARIABLE, `forcePathStyle must be true or false, got "${forcePathStyle}"`);
  }
  // Path style (http://endpoint/BUCKET/key) is the default: every S3-compatible server understands it,
  // while bucket-in-host-name needs wildcard DNS.
  return { kind: 's3', bucket, endpoint, region, forcePathStyle: forcePathStyle === 'true' };
}
