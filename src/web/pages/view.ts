// Rendering server pages: Eta templates (escaping by default), the chosen language, the signed-in
// person for the shared header, and a CSRF token for the forms.
import { fileURLToPath } from 'node:url';
import type { Eta } from 'eta';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { findAccount } from '../../accounts/accounts.ts';
import type { Db } from '../../db/database.ts';
import { unreadCount } from '../../notifications/inbox.ts';
import type { Site } from '../branding.ts';
import { brandedMessages, chooseLocale, LOCALES, messages, type Locale } from '../i18n/i18n.ts';
import type { Messages } from '../i18n/en.ts';

/** How long the language choice is kept. */
export const YEAR_MS = 365 * 24 * 60 * 60 * 1000;

let eta: Eta | undefined;

/** The template engine, created on first use (CLI commands import this module but render nothing). */
async function templates(): Promise<Eta> {
  if (!eta) {
    const { Eta } = await import('eta');
    eta = new Eta({ views: fileURLToPath(new URL('../templates', import.meta.url)), autoEscape: true, cache: true });
  }
  return eta;
}

/** The language of this request: the switch's cookie, then an OpenID application's ui_locales (while its sign-in is pending), then Accept-Language, then English. */
export function localeOf(request: FastifyRequest): Locale {
  const raw = request.cookies[request.server.cookieNames.language];
  const chosen = raw ? request.unsignCookie(raw) : undefined;
  return chooseLocale(chosen?.valid ? (chosen.value ?? undefined) : undefined, request.headers['accept-language'], request.cookies[request.server.cookieNames.uiLocale]);
}

/**
 * A local path to come back to: never another site (no scheme, no `//`, no backslash), and only
 * characters a URL carries as they are — RFC 3986 path and query characters, well-formed %-escapes, and
 * the few (`[]{}|^`) browsers leave unescaped. A control or non-ASCII character is refused: in a
 * Location header it cannot be sent at all (Node refuses the response) or arrives mangled.
 */
export function localPath(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length > 2000) return undefined;
  return /^\/(?![/\\])(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?[\]{}|^]|%[0-9A-Fa-f]{2})*$/.test(value) ? value : undefined;
}

/** What every page template receives. */
export type PageData = {
  t: Messages;
  locale: Locale;
  locales: Array<{ code: Locale; name: string }>;
  title: string;
  csrf: string;
  /** where the language switch comes back to */
  here: string;
  /** shown in the shared header when someone is signed in */
  signedInAs: string | undefined;
  /** the operator's product name, logo and brand stylesheet (every page's header), and whether sign-up is open */
  site: Site;
  /** the header's unread badge (signed-in pages): the count, its accessible label, and the label
   * patterns static/inbox.js uses when the count changes live */
  unread: { count: number; label: string; labels: string } | undefined;
};

/** The inbox link's accessible name for a count, e.g. "Inbox, 3 unread". */
export function unreadLabel(t: Messages, count: number): string {
  const pattern = count === 0 ? t.inbox.badgeNone : count === 1 ? t.inbox.badgeOne : t.inbox.badgeOther;
  return pattern.replace('{count}', String(count));
}

export type RenderOptions = {
  status?: number;
  /** look up the session for the header (pages that already know nobody is signed in skip it) */
  header?: boolean;
  /** the page's own address, for the language switch to come back to (default: the request's URL) */
  here?: string;
};

export async function renderPage(
  db: Db,
  request: FastifyRequest,
  reply: FastifyReply,
  template: string,
  title: (t: Messages) => string,
  /** the template's own data; a function when it holds text in the page's language */
  data: Record<string, unknown> | ((t: Messages) => Record<string, unknown>) = {},
  options: RenderOptions = {},
): Promise<FastifyReply> {
  const locale = localeOf(request);
  const site = request.server.site;
  const t = brandedMessages(locale, site.productName);
  let signedInAs: string | undefined;
  let unread: PageData['unread'];
  if (options.header !== false) {
    const session = await request.currentSession();
    const account = session && (await findAccount(db, session.sub));
    signedInAs = account ? (account.email ?? account.phone_number ?? account.name ?? account.sub) : undefined;
    if (account) {
      const count = await unreadCount(db, account.sub);
      unread = { count, label: unreadLabel(t, count), labels: JSON.stringify({ none: t.inbox.badgeNone, one: t.inbox.badgeOne, other: t.inbox.badgeOther }) };
    }
  }
  const page: PageData = {
    t,
    locale,
    locales: LOCALES.map((code) => ({ code, name: messages(code).languageName })),
    title: title(t),
    csrf: reply.csrfToken(),
    here: options.here ?? localPath(request.url) ?? '/account',
    signedInAs,
    unread,
    site,
  };
  const own = typeof data === 'function' ? data(t) : data;
  const html = (await templates()).render(template, { ...own, ...page });
  return reply
    .code(options.status ?? 200)
    .header('cache-control', 'no-store')
    .header('content-language', locale)
    .type('text/html; charset=utf-8')
    .send(html);
}

/**
 * A page with one message and a way on (template `message`): its heading is its title, and a status
 * of 400 or more shows the message as an alert.
 */
export function renderMessage(
  db: Db,
  request: FastifyRequest,
  reply: FastifyReply,
  content: (t: Messages) => { title: string; message: string; link: { href: string; text: string } },
  options: RenderOptions = {},
): Promise<FastifyReply> {
  const failed = (options.status ?? 200) >= 400;
  return renderPage(
    db,
    request,
    reply,
    'message',
    (t) => content(t).title,
    (t) => {
      const { title, message, link } = content(t);
      return { heading: title, message, failed, links: [link] };
    },
    options,
  );
}

/** An error page that says what to do next. */
export function renderError(db: Db, request: FastifyRequest, reply: FastifyReply, status: number, message: (t: Messages) => string, options: { header?: boolean } = {}): Promise<FastifyReply> {
  return renderPage(db, request, reply, 'error', (t) => t.errorTitle, (t) => ({ message: message(t) }), { status, header: options.header ?? false });
}

export function formatDate(locale: Locale, epochMs: number): string {
  return `${new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' }).format(new Date(epochMs))} UTC`;
}

/** A size in the page's language: 830 byte, 12 kB, 3.4 MB. */
export function formatSize(locale: Locale, bytes: number): string {
  const [unit, value] = bytes < 1024 ? ['byte', bytes] : bytes < 1024 * 1024 ? ['kilobyte', bytes / 1024] : ['megabyte', bytes / 1024 / 1024];
  return new Intl.NumberFormat(locale, { style: 'unit', unit, unitDisplay: 'short', maximumFractionDigits: value < 10 ? 1 : 0 }).format(value);
}
