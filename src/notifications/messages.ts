// What a notification says, per category and event, in the owner's language.
import type { Category } from './categories.ts';

export type NotificationLocale = 'en' | 'zh-CN';

type Texts = { title: string; body: string };

export type NotificationEvent =
  | { category: 'translation' | 'docparse'; outcome: 'finished'; fileName: string }
  | { category: 'translation' | 'docparse'; outcome: 'failed'; fileName: string; error: string }
  | { category: 'security'; outcome: 'authorized'; applicationName: string }
  /** issue 19: a second factor was turned on or off, a recovery code used, or an operator removed them all */
  | { category: 'security'; outcome: 'factor_added' | 'factor_removed'; factorName: string }
  | { category: 'security'; outcome: 'recovery_code_used'; remaining: number }
  | { category: 'security'; outcome: 'factors_reset' }
  | { category: 'security'; outcome: 'passkey_added' | 'passkey_removed'; passkeyName: string };

type FactorEvent = Exclude<NotificationEvent, { outcome: 'authorized' | 'finished' | 'failed' }>;

const FACTOR_TEXTS: Record<NotificationLocale, (event: FactorEvent) => Texts> = {
  en: (e) => {
    const notYou = 'If this was not you, change your password at once and check Two-step verification under Account.';
    switch (e.outcome) {
      case 'passkey_added':
        return { title: 'A passkey was added to your account', body: `The passkey “${e.passkeyName}” can now sign in to your account. If this was not you, remove it under Account and change your password.` };
      case 'passkey_removed':
        return { title: 'A passkey was removed from your account', body: `The passkey “${e.passkeyName}” can no longer sign in to your account. If this was not you, change your password and check your passkeys under Account.` };
      case 'factor_added':
        return { title: `Two-step verification: ${e.factorName} added`, body: `Signing in now also asks for a code from ${e.factorName}. ${notYou}` };
      case 'factor_removed':
        return { title: `Two-step verification: ${e.factorName} removed`, body: `${e.factorName} no longer signs you in. ${notYou}` };
      case 'recovery_code_used':
        return { title: 'A recovery code was used to sign in', body: `${e.remaining} unused recovery codes are left. ${notYou}` };
      case 'factors_reset':
        return { title: 'Two-step verification was reset', body: `An administrator removed your second factors and recovery codes, and signed out every session. ${notYou}` };
    }
  },
  'zh-CN': (e) => {
    const notYou = '如果这不是你本人的操作，请立即修改密码，并在“账户”的“两步验证”中检查。';
    switch (e.outcome) {
      case 'passkey_added':
        return { title: '你的帐户添加了一个通行密钥', body: `通行密钥“${e.passkeyName}”现在可以登录你的帐户。如果这不是你本人的操作，请在“帐户”中将其移除并修改密码。` };
      case 'passkey_removed':
        return { title: '你的帐户移除了一个通行密钥', body: `通行密钥“${e.passkeyName}”已不能再登录你的帐户。如果这不是你本人的操作，请修改密码并在“帐户”中检查你的通行密钥。` };
      case 'factor_added':
        return { title: `两步验证：已添加 ${e.factorName}`, body: `登录时现在还需要 ${e.factorName} 的验证码。${notYou}` };
      case 'factor_removed':
        return { title: `两步验证：已移除 ${e.factorName}`, body: `${e.factorName} 不再用于登录。${notYou}` };
      case 'recovery_code_used':
        return { title: '有人使用恢复码登录', body: `还剩 ${e.remaining} 个未用的恢复码。${notYou}` };
      case 'factors_reset':
        return { title: '两步验证已被重置', body: `管理员移除了你的第二因素和恢复码，并退出了所有会话。${notYou}` };
    }
  },
};

const TEXTS: Record<NotificationLocale, (event: NotificationEvent) => Texts> = {
  en: (e) => {
    if (e.category === 'security' && e.outcome !== 'authorized') return FACTOR_TEXTS.en(e);
    if (e.category === 'security') return { title: `${e.applicationName} can now sign you in`, body: `You allowed ${e.applicationName} to use your account. If this was not you, withdraw it under Account and change your password.` };
    const what = e.category === 'translation' ? 'Translation' : 'Document parsing';
    return e.outcome === 'finished'
      ? { title: `${what} of ${e.fileName} finished`, body: `The results are ready to download under Tasks.` }
      : { title: `${what} of ${e.fileName} failed`, body: e.error };
  },
  'zh-CN': (e) => {
    if (e.category === 'security' && e.outcome !== 'authorized') return FACTOR_TEXTS['zh-CN'](e);
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
