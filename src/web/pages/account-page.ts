// Drawing /account: the profile (with the e-mail's verification), the password form, the sessions,
// the authorized applications and the notification grid. Every form on the page posts back to a route
// that either redirects here with a notice or draws the page again with its error and what was typed.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { findAccount, MAX_NAME_LENGTH } from '../../accounts/accounts.ts';
import { listPasskeys, MAX_PASSKEY_NAME_LENGTH, relyingPartyFor } from '../../accounts/factors/passkeys.ts';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from '../../accounts/passwords.ts';
import { authenticatorApps, listFactors } from '../../accounts/factors/factors.ts';
import { listSessions } from '../../accounts/sessions.ts';
import { listApiKeys } from '../../accounts/api-keys/api-keys.ts';

import { describeUserAgent } from '../../accounts/user-agent.ts';
import type { Clock } from '../../config/clock.ts';
import { listAuthorizedApplications } from '../../consent/grants.ts';
import { listLinks } from '../../accounts/upstream/links.ts';
import { listProviders } from '../../accounts/upstream/providers.ts';
import { githubEndpoints } from '../../accounts/upstream/upstream-client.ts';
import { allowFormRedirectTo } from '../plugins/security-headers.ts';
import type { Db } from '../../db/database.ts';
import { AVAILABLE_CHANNELS, CATEGORIES, CHANNELS } from '../../notifications/categories.ts';
import { getPreferences, type Preferences } from '../../notifications/preferences.ts';
import type { Messages } from '../i18n/en.ts';
import { formatDate, localeOf, renderPage } from './view.ts';

export type AccountPageContext = { db: Db; clock: Clock; /** Keys.tokenHash: which listed session is this browser's */ sessionKey: Buffer };

type Text = (t: Messages) => string;

/** The API key form's expiry choices, in days (and "never"). */
export const API_KEY_EXPIRY_CHOICES = [30, 90, 365] as const;

/** What a form that came back wants shown: a notice, or an error at one form with what was typed. */
export type AccountPageState = {
  status?: number;
  notice?: ((t: Messages) => string | undefined) | undefined;
  profile?: { name: string; picture: string; error: Text; field: 'name' | 'picture' };
  password?: { error: Text; field: 'current' | 'new' | undefined };
  verificationError?: Text;
  /** the Passkeys section's error (the add form posted without script) */
  passkeyError?: Text;
  /** the Sign-in providers section's error (Unlink refused) */
  providersError?: Text;
  /** issue 40: a key just created, shown this once */
  createdApiKey?: { name: string; key: string };
  /** the API keys section's error, and the name that was typed */
  apiKeyError?: Text;
  apiKeyName?: string;
};

/** The preference grid: a row per category, a column per channel; push channels shown but disabled. */
function preferenceGrid(t: Messages, preferences: Preferences) {
  return {
    channels: CHANNELS.map((channel) => ({ channel, name: t.notificationChannel[channel], available: AVAILABLE_CHANNELS.includes(channel) })),
    rows: CATEGORIES.map((category) => ({
      category,
      name: t.notificationCategory[category],
      cells: CHANNELS.map((channel) => ({ channel, value: `${category}:${channel}`, checked: preferences.categories[category][channel], available: AVAILABLE_CHANNELS.includes(channel) })),
    })),
  };
}

function deviceName(t: Messages, userAgent: string | null): string {
  const { browser, system } = describeUserAgent(userAgent);
  if (!browser && !system) return t.sessions.unknownBrowser;
  return t.sessions.device(browser ?? t.sessions.unknownBrowser, system ?? t.sessions.unknownSystem);
}

