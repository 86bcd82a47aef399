// Branding: the operator's product name, logo and accent colour (SIGNET_PRODUCT_NAME, SIGNET_LOGO_URL,
// SIGNET_ACCENT_COLOR) on every page's header. The CSP forbids inline styles, so the colour reaches
// the pages as a small stylesheet generated once from the setting, /static/brand.css, which sets the
// custom properties static/signet.css draws with. Its address carries a hash of its content, so a new
// colour is fetched at once after a restart however long browsers keep the old one.
import { createHash } from 'node:crypto';
import fp from 'fastify-plugin';
import type { Settings } from '../config/settings.ts';

/** The colour of Signet's own pages. */
export const DEFAULT_ACCENT = '#0b57d0';
/** The page background the accent is drawn on as text (links, focus rings); the lightest is #fff. */
const PAGE_BACKGROUND = '#f4f5f7';
/** WCAG 2.x AA for normal text. */
const TEXT_CONTRAST = 4.5;

/** What every page needs to know about the site it is on. */
export type Site = {
  productName: string;
  logoUrl: string | undefined;
  /** the generated stylesheet, with its content hash */
  stylesheet: string;
  /** SIGNET_SIGNUP=open: the sign-in page links to /signup */
  signupOpen: boolean;
};

declare module 'fastify' {
  interface FastifyInstance {
    site: Site;
  }
}

type Rgb = [number, number, number];

function parseHex(hex: string): Rgb {
  return [1, 3, 5].map((at) => parseInt(hex.slice(at, at + 2), 16)) as Rgb;
}

function toHex(rgb: Rgb): string {
  return `#${rgb.map((c) => Math.round(c).toString(16).padStart(2, '0')).join('')}`;
}

/** WCAG relative luminance. */
function luminance(rgb: Rgb): number {
  const [r, g, b] = rgb.map((c) => {
    const s = c / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  }) as Rgb;
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

export function contrastRatio(a: string, b: string): number {
  const [la, lb] = [luminance(parseHex(a)), luminance(parseHex(b))];
  return (Math.max(la, lb) + 0.05) / (Math.min(la, lb) + 0.05);
}

/**
 * The three colours drawn from an accent, each readable whatever the operator picked:
 * - `accent`: the colour itself, as the background of primary buttons and the header's stripe;
 * - `onAccent`: white or black, whichever reads better on it (one of the two always reaches 4.5:1);
 * - `accentText`: the accent as text on the page (links, focus rings), darkened until it reaches 4.5:1.
 */
export function accentPalette(accent: string): { accent: string; onAccent: string; accentText: string } {
  const onAccent = contrastRatio(accent, '#ffffff') >= contrastRatio(accent, '#000000') ? '#ffffff' : '#000000';
  let text = parseHex(accent);
  for (let step = 0; step < 40 && contrastRatio(toHex(text), PAGE_BACKGROUND) < TEXT_CONTRAST; step++) {
    text = text.map((c) => c * 0.9) as Rgb;
  }
  return { accent, onAccent, accentText: toHex(text) };
}

export function brandStylesheet(accent: string): string {
  const palette = accentPalette(accent);
  return `/* Generated from SIGNET_ACCENT_COLOR (${accent}). */\n:root { --accent: ${palette.accent}; --on-accent: ${palette.onAccent}; --accent-text: ${palette.accentText}; }\n`;
}

export const branding = fp<{ settings: Pick<Settings, 'brand' | 'signup'> }>(
  async (app, { settings }) => {
    const css = brandStylesheet(settings.brand.accentColor ?? DEFAULT_ACCENT);
    const version = createHash('sha256').update(css).digest('base64url').slice(0, 12);
    app.decorate('site', {
      productName: settings.brand.productName,
      logoUrl: settings.brand.logoUrl,
      stylesheet: `/static/brand.css?v=${version}`,
      signupOpen: settings.signup === 'open',
    } satisfies Site);
    app.get('/static/brand.css', async (_request, reply) => reply.type('text/css; charset=utf-8').header('cache-control', 'public, max-age=31536000, immutable').send(css));
  },
  { name: 'signet-branding' },
);
