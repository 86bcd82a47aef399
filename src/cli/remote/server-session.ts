// `signet login --server URL` and what the `--remote` commands send with (issue 43): the device
// authorization grant (RFC 8628) against the server's built-in public application `signet-cli`
// (created by migration 0018), the tokens kept in the user's config folder, the access token refreshed
// when it is about to expire. Spoken over plain fetch: the server's discovery document says where.
import { setTimeout as sleep } from 'node:timers/promises';
import { credentialsPath, readCredentials, writeCredentials, type Credentials } from './credentials.ts';

/** The built-in application of `signet login` (migration 0018_services_and_devices; clients.ts BUILT_IN_CLI_CLIENT_ID on the server). */
export const CLI_CLIENT_ID = 'signet-cli';
/** What the command line asks for: who you are, and your documents (parse, translate). */
export const CLI_SCOPE = 'openid profile documents';
const DEVICE_CODE_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code';
/** Refresh a little before the end, so a request sent now does not arrive with an expired token. */
const REFRESH_MARGIN_MS = 60_000;

export class RemoteError extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode = 1) {
    super(message);
    this.exitCode = exitCode;
  }
}

type OAuthAnswer = { status: number; body: Record<string, unknown> };

async function postForm(url: string, form: Record<string, string>): Promise<OAuthAnswer> {
  let res: Response;
  try {
    res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }, body: new URLSearchParams(form).toString(), redirect: 'error' });
  } catch (error) {
    throw new RemoteError(`cannot reach ${new URL(url).origin}: ${(error as Error).cause instanceof Error ? ((error as Error).cause as Error).message : (error as Error).message}`, 69);
  }
  const text = await res.text();
  try {
    return { status: res.status, body: JSON.parse(text) as Record<string, unknown> };
  } catch {
    throw new RemoteError(`${url} answered ${res.status} with something other than JSON; is ${new URL(url).origin} a Signet server?`);
  }
}

/** The server's origin from what the person typed (https://id.example.com, or a host:port for http on localhost). */
export function serverOrigin(typed: string): string {
  let url: URL;
  try {
    url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(typed) ? typed : `https://${typed}`);
  } catch {
    throw new RemoteError(`--server takes the address of a Signet server, such as https://id.example.com (not "${typed}")`, 2);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new RemoteError(`--server takes an http(s) address (not "${typed}")`, 2);
  return url.origin;
}

type Endpoints = { token_endpoint: string; device_authorization_endpoint: string; userinfo_endpoint?: string };

async function discover(origin: string): Promise<Endpoints> {
  let res: Response;
  try {
    res = await fetch(`${origin}/.well-known/openid-configuration`, { headers: { accept: 'application/json' } });
  } catch (error) {
    throw new RemoteError(`cannot reach ${origin}: ${(error as Error).cause instanceof Error ? ((error as Error).cause as Error).message : (error as Error).message}`, 69);
  }
  const doc = res.ok ? ((await res.json().catch(() => ({}))) as Partial<Endpoints>) : {};
  if (typeof doc.token_endpoint !== 'string' || typeof doc.device_authorization_endpoint !== 'string') {
    throw new RemoteError(`${origin} does not offer device sign-in (its discovery document names no device_authorization_endpoint); is it a Signet server, and a recent one?`);
  }
  return doc as Endpoints;
}

const oauthText = (body: Record<string, unknown>) => `${String(body.error)}${typeof body.error_description === 'string' ? `: ${body.error_description}` : ''}`;

/**
 * Signs the person in on `origin`: asks for a device code, shows the person where to enter it (through
 * `show`), and polls at the server's interval until they decide. Stores and returns the credentials.
 */
