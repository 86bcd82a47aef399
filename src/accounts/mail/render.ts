// Account mail as e-mail: subject, plain text and HTML, in the language of the page it was asked from,
// with the operator's product name. Addresses and names are escaped in the HTML part.
import { escapeHtml, htmlEmail, subjectLine, type EmailContent } from '../../notifications/email/render.ts';
import type { AccountMailKind } from './outbox.ts';

export type AccountMailInput = {
  kind: AccountMailKind;
  locale: string;
  productName: string;
  /** the address the message goes to (named in it) */
  email: string;
  /** the link to open: reset, verification, or the sign-in page */
  link: string;
  /** a second link (signup_exists: where to ask for a new password) */
  secondLink?: string | undefined;
};

type Message = { subject: string; lines: string[]; button: string; after: string[] };

type Texts = Record<AccountMailKind, (p: string, email: string, second: string) => Message> & { htmlLang: string; ignore: string };

const TEXTS: Record<'en' | 'zh-CN', Texts> = {
  en: {
    htmlLang: 'en',
    ignore: 'If you did not ask for this, ignore this e-mail: nothing changes.',
    password_reset: (p, email) => ({
      subject: `Set a new ${p} password`,
      lines: [`Someone asked to set a new password for the ${p} account ${email}. If it was you, open this link within 30 minutes. It works once.`],
      button: 'Set a new password',
      after: ['Setting the password signs out every session of the account.'],
    }),
    email_verification: (p, email) => ({
      subject: `Confirm your e-mail address for ${p}`,
      lines: [`Open this link within 24 hours to confirm that ${email} is the address of your ${p} account. It works once.`],
      button: 'Confirm my address',
      after: [],
    }),
    signup_exists: (p, email, second) => ({
      subject: `You already have a ${p} account`,
      lines: [`Someone tried to create a ${p} account for ${email}, which already has one. If it was you, sign in with that account.`],
      button: 'Sign in',
      after: [`Forgot its password? Ask for a new one here: ${second}`],
    }),
  },
  'zh-CN': {
    htmlLang: 'zh-CN',
    ignore: '如果这不是你本人的操作，请忽略此邮件，什么都不会改变。',
    password_reset: (p, email) => ({
      subject: `设置新的 ${p} 密码`,
      lines: [`有人请求为 ${p} 账户 ${email} 设置新密码。如果是你本人，请在 30 分钟内打开此链接。链接只能使用一次。`],
      button: '设置新密码',
      after: ['设置新密码后，该账户的所有会话都会退出登录。'],
    }),
    email_verification: (p, email) => ({
      subject: `确认你在 ${p} 的邮箱地址`,
      lines: [`请在 24 小时内打开此链接，确认 ${email} 是你的 ${p} 账户的邮箱地址。链接只能使用一次。`],
      button: '确认我的邮箱',
      after: [],
    }),
    signup_exists: (p, email, second) => ({
      subject: `你已经有 ${p} 账户了`,
      lines: [`有人尝试用 ${email} 创建 ${p} 账户，但该邮箱已有账户。如果是你本人，请直接用该账户登录。`],
      button: '登录',
      after: [`忘记密码？可以在这里申请设置新密码：${second}`],
    }),
  },
};

export function renderAccountMail(input: AccountMailInput): EmailContent {
  const texts = input.locale === 'zh-CN' ? TEXTS['zh-CN'] : TEXTS.en;
  const m = texts[input.kind](input.productName, input.email, input.secondLink ?? '');
  const text = [...m.lines, '', input.link, '', ...m.after, ...(m.after.length ? [''] : []), texts.ignore, ''].join('\n');
  const html = htmlEmail({
    lang: texts.htmlLang,
    title: m.subject,
    card: `<p style="font-weight:700;margin:0 0 8px">${escapeHtml(input.productName)}</p>
${m.lines.map((line) => `<p>${escapeHtml(line)}</p>`).join('\n')}
<p><a href="${escapeHtml(input.link)}" style="color:#0b57d0">${escapeHtml(m.button)}</a></p>
<p style="font-size:13px;color:#474f5a;word-break:break-all">${escapeHtml(input.link)}</p>
${m.after.map((line) => `<p>${escapeHtml(line)}</p>`).join('\n')}
<p style="font-size:13px;color:#474f5a">${escapeHtml(texts.ignore)}</p>
`,
  });
  return { subject: subjectLine(m.subject), text, html };
}
