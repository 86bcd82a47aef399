// Naming the browser and system of a session from its User-Agent, for the person's list of sessions:
// "Firefox on Windows" reads better than a 120-character header. Only the common families; anything
// else is shown as unknown rather than guessed.

export type Device = { browser: string | undefined; system: string | undefined };

const BROWSERS: Array<[RegExp, string]> = [
  [/\bEdg(?:e|A|iOS)?\//, 'Edge'],
  [/\b(?:OPR|Opera)\//, 'Opera'],
  [/\bSamsungBrowser\//, 'Samsung Internet'],
  [/\b(?:Firefox|FxiOS)\//, 'Firefox'],
  [/\b(?:HeadlessChrome|Chrome|CriOS|Chromium)\//, 'Chrome'],
  [/\bVersion\/[\d.]+ (?:Mobile\/\S+ )?Safari\//, 'Safari'],
  [/\bcurl\//, 'curl'],
];

const SYSTEMS: Array<[RegExp, string]> = [
  [/\bWindows\b/, 'Windows'],
  [/\bAndroid\b/, 'Android'],
  [/\b(?:iPhone|iPad|iPod)\b/, 'iOS'],
  [/\bCrOS\b/, 'ChromeOS'],
  [/\bMac OS X\b|\bMacintosh\b/, 'macOS'],
  [/\bLinux\b/, 'Linux'],
];

export function describeUserAgent(userAgent: string | null): Device {
  if (!userAgent) return { browser: undefined, system: undefined };
  return { browser: BROWSERS.find(([pattern]) => pattern.test(userAgent))?.[1], system: SYSTEMS.find(([pattern]) => pattern.test(userAgent))?.[1] };
}
