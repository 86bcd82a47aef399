// Rendering the console's pages: Eta templates of its own (escaping by default), the operator's
// language (its own cookie, else Accept-Language), the public pages' messages for the sign-in
// landmarks plus the console's own, and a CSRF token for every form.
import { fileURLToPath } from 'node:url';
import type { Eta } from 'eta';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { chooseLocale, brandedMessages, LOCALES, messages, type Locale } from '../../web/i18n/i18n.ts';
import type { Messages } from '../../web/i18n/en.ts';
import { en, type ConsoleMessages } from './i18n/en.ts';
import { zhCN } from './i18n/zh-CN.ts';

export const CONSOLE_LANGUAGE_COOKIE = 'signet_console_lang';

let eta: Eta | undefined;

async function templates(): Promise<Eta> {
  if (!eta) {
    const { Eta } = await import('eta');
    eta = new Eta({ views: fileURLToPath(new URL('./templates', import.meta.url)), autoEscape: true, cache: true });
  }
  return eta;
}

export function consoleLocale(request: FastifyRequest): Locale {
  return chooseLocale(request.cookies[CONSOLE_LANGUAGE_COOKIE], request.headers['accept-language']);
}

export function consoleMessages(locale: Locale): ConsoleMessages {
  return locale === 'zh-CN' ? zhCN : en;
}

/** The navigation's current page; 'none' shows the navigation with no page current (the 404 page). */
export type NavItem = 'overview' | 'applications' | 'people' | 'audit' | 'tasks' | 'mail' | 'keys' | 'identityProviders' | 'import' | 'none' | undefined;

export type ConsolePage = {
  /** the page's title, in the page's language */
  title: (c: ConsoleMessages, t: Messages) => string;
  /** the template's own data */
  data?: (c: ConsoleMessages, t: Messages, locale: Locale) => Record<string, unknown>;
  status?: number;
  /** the operator's label for the header; undefined on sign-in pages (no navigation) */
  operator?: string | undefined;
  nav?: NavItem;
  notice?: string | undefined;
  error?: string | undefined;
};

export async function renderConsole(request: FastifyRequest, reply: FastifyReply, template: string, page: ConsolePage, productName: string): Promise<FastifyReply> {
  const locale = consoleLocale(request);
  const t = brandedMessages(locale, productName);
  const c = consoleMessages(locale);
  const html = (await templates()).render(template, {
    ...(page.data?.(c, t, locale) ?? {}),
    t,
    c,
    locale,
    locales: LOCALES.map((code) => ({ code, name: messages(code).languageName })),
    title: page.title(c, t),
    productName,
    csrf: reply.generateCsrf(),
    operator: page.operator,
    nav: page.nav,
    notice: page.notice,
    error: page.error,
    here: request.url.length <= 2000 && request.url.startsWith('/admin') ? request.url : '/admin',
    time: (ms: number | null | undefined) => (ms === null || ms === undefined ? '' : formatTime(locale, ms)),
  });
  return reply
    .code(page.status ?? 200)
    .header('cache-control', 'no-store')
    .header('content-language', locale)
    .type('text/html; charset=utf-8')
    .send(html);
}

export function formatTime(locale: Locale, epochMs: number): string {
  return `${new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' }).format(new Date(epochMs))} UTC`;
}
