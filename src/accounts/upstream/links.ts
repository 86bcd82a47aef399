// Identities from upstream providers bound to accounts (issue 33). An identity is bound by
// (provider, upstream sub) only: an e-mail never links anything by itself — the nOAuth lesson (an
// upstream's e-mail may be unverified or changeable by its holder). A first sign-in with an unknown
// identity makes an account (unless sign-up is closed), or — when its e-mail names an existing account —
// waits for that account's password before linking (pending links, a cookie of their own).
import { createAccountWithoutPassword, findAccount, findAccountByEmail, hasPassword, AccountError, type Profile } from '../accounts.ts';
import { countPasskeys } from '../factors/passkeys.ts';
import { normalizeEmail } from '../identifiers.ts';
import { MINUTE, type Clock } from '../../config/clock.ts';
import { seal, unseal } from '../../config/sealing.ts';
import type { Db } from '../../db/database.ts';
import { isUniqueViolation } from '../../db/errors.ts';
import { keyedHash, newOpaqueToken } from '../../oauth/secrets.ts';
import type { Provider } from './providers.ts';
import * as store from './upstream.store.ts';

/** What the upstream said about the person, after its checks (callback.ts). */
export type UpstreamIdentity = {
  /** the upstream's `sub` (GitHub: the numeric user id, which never changes — unlike the login) */
  sub: string;
  email: string | undefined;
  /** only `email_verified: true` (GitHub: the e-mail's `verified`) counts */
  emailVerified: boolean;
  name: string | undefined;
  /** RFC 8176 amr values the upstream reported (registered ones only) */
  amr: string[];
};

export type LinkView = { provider: string; upstream_sub: string; email: string | null; linked_at: string; last_used_at: string | null };

export function toLinkView(row: store.LinkRow): LinkView {
  return {
    provider: row.provider_slug,
    upstream_sub: row.upstream_sub,
    email: row.email,
    linked_at: new Date(Number(row.linked_at)).toISOString(),
    last_used_at: row.last_used_at === null ? null : new Date(Number(row.last_used_at)).toISOString(),
  };
}

export async function listLinks(db: Db, sub: string): Promise<LinkView[]> {
  return (await store.linksOf(db, sub)).map(toLinkView);
}

/** Every link of every account (for export), with the account's sub. */
export async function listAllLinks(db: Db): Promise<Array<LinkView & { sub: string }>> {
  return (await store.listLinkRows(db)).map((row) => ({ sub: row.sub, ...toLinkView(row) }));
}

export class LinkError extends Error {
  readonly code: 'not_found' | 'last_way_in' | 'linked_elsewhere' | 'already_linked';
  constructor(code: LinkError['code'], message: string) {
    super(message);
    this.code = code;
    this.name = 'LinkError';
  }
}

/** Links the identity to the account (refused when it is linked to another account, or the account has one of this provider). */
export async function linkIdentity(db: Db, clock: Clock, provider: Pick<Provider, 'slug'>, identity: Pick<UpstreamIdentity, 'sub' | 'email'>, sub: string): Promise<void> {
  const existing = await store.findLink(db, provider.slug, identity.sub);
  if (existing) {
    if (existing.sub === sub) return;
    throw new LinkError('linked_elsewhere', 'this identity is linked to another account');
  }
  try {
    await store.insertLink(db, { provider_slug: provider.slug, upstream_sub: identity.sub, sub, email: identity.email ?? null, linked_at: clock(), last_used_at: clock() });
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    throw new LinkError('already_linked', 'the account has an identity of this provider linked already; unlink it first');
  }
}

/**
 * Whether the account keeps a way to sign in without the link to `slug`: a password, a passkey, or
 * another linked provider. spec: Unlink is "refused when it would leave the account with no way to sign in".
 */
