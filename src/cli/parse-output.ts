// Where `signet parse` puts one file's results: NAME.md, NAME.json and NAME/pictures/*.png in the
// output folder. Everything is written into a hidden staging folder inside it first (same file
// system, so a rename moves it into place whole) and renamed into place only when the whole file
// has been parsed; a file that fails, or a run that is interrupted, removes the staging folder —
// and the output folder too when this file created it and nothing else is in it.
import { mkdir, mkdtemp, readdir, rename, rm, rmdir, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** One file's results on their way into the output folder. Nothing is created before the first write. */
export type Staged = {
  /** A picture under its result name (`pictures/page-<n>-<k>.png`). */
  writePicture(file: string, png: Uint8Array): Promise<void>;
  /** NAME.md, NAME.json, NAME.html or NAME.txt. */
  writeFile(fileName: string, text: string): Promise<void>;
  /** Moves everything into place; returns the paths written (under the output folder as given). */
  commit(): Promise<{ outputs: string[]; pictures: string[] }>;
  /** Removes whatever was staged (a no-op after commit). */
  discard(): Promise<void>;
};

/** The pictures a run of `signet parse` writes: an earlier run's that this run did not write again are stale. */
const PICTURE_FILE = /^page-\d+-\d+\.png$/;

/** `first` and each folder below it down to `last`: the folders `mkdir -p last` created. */
function createdChain(first: string, last: string): string[] {
  const chain = [first];
  for (const segment of path.relative(first, last).split(path.sep).filter(Boolean)) chain.push(path.join(chain.at(-1)!, segment));
  return chain;
}

/** Why a folder could not be created, in words. */
function folderFailure(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'EEXIST' || code === 'ENOTDIR') return 'a file of that name is in the way';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'EROFS') return 'read-only file system';
  if (code === 'ENOSPC') return 'no space left on the device';
  return error instanceof Error ? error.message : String(error);
}

const isMissing = (error: unknown) => (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';

/** Removes the folders if empty, deepest first; stops at the first that is not. */
async function removeIfEmpty(folders: string[]): Promise<void> {
  for (const folder of [...folders].reverse()) {
    try {
      await rmdir(folder);
    } catch {
      return;
    }
  }
}

export function stageResults(outDir: string, name: string): Staged {
  let staging: Promise<string> | undefined;
  let created: string[] = [];
  const pictures: string[] = [];
  const files: string[] = [];
  const stage = () =>
    (staging ??= (async () => {
      const first = await mkdir(outDir, { recursive: true }).catch((error: unknown) => {
        throw new Error(`cannot create the output folder ${outDir} (${folderFailure(error)}); choose another --out`);
      });
      if (first !== undefined) created = createdChain(path.resolve(first), path.resolve(outDir));
      return mkdtemp(path.join(outDir, `.${name}.signet-parse-`));
    })());

  return {
    async writePicture(file, png) {
      const dir = await stage();
      const base = path.basename(file);
      await mkdir(path.join(dir, 'pictures'), { recursive: true });
      await writeFile(path.join(dir, 'pictures', base), png);
      pictures.push(base);
    },
    async writeFile(fileName, text) {
      const dir = await stage();
      await writeFile(path.join(dir, fileName), text);
      files.push(fileName);
    },
    async commit() {
      const dir = await stage();
      const picturesDir = path.join(outDir, name, 'pictures');
      if (pictures.length > 0) await mkdir(picturesDir, { recursive: true });
      for (const picture of pictures) await rename(path.join(dir, 'pictures', picture), path.join(picturesDir, picture));
      await removeStalePictures(picturesDir, new Set(pictures), path.join(outDir, name));
      // The documents last: once NAME.md is there, every picture it links to is too.
      for (const file of files) await rename(path.join(dir, file), path.join(outDir, file));
      await rm(dir, { recursive: true, force: true });
      staging = undefined;
      return { outputs: files.map((file) => path.join(outDir, file)), pictures: pictures.map((picture) => path.join(picturesDir, picture)) };
    },
    async discard() {
      if (staging === undefined) return;
      const dir = await staging.catch(() => undefined);
      staging = undefined;
      if (dir !== undefined) await rm(dir, { recursive: true, force: true });
      await removeIfEmpty(created);
    },
  };
}

/** An earlier run's pictures of this file that this run did not write again; then NAME/pictures and NAME if empty. */
async function removeStalePictures(picturesDir: string, kept: Set<string>, nameDir: string): Promise<void> {
  let names: string[];
  try {
    names = await readdir(picturesDir);
  } catch (error) {
    if (isMissing(error)) return;
    throw error;
  }
  for (const file of names) if (PICTURE_FILE.test(file) && !kept.has(file)) await unlink(path.join(picturesDir, file));
  if (kept.size === 0) await removeIfEmpty([nameDir, picturesDir]);
}
