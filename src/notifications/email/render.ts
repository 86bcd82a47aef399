// A notification as an e-mail: subject, a plain-text part and an HTML part, in the owner's language
// (the notification's own locale, which its title and body are already written in). Everything that
// came from a person or a file (a file name, an error text) is escaped in the HTML part.
import type { Category } from '../categories.ts';
import type { NotificationLocale } from '../messages.ts';

export type EmailContent = { subject: string; text: string; html: string };

export type RenderInput = {
  locale: string;
  category: Category;
  title: string;
  body: string;
  /** a path inside Signet such as /tasks#task-…, or null */
  link: string | null;
  baseUrl: URL;
  /** the one-click unsubscribe URL (also in the List-Unsubscribe header) */
  unsubscribeUrl: string;
};

type MailTexts = {
  htmlLang: string;
  open: string;
  because(category: string): string;
  unsubscribe: string;
  categories: Record<Category, string>;
};

const TEXTS: Record<NotificationLocale, MailTexts> = {
  en: {
    htmlLang: 'en',
    open: 'Open in Signet',
    because: (category) => `You get this e-mail because you turned on e-mail for ${category} notifications.`,
    unsubscribe: 'Stop these e-mails',
    categories: { translation: 'translation', docparse: 'document parsing', security: 'security' },
  },
  'zh-CN': {
    htmlLang: 'zh-CN',
    open: '在 Signet 中查看',
    because: (category) => `你收到这封邮件，是因为你为“${category}”通知开启了电子邮件。`,
    unsubscribe: '不再接收此类邮件',
    categories: { translation: '翻译', docparse: '文档解析', security: '安全' },
  },
};

export function mailTexts(locale: string): MailTexts {
  return locale === 'zh-CN' ? TEXTS['zh-CN'] : TEXTS.en;
}

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** `{base_url}{link}` for a path inside Signet; anything else (an absolute or protocol-relative URL) is not linked. */
export function notificationUrl(baseUrl: URL, link: string | null): string | undefined {
  if (link === null || !link.startsWith('/') || link.startsWith('//') || /[\s\\]/.test(link)) return undefined;
  return `${baseUrl.origin}${link}`;
}

export function renderEmail(input: RenderInput): EmailContent {
  const t = mailTexts(input.locale);
  const url = notificationUrl(input.baseUrl, input.link);
  const because = t.because(t.categories[input.category]);
  const text = [input.title, '', input.body, ...(url ? ['', `${t.open}: ${url}`] : []), '', '-- ', because, `${t.unsubscribe}: ${input.unsubscribeUrl}`, ''].join('\n');
  const paragraph = (value: string) => escapeHtml(value).replace(/\r?\n/g, '<br>\n');
  const html = htmlEmail({
    lang: t.htmlLang,
    title: input.title,
    card: `<h1 style="font-size:20px;margin:0 0 8px">${escapeHtml(input.title)}</h1>
<p>${paragraph(input.body)}</p>
${url ? `<p><a href="${escapeHtml(url)}" style="color:#0b57d0">${escapeHtml(t.open)}</a></p>\n` : ''}`,
    below: `<p style="max-width:34rem;margin:16px auto 0;font-size:13px;color:#474f5a">${escapeHtml(because)} <a href="${escapeHtml(input.unsubscribeUrl)}" style="color:#0b57d0">${escapeHtml(t.unsubscribe)}</a></p>\n`,
  });
  return { subject: subjectLine(input.title), text, html };
}

/**
 * The HTML part of every e-mail Signet sends (notifications and account mail): a page titled `title`,
 * `card` (HTML, each line ending in a line break) in a white box, and `below` (HTML, the same) under it.
 */
export function htmlEmail(input: { lang: string; title: string; card: string; below?: string }): string {
  return `<!doctype html>
<html lang="${input.lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(input.title)}</title>
</head>
<body style="margin:0;padding:24px;background:#f4f5f7;color:#1b1f24;font-family:system-ui,-apple-system,'Segoe UI','PingFang SC','Noto Sans CJK SC','Microsoft YaHei',sans-serif;line-height:1.5">
<div style="max-width:34rem;margin:0 auto;background:#fff;border:1px solid #d0d4da;border-radius:8px;padding:16px">
${input.card}</div>
${input.below ?? ''}</body>
</html>
`;
}

/** A header is one line: a subject never carries a line break into it. */
export function subjectLine(subject: string): string {
  return subject.replace(/\s+/g, ' ').trim();
}