export async function hasOtherWayIn(db: Db, sub: string, slug: string): Promise<boolean> {
  if (await hasPassword(db, sub)) return true;
  if ((await countPasskeys(db, sub)) > 0) return true;
  return (await store.linksOf(db, sub)).some((l) => l.provider_slug !== slug);
}

/** Removes the link; refused (last_way_in) when it would leave no way to sign in, unless `force` (an operator). */
export async function unlinkIdentity(db: Db, sub: string, slug: string, options: { force?: boolean } = {}): Promise<void> {
  const links = await store.linksOf(db, sub);
  if (!links.some((l) => l.provider_slug === slug)) throw new LinkError('not_found', `the account has no identity linked from ${slug}`);
  if (!options.force && !(await hasOtherWayIn(db, sub, slug))) throw new LinkError('last_way_in', 'this is the only way the account can sign in: set a password or add a passkey first');
  await store.deleteLink(db, sub, slug);
}

/** What a callback's identity leads to. */
export type Resolution =
  | { outcome: 'signed_in'; account: Profile; created: boolean }
  /** its e-mail names an existing account: that account's owner must prove it (password) first */
  | { outcome: 'confirm_link'; account: Profile }
  | { outcome: 'disabled'; account: Profile }
  | { outcome: 'signup_closed' };

/**
 * The linking rules. spec: "an upstream identity is bound by (provider, upstream sub)"; "When the
 * e-mail belongs to an existing account, nothing is linked automatically" — whether or not the
 * upstream says the e-mail is verified.
 */
export async function resolveIdentity(db: Db, clock: Clock, provider: Provider, identity: UpstreamIdentity, signupOpen: boolean): Promise<Resolution> {
  const link = await store.findLink(db, provider.slug, identity.sub);
  if (link) {
    const account = await findAccount(db, link.sub);
    if (account) {
      if (account.disabled) return { outcome: 'disabled', account };
      await store.touchLink(db, provider.slug, identity.sub, clock());
      return { outcome: 'signed_in', account, created: false };
    }
  }
  const byEmail = identity.email === undefined ? undefined : await findAccountByEmail(db, identity.email);
  if (byEmail) return { outcome: 'confirm_link', account: byEmail };
  if (!signupOpen) return { outcome: 'signup_closed' };
  let account: Profile;
  try {
    account = await createAccountWithoutPassword(db, clock, { email: usableEmail(identity.email), name: identity.name, emailVerified: identity.emailVerified });
  } catch (error) {
    // Made meanwhile by someone else with this e-mail: the owner confirms, as above.
    const taken = error instanceof AccountError && error.code === 'email_taken' && identity.email !== undefined ? await findAccountByEmail(db, identity.email) : undefined;
    if (taken) return { outcome: 'confirm_link', account: taken };
    throw error;
  }
  await linkIdentity(db, clock, provider, identity, account.sub);
  return { outcome: 'signed_in', account, created: true };
}

/** An upstream e-mail Signet can store (one that is not an e-mail address is dropped, never an error). */
function usableEmail(email: string | undefined): string | undefined {
  return email !== undefined && normalizeEmail(email) !== undefined ? email : undefined;
}

// ---- pending links: the identity waits for the existing account's password ----

/** The cookie naming a pending link (web/cookies.ts adds `__Host-` on https). */
export const UPSTREAM_LINK_COOKIE = 'signet_idp_link';

/** spec (issue 33): the person has this long to enter the password. */
export const PENDING_LINK_LIFETIME_MS = 10 * MINUTE;

export type PendingLink = {
  provider: string;
  sub: string;
  identity: Pick<UpstreamIdentity, 'sub' | 'email' | 'emailVerified' | 'name' | 'amr'>;
  requestId: string | undefined;
  returnTo: string | undefined;
  expiresAt: number;
};

type LinkKeys = { hashKey: Buffer; sealKey: Buffer };

function pendingIdHash(hashKey: Buffer, origin: string, id: string): string {
  return keyedHash(hashKey, `upstream-pending-link\n${origin}\n${id}`);
}

