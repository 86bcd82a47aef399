// The small pages of /unsubscribe, in the visitor's language: confirm (GET), done (POST), and a link
// that is not valid. Self-contained HTML on the site stylesheet; every inserted value is escaped.
import type { Category } from '../categories.ts';
import { escapeHtml, mailTexts } from './render.ts';

type PageTexts = {
  title: string;
  confirm(category: string): string;
  stillInInbox: string;
  button: string;
  done(category: string): string;
  turnBackOn: string;
  invalidTitle: string;
  invalid: string;
};

const TEXTS: Record<'en' | 'zh-CN', PageTexts> = {
  en: {
    title: 'Stop e-mail notifications',
    confirm: (category) => `Stop e-mail about ${category} notifications?`,
    stillInInbox: 'You will still see them in your Signet inbox.',
    button: 'Stop these e-mails',
    done: (category) => `You will no longer get e-mail about ${category} notifications.`,
    turnBackOn: 'You can turn it back on at any time in your notification settings.',
    invalidTitle: 'This unsubscribe link is not valid',
    invalid: 'It may be incomplete. Open the whole link from the e-mail again, or sign in to Signet and change your notification settings there.',
  },
  'zh-CN': {
    title: '停止电子邮件通知',
    confirm: (category) => `不再接收“${category}”通知的电子邮件？`,
    stillInInbox: '你仍会在 Signet 收件箱中看到这些通知。',
    button: '不再接收此类邮件',
    done: (category) => `你将不再收到“${category}”通知的电子邮件。`,
    turnBackOn: '你可以随时在通知设置中重新开启。',
    invalidTitle: '此退订链接无效',
    invalid: '链接可能不完整。请从邮件中重新打开完整的链接，或登录 Signet 后在通知设置中更改。',
  },
};

function page(locale: string, title: string, body: string): string {
  const lang = locale === 'zh-CN' ? 'zh-CN' : 'en';
  return `<!doctype html>
<html lang="${lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)} · Signet</title>
<link rel="stylesheet" href="/static/signet.css">
</head>
<body>
<main id="main">
${body}
</main>
</body>
</html>
`;
}

function textsFor(locale: string): PageTexts {
  return locale === 'zh-CN' ? TEXTS['zh-CN'] : TEXTS.en;
}

/** GET: what the button will do. Mail scanners follow links, so the page itself changes nothing. */
export function confirmPage(locale: string, category: Category, token: string): string {
  const t = textsFor(locale);
  const name = mailTexts(locale).categories[category];
  return page(
    locale,
    t.title,
    `<h1>${escapeHtml(t.confirm(name))}</h1>
<p class="lead">${escapeHtml(t.stillInInbox)}</p>
<form class="card" method="post" action="/unsubscribe?token=${escapeHtml(encodeURIComponent(token))}">
<input type="hidden" name="List-Unsubscribe" value="One-Click">
<button class="primary" type="submit">${escapeHtml(t.button)}</button>
</form>`,
  );
}

export function donePage(locale: string, category: Category): string {
  const t = textsFor(locale);
  const name = mailTexts(locale).categories[category];
  return page(locale, t.title, `<h1>${escapeHtml(t.title)}</h1>\n<p class="notice" role="status">${escapeHtml(t.done(name))}</p>\n<p>${escapeHtml(t.turnBackOn)}</p>`);
}

export function invalidLinkPage(locale: string): string {
  const t = textsFor(locale);
  return page(locale, t.invalidTitle, `<h1>${escapeHtml(t.invalidTitle)}</h1>\n<p class="error" role="alert">${escapeHtml(t.invalid)}</p>`);
}
