// Where `signet login` keeps what it got (issue 43): `$XDG_CONFIG_HOME/signet/credentials.json`
// (`~/.config/signet/credentials.json` without XDG_CONFIG_HOME), readable by its owner only (0600,
// the folder 0700). Written to a temporary file and renamed into place, so a reader never sees half
// of it. One server at a time: a new `signet login` replaces what was there.
import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';

export type Credentials = {
  /** the server's origin, e.g. https://id.example.com */
  server: string;
  client_id: string;
  token_endpoint: string;
  access_token: string;
  refresh_token: string | null;
  scope: string;
  /** when the access token expires (ISO 8601) */
  expires_at: string;
};

export function credentialsPath(env: NodeJS.ProcessEnv = process.env): string {
  const config = env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : path.join(env.HOME || homedir(), '.config');
  return path.join(config, 'signet', 'credentials.json');
}

export async function readCredentials(file = credentialsPath()): Promise<Credentials | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const value = JSON.parse(text) as Partial<Credentials>;
  if (typeof value.server !== 'string' || typeof value.access_token !== 'string' || typeof value.token_endpoint !== 'string' || typeof value.client_id !== 'string') {
    throw new Error(`${file} is not a credentials file written by signet login; run signet login again`);
  }
  return value as Credentials;
}

export async function writeCredentials(credentials: Credentials, file = credentialsPath()): Promise<void> {
  const dir = path.dirname(file);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const temporary = path.join(dir, `.credentials.${process.pid}.tmp`);
  await writeFile(temporary, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
  await chmod(temporary, 0o600);
  await rename(temporary, file);
}

/** Removes the file; false when there was none. */
export async function removeCredentials(file = credentialsPath()): Promise<boolean> {
  try {
    await rm(file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}