export async function login(typedServer: string, show: (lines: { uri: string; code: string; complete: string }) => void, file = credentialsPath()): Promise<Credentials> {
  const origin = serverOrigin(typedServer);
  const endpoints = await discover(origin);
  let scope = CLI_SCOPE;
  let start = await postForm(endpoints.device_authorization_endpoint, { client_id: CLI_CLIENT_ID, scope });
  if (start.status === 400 && start.body.error === 'invalid_scope') {
    // A server without the documents scope: signed in for the profile only (the --remote commands will say so).
    scope = 'openid profile';
    start = await postForm(endpoints.device_authorization_endpoint, { client_id: CLI_CLIENT_ID, scope });
  }
  if (start.status !== 200) {
    throw new RemoteError(
      start.body.error === 'invalid_client' || start.body.error === 'unauthorized_client'
        ? `${origin} does not let the command line sign in (its application ${CLI_CLIENT_ID} is missing or disabled; ask its operator: signet client enable ${CLI_CLIENT_ID})`
        : `${origin} refused to start a sign-in: ${oauthText(start.body)}`,
    );
  }
  const deviceCode = String(start.body.device_code);
  show({ uri: String(start.body.verification_uri), code: String(start.body.user_code), complete: String(start.body.verification_uri_complete ?? start.body.verification_uri) });
  let interval = Number(start.body.interval) > 0 ? Number(start.body.interval) : 5;
  const deadline = Date.now() + Number(start.body.expires_in ?? 900) * 1000;
  // RFC 8628 §3.5: poll no more often than `interval`, five seconds more after every slow_down.
  while (Date.now() < deadline) {
    await sleep(interval * 1000);
    const answer = await postForm(endpoints.token_endpoint, { grant_type: DEVICE_CODE_GRANT_TYPE, device_code: deviceCode, client_id: CLI_CLIENT_ID });
    if (answer.status === 200) {
      const credentials = credentialsFrom(origin, endpoints.token_endpoint, answer.body);
      await writeCredentials(credentials, file);
      return credentials;
    }
    if (answer.body.error === 'authorization_pending') continue;
    if (answer.body.error === 'slow_down') {
      interval += 5;
      continue;
    }
    if (answer.body.error === 'access_denied') throw new RemoteError('the sign-in was denied in the browser; nothing was stored');
    if (answer.body.error === 'expired_token') break;
    throw new RemoteError(`${origin} refused the sign-in: ${oauthText(answer.body)}`);
  }
  throw new RemoteError('the code expired before it was entered; run signet login again');
}

function credentialsFrom(origin: string, tokenEndpoint: string, body: Record<string, unknown>, previous?: Credentials): Credentials {
  return {
    server: origin,
    client_id: CLI_CLIENT_ID,
    token_endpoint: tokenEndpoint,
    access_token: String(body.access_token),
    refresh_token: typeof body.refresh_token === 'string' ? body.refresh_token : (previous?.refresh_token ?? null),
    scope: typeof body.scope === 'string' ? body.scope : (previous?.scope ?? ''),
    expires_at: new Date(Date.now() + Number(body.expires_in ?? 7200) * 1000).toISOString(),
  };
}

/**
 * The stored credentials with an access token good for a while: refreshed (and stored again) when it
 * is about to expire. Refresh tokens rotate: the new one replaces the old in the file at once.
 */
export async function currentCredentials(file = credentialsPath()): Promise<Credentials> {
  const stored = await readCredentials(file);
  if (!stored) throw new RemoteError('not signed in to a Signet server: run signet login --server URL first');
  if (Date.parse(stored.expires_at) - REFRESH_MARGIN_MS > Date.now()) return stored;
  if (!stored.refresh_token) throw new RemoteError(`the sign-in to ${stored.server} has expired: run signet login --server ${stored.server} again`);
  const answer = await postForm(stored.token_endpoint, { grant_type: 'refresh_token', refresh_token: stored.refresh_token, client_id: stored.client_id });
  if (answer.status !== 200) throw new RemoteError(`the sign-in to ${stored.server} has ended (${oauthText(answer.body)}): run signet login --server ${stored.server} again`);
  const renewed = credentialsFrom(stored.server, stored.token_endpoint, answer.body, stored);
  await writeCredentials(renewed, file);
  return renewed;
}

/** A request to the signed-in server as the signed-in person (`Authorization: Bearer`). */
export async function serverFetch(credentials: Credentials, pathAndQuery: string, init: RequestInit = {}): Promise<Response> {
  try {
    return await fetch(`${credentials.server}${pathAndQuery}`, { ...init, headers: { ...(init.headers as Record<string, string> | undefined), authorization: `Bearer ${credentials.access_token}` }, redirect: 'error' });
  } catch (error) {
    throw new RemoteError(`cannot reach ${credentials.server}: ${(error as Error).cause instanceof Error ? ((error as Error).cause as Error).message : (error as Error).message}`, 69);
  }
}

/** A refusal from a document API, in words: `{"error","message"}` (first-party) or docling-serve's `{"detail"}`. */
export async function refusalText(res: Response): Promise<string> {
  const text = await res.text();
  try {
    const body = JSON.parse(text) as Record<string, unknown>;
    const said = body.message ?? body.error_description ?? body.detail ?? body.error;
    if (res.status === 401 || res.status === 403) return `${res.status}: ${typeof said === 'string' ? said : 'not allowed'} (signet login again, or ask the operator for the documents scope)`;
    return `${res.status}: ${typeof said === 'string' ? said : JSON.stringify(said)}`;
  } catch {
    return `${res.status} ${res.statusText}`;
  }
}