/** Starts a pending link; returns the id for its cookie. */
export async function beginPendingLink(db: Db, clock: Clock, keys: LinkKeys, origin: string, link: Omit<PendingLink, 'expiresAt'>): Promise<{ id: string; expiresAt: number }> {
  const id = newOpaqueToken();
  const idHash = pendingIdHash(keys.hashKey, origin, id);
  const now = clock();
  const payload = JSON.stringify({ identity: link.identity, requestId: link.requestId, returnTo: link.returnTo });
  await store.insertPendingLink(db, { id_hash: idHash, provider_slug: link.provider, sub: link.sub, sealed: seal(keys.sealKey, `upstream-pending-link\n${idHash}`, Buffer.from(payload)), origin, created_at: now, expires_at: now + PENDING_LINK_LIFETIME_MS });
  return { id, expiresAt: now + PENDING_LINK_LIFETIME_MS };
}

export async function findPendingLink(db: Db, clock: Clock, keys: LinkKeys, origin: string, id: unknown): Promise<PendingLink | undefined> {
  if (typeof id !== 'string' || id.length === 0 || id.length > 100) return undefined;
  const idHash = pendingIdHash(keys.hashKey, origin, id);
  const row = await store.findPendingLink(db, idHash, clock());
  if (!row) return undefined;
  const payload = JSON.parse(unseal(keys.sealKey, `upstream-pending-link\n${idHash}`, row.sealed).toString('utf8')) as Pick<PendingLink, 'identity' | 'requestId' | 'returnTo'>;
  return { provider: row.provider_slug, sub: row.sub, identity: payload.identity, requestId: payload.requestId ?? undefined, returnTo: payload.returnTo ?? undefined, expiresAt: Number(row.expires_at) };
}

/** Ends the pending link; true only for the one request that ended it. */
export function finishPendingLink(db: Db, keys: LinkKeys, origin: string, id: string): Promise<boolean> {
  return store.deletePendingLink(db, pendingIdHash(keys.hashKey, origin, id));
}

export function forgetExpiredUpstreamStates(db: Db, clock: Clock): Promise<number> {
  return store.deleteExpired(db, clock());
}

/**
 * `signet import` of a link record (issue 35): binds the upstream identity to the account again. Refused
 * when the account or provider is not here, or the identity is bound to another account.
 */
export async function importLink(db: Db, clock: Clock, input: { sub: string; provider: string; upstreamSub: string; email: string | null; linkedAt?: number | undefined }): Promise<'created' | 'updated'> {
  if (!(await findAccount(db, input.sub))) throw new AccountError('not_found', `no account with sub ${input.sub} (its account record must come first)`);
  if (!(await store.findProvider(db, input.provider))) throw new LinkError('not_found', `no identity provider with the slug ${input.provider} (its provider record must come first)`);
  if (input.upstreamSub.length === 0 || input.upstreamSub.length > 400 || /[\u0000-\u001f]/.test(input.upstreamSub)) throw new LinkError('not_found', 'upstream_sub must have 1 to 400 printable characters');
  const existing = await store.findLink(db, input.provider, input.upstreamSub);
  if (existing) {
    if (existing.sub !== input.sub) throw new LinkError('linked_elsewhere', `this ${input.provider} identity is linked to another account (${existing.sub})`);
    return 'updated';
  }
  // checked before the insert: inside an import's transaction a refused write would end the transaction
  if ((await store.linksOf(db, input.sub)).some((l) => l.provider_slug === input.provider)) throw new LinkError('already_linked', `the account has another ${input.provider} identity linked already`);
  try {
    await store.insertLink(db, { provider_slug: input.provider, upstream_sub: input.upstreamSub, sub: input.sub, email: input.email, linked_at: input.linkedAt ?? clock(), last_used_at: null });
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    throw new LinkError('already_linked', `the account has another ${input.provider} identity linked already`);
  }
  return 'created';
}
