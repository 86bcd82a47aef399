// Notification categories and channels, in one place: a new category is one line here (and its texts
// in messages.ts).

export const CATEGORIES = ['translation', 'docparse', 'security'] as const;
export type Category = (typeof CATEGORIES)[number];

export const CHANNELS = ['in_app', 'email', 'browser_push', 'mobile_push'] as const;
export type Channel = (typeof CHANNELS)[number];

/** Channels a person can turn on. Push needs device registration, which Signet does not offer. */
export const AVAILABLE_CHANNELS: readonly Channel[] = ['in_app', 'email'];

/** spec: in-app on; "e-mail, off by default for every category (the user opts in)"; push not available. */
export const DEFAULT_PREFERENCES: Record<Channel, boolean> = { in_app: true, email: false, browser_push: false, mobile_push: false };

export function isCategory(value: unknown): value is Category {
  return typeof value === 'string' && (CATEGORIES as readonly string[]).includes(value);
}

export function isChannel(value: unknown): value is Channel {
  return typeof value === 'string' && (CHANNELS as readonly string[]).includes(value);
}