export async function showAccount(ctx: AccountPageContext, request: FastifyRequest, reply: FastifyReply, sub: string, state: AccountPageState = {}): Promise<FastifyReply> {
  const locale = localeOf(request);
  const account = await findAccount(ctx.db, sub);
  const preferences = await getPreferences(ctx.db, sub);
  const applications = await listAuthorizedApplications(ctx.db, sub);
  const cookie = request.cookies[request.server.cookieNames.session];
  const sessions = await listSessions(ctx.db, ctx.sessionKey, ctx.clock, sub, cookie ? { id: cookie, origin: request.servedOrigin.origin } : undefined);
  const passkeys = await listPasskeys(ctx.db, sub);
  const apiKeys = await listApiKeys(ctx.db, sub);
  const now = ctx.clock();
  const rp = relyingPartyFor(request.servedOrigin, request.server.site.productName);
  // The browser's own session first, then the others newest first.
  sessions.sort((a, b) => Number(b.current) - Number(a.current));
  // Two-step verification: this section lists the authenticator app (passkeys have their own list).
  const twoStep = await listFactors(ctx.db, sub, [authenticatorApps]);
  // issue 33: "Sign-in providers" — the linked ones with Unlink, the others enabled to link.
  const links = await listLinks(ctx.db, sub);
  const providers = await listProviders(ctx.db);
  const nameOf = (slug: string) => providers.find((p) => p.slug === slug)?.name ?? slug;
  const linkable = providers.filter((p) => p.enabled && !links.some((l) => l.provider === p.slug));
  // "Link NAME" is a form whose answer sends the browser to the upstream: the page's form-action allows it.
  for (const p of linkable) allowFormRedirectTo(reply, p.kind === 'github' ? githubEndpoints(p.issuer).authorize : p.issuer);

  return renderPage(
    ctx.db,
    request,
    reply,
    'account',
    (t) => t.accountTitle,
    (t) => ({
      notice: state.notice?.(t),
      profile: {
        name: state.profile?.name ?? account?.name ?? '',
        picture: state.profile?.picture ?? account?.picture ?? '',
        error: state.profile?.error(t),
        errorField: state.profile?.field,
        nameMaxLength: MAX_NAME_LENGTH,
        email: account?.email ?? undefined,
        emailVerified: account?.email_verified ?? false,
        verificationError: state.verificationError?.(t),
      },
      // issue 19: "list with last-used time, Remove"; a passkey works only on the host it was made on.
      passkeys: {
        available: rp !== undefined,
        error: state.passkeyError?.(t),
        nameMaxLength: MAX_PASSKEY_NAME_LENGTH,
        script: JSON.stringify({ mode: 'register', optionsUrl: '/account/passkeys/options', finishUrl: '/account/passkeys', text: t.passkeys.script }),
        list: passkeys.map((p, index) => ({
          key: String(index),
          id: p.id,
          name: p.name,
          createdIso: new Date(p.createdAt).toISOString(),
          createdText: formatDate(locale, p.createdAt),
          lastUsedIso: p.lastUsedAt === null ? undefined : new Date(p.lastUsedAt).toISOString(),
          lastUsedText: p.lastUsedAt === null ? t.passkeys.neverUsed : formatDate(locale, p.lastUsedAt),
          otherHost: p.rpId === rp?.id ? undefined : t.passkeys.otherHost(p.rpId),
        })),
      },
      // issue 40: "name, created, last used, expiry; Create API key shows the key once; Revoke".
      apiKeys: {
        created: state.createdApiKey,
        error: state.apiKeyError?.(t),
        name: state.apiKeyName ?? '',
        expiryChoices: API_KEY_EXPIRY_CHOICES.map((days) => ({ days, text: t.apiKeys.expiryDays(days) })),
        list: apiKeys.map((k, index) => {
          const at = (iso: string | null) => (iso === null ? undefined : { iso, text: formatDate(locale, Date.parse(iso)) });
          const expired = k.expires_at !== null && Date.parse(k.expires_at) <= now;
          return {
            key: String(index),
            id: k.id,
            name: k.name,
            created: at(k.created_at)!,
            lastUsed: at(k.last_used_at),
            expires: at(k.expires_at),
            revoked: at(k.revoked_at),
            live: k.revoked_at === null && !expired,
            state: k.revoked_at !== null ? t.apiKeys.revoked : expired ? t.apiKeys.expired : undefined,
          };
        }),
      },
      twoStep: {
        apps: twoStep.factors.map((f) => ({
          name: t.twoStep.appName,
          addedIso: new Date(f.createdAt).toISOString(),
          addedText: formatDate(locale, f.createdAt),
          lastUsedIso: f.lastUsedAt === null ? undefined : new Date(f.lastUsedAt).toISOString(),
          lastUsedText: f.lastUsedAt === null ? t.twoStep.never : formatDate(locale, f.lastUsedAt),
        })),
        recoveryLeft: twoStep.recoveryCodesLeft,
      },
      password: { error: state.password?.error(t), errorField: state.password?.field, minLength: MIN_PASSWORD_LENGTH, maxLength: MAX_PASSWORD_LENGTH },
      // spec (issue): "where and when each session signed in"; times with the zone named (UTC).
      sessions: sessions.map((s, index) => ({
        key: String(index),
        handle: s.handle,
        current: s.current,
        device: deviceName(t, s.userAgent),
        ip: s.ip ?? t.sessions.unknownAddress,
        signedInIso: new Date(s.signedInAt).toISOString(),
        signedInText: formatDate(locale, s.signedInAt),
        endsIso: new Date(s.expiresAt).toISOString(),
        endsText: formatDate(locale, s.expiresAt),
      })),
      // spec (issue): "scope names shown as the consent page words them".
      apps: applications.map((a, index) => ({
        key: String(index),
        clientId: a.clientId,
        name: a.name,
        scopes: a.scope.map((name) => ({ name, label: t.scopeLabel[name] })),
        firstAuthorized: formatDate(locale, a.firstAuthorizedAt),
        firstAuthorizedIso: new Date(a.firstAuthorizedAt).toISOString(),
        muted: preferences.muted_clients.includes(a.clientId),
      })),
      grid: preferenceGrid(t, preferences),
      upstream: {
        error: state.providersError?.(t),
        links: links.map((l, index) => ({
          key: String(index),
          slug: l.provider,
          name: nameOf(l.provider),
          email: l.email,
          linkedIso: l.linked_at,
          linkedText: formatDate(locale, Date.parse(l.linked_at)),
        })),
        available: linkable.map((p) => ({ slug: p.slug, text: t.idp.linkAnother(p.name) })),
      },
    }),
    { status: state.status ?? 200, here: '/account' },
  );
}
