// What a notification says, per category and event, in the owner's language.
import type { Category } from './categories.ts';

export type NotificationLocale = 'en' | 'zh-CN';

type Texts = { title: string; body: string };

export type NotificationEvent =
  | { category: 'translation' | 'docparse'; outcome: 'finished'; fileName: string }
  | { category: 'translation' | 'docparse'; outcome: 'failed'; fileName: string; error: string }
  | { category: 'security'; outcome: 'authorized'; applicationName: string };

const TEXTS: Record<NotificationLocale, (event: NotificationEvent) => Texts> = {
  en: (e) => {
    if (e.category === 'security') return { title: `${e.applicationName} can now sign you in`, body: `You allowed ${e.applicationName} to use your account. If this was not you, withdraw it under Account and change your password.` };
    const what = e.category === 'translation' ? 'Translation' : 'Document parsing';
    return e.outcome === 'finished'
      ? { title: `${what} of ${e.fileName} finished`, body: `The results are ready to download under Tasks.` }
      : { title: `${what} of ${e.fileName} failed`, body: e.error };
  },
  'zh-CN': (e) => {
    if (e.category === 'security') return { title: `${e.applicationName} 现在可以让你登录`, body: `你已允许 ${e.applicationName} 使用你的帐户。如果这不是你本人的操作，请在“帐户”中撤销并修改密码。` };
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
