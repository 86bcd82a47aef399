// What a notification says, per category and event, in the owner's language.
import type { Category } from './categories.ts';

export type NotificationLocale = 'en' | 'zh-CN';

type Texts = { title: string; body: string };

export type NotificationEvent =
  | { category: 'translation' | 'docparse'; outcome: 'finished'; fileName: string }
  | { category: 'translation' | 'docparse'; outcome: 'failed'; fileName: string; error: string }
  | { category: 'security'; outcome: 'authorized'; applicationName: string }
  /** issue 19: "Security notifications … when a factor is added or removed" */
  | { category: 'security'; outcome: 'passkey_added'; passkeyName: string }
  | { category: 'security'; outcome: 'passkey_removed'; passkeyName: string };

const TEXTS: Record<NotificationLocale, (event: NotificationEvent) => Texts> = {
  en: (e) => {
    if (e.outcome === 'passkey_added') return { title: 'A passkey was added to your account', body: `The passkey “${e.passkeyName}” can now sign in to your account. If this was not you, remove it under Account and change your password.` };
    if (e.outcome === 'passkey_removed') return { title: 'A passkey was removed from your account', body: `The passkey “${e.passkeyName}” can no longer sign in to your account. If this was not you, change your password and check your passkeys under Account.` };
    if (e.outcome === 'authorized') return { title: `${e.applicationName} can now sign you in`, body: `You allowed ${e.applicationName} to use your account. If this was not you, withdraw it under Account and change your password.` };
    const what = e.category === 'translation' ? 'Translation' : 'Document parsing';
    return e.outcome === 'finished'
      ? { title: `${what} of ${e.fileName} finished`, body: `The results are ready to download under Tasks.` }
      : { title: `${what} of ${e.fileName} failed`, body: e.error };
  },
  'zh-CN': (e) => {
    if (e.outcome === 'passkey_added') return { title: '你的帐户添加了一个通行密钥', body: `通行密钥“${e.passkeyName}”现在可以登录你的帐户。如果这不是你本人的操作，请在“帐户”中将其移除并修改密码。` };
    if (e.outcome === 'passkey_removed') return { title: '你的帐户移除了一个通行密钥', body: `通行密钥“${e.passkeyName}”已不能再登录你的帐户。如果这不是你本人的操作，请修改密码并在“帐户”中检查你的通行密钥。` };
    if (e.outcome === 'authorized') return { title: `${e.applicationName} 现在可以让你登录`, body: `你已允许 ${e.applicationName} 使用你的帐户。如果这不是你本人的操作，请在“帐户”中撤销并修改密码。` };
    const what = e.category === 'translation' ? '翻译' : '文档解析';
    return e.outcome === 'finished'
      ? { title: `${e.fileName} 的${what}已完成`, body: `可以在“任务”中下载结果。` }
      : { title: `${e.fileName} 的${what}失败`, body: e.error };
  },
};

export function textsFor(locale: string, event: NotificationEvent): Texts {
  return (locale === 'zh-CN' ? TEXTS['zh-CN'] : TEXTS.en)(event);
}

export function categoryOf(event: NotificationEvent): Category {
  return event.category;
}
