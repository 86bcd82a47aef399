// Branding: SIGNET_PRODUCT_NAME, SIGNET_LOGO_URL and SIGNET_ACCENT_COLOR are checked at start, shown in
// every page's header and title, and the accent reaches the pages through /static/brand.css (the CSP
// forbids inline styles) in colours that stay readable whatever the operator picked.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseSettings, SettingsError } from '../../src/config/settings.ts';
import { accentPalette, brandStylesheet, contrastRatio, DEFAULT_ACCENT } from '../../src/web/branding.ts';
import { sqliteDatabase } from '../helpers/databases.ts';
import { flowSetup, TinyBrowser } from '../oauth/authorize-support.ts';

test('settings: the brand defaults to Signet with its own colour and no logo; sign-up is closed', () => {
  const s = parseSettings({});
  assert.deepEqual(s.brand, { productName: 'Signet', logoUrl: undefined, accentColor: undefined });
  assert.equal(s.signup, 'closed');
  assert.equal(parseSettings({ SIGNET_SIGNUP: 'open' }).signup, 'open');
  assert.deepEqual(parseSettings({ SIGNET_PRODUCT_NAME: 'Acme ID', SIGNET_LOGO_URL: 'https://cdn.acme.example/logo.svg', SIGNET_ACCENT_COLOR: '#7A1FA2' }).brand, {
    productName: 'Acme ID',
    logoUrl: 'https://cdn.acme.example/logo.svg',
    accentColor: '#7a1fa2',
  });
});

test('settings: "a setting with a wrong value stops the process at start with one line naming the variable"', () => {
  for (const [variable, value] of [
    ['SIGNET_LOGO_URL', 'http://cdn.acme.example/logo.svg'],
    ['SIGNET_LOGO_URL', 'logo.svg'],
    ['SIGNET_LOGO_URL', 'https://user:secret@cdn.acme.example/logo.svg'],
    ['SIGNET_ACCENT_COLOR', 'purple'],
    ['SIGNET_ACCENT_COLOR', '#7a1fa'],
    ['SIGNET_PRODUCT_NAME', 'x'.repeat(61)],
    ['SIGNET_PRODUCT_NAME', 'Acme\nID'],
    ['SIGNET_SIGNUP', 'yes'],
  ] as const) {
    assert.throws(
      () => parseSettings({ [variable]: value }),
      (error: unknown) => error instanceof SettingsError && error.variable === variable && !error.message.includes('\n'),
      `${variable}=${JSON.stringify(value)}`,
    );
  }
});

test('the accent stays readable whatever the colour: text on it reaches 4.5:1 (white or black), and as text on the page it is darkened until it reaches 4.5:1', () => {
  for (let r = 0; r < 256; r += 17) {
    for (let g = 0; g < 256; g += 17) {
      for (let b = 0; b < 256; b += 17) {
        const accent = `#${[r, g, b].map((c) => c.toString(16).padStart(2, '0')).join('')}`;
        const palette = accentPalette(accent);
        assert.equal(palette.accent, accent);
        assert.ok(contrastRatio(palette.onAccent, accent) >= 4.5, `${accent}: ${palette.onAccent} on it`);
        assert.ok(contrastRatio(palette.accentText, '#f4f5f7') >= 4.5, `${accent}: ${palette.accentText} as text`);
      }
    }
  }
  assert.deepEqual(accentPalette(DEFAULT_ACCENT), { accent: '#0b57d0', onAccent: '#ffffff', accentText: '#0b57d0' }, "Signet's own colour is used as it is");
  assert.equal(accentPalette('#ffeb3b').onAccent, '#000000', 'black on yellow');
  assert.match(brandStylesheet('#7a1fa2'), /--accent: #7a1fa2; --on-accent: #ffffff; --accent-text: #7a1fa2;/);
});

test('pages: the product name and logo in every header and title, {product} filled in the page text, the accent through /static/brand.css', async () => {
  const database = await sqliteDatabase();
  try {
    const flow = await flowSetup(database, { SIGNET_PRODUCT_NAME: 'Acme <ID>', SIGNET_LOGO_URL: 'https://cdn.acme.example/logo.svg?x=1&y=2', SIGNET_ACCENT_COLOR: '#ffeb3b', SIGNET_SIGNUP: 'open' });
    const browser = new TinyBrowser(flow);
    const signin = await browser.get('/signin');
    assert.match(signin.body, /<title>Sign in · Acme &lt;ID&gt;<\/title>/);
    assert.match(signin.body, /<a class="brand" href="\/account"><img class="brand-logo" src="https:\/\/cdn\.acme\.example\/logo\.svg\?x=1&amp;y=2" alt=""><span>Acme &lt;ID&gt;<\/span><\/a>/);
    assert.match(signin.body, /<h1>Sign in to Acme &lt;ID&gt;<\/h1>/);
    const stylesheet = /<link rel="stylesheet" href="(\/static\/brand\.css\?v=[A-Za-z0-9_-]+)">/.exec(signin.body)?.[1];
    assert.ok(stylesheet, 'every page links the brand stylesheet, versioned by its content');
    for (const path of ['/forgot-password', '/signup']) {
      const page = await browser.get(path);
      assert.equal(page.statusCode, 200, path);
      assert.ok(page.body.includes(`href="${stylesheet}"`) && page.body.includes('<span>Acme &lt;ID&gt;</span>'), path);
    }
    await browser.signIn();
    const account = await browser.get('/account');
    assert.ok(account.body.includes('<span>Acme &lt;ID&gt;</span>') && account.body.includes(`href="${stylesheet}"`), '/account');

    const css = await browser.get(stylesheet);
    assert.equal(css.statusCode, 200);
    assert.match(String(css.headers['content-type']), /^text\/css/);
    assert.match(css.body, /--accent: #ffeb3b; --on-accent: #000000; --accent-text: #[0-9a-f]{6};/);
    assert.doesNotMatch(String(css.headers['content-security-policy']), /unsafe-inline/);

    const chinese = await new TinyBrowser(flow, flow.host, { 'accept-language': 'zh-CN' }).get('/signin');
    assert.match(chinese.body, /<h1>登录 Acme &lt;ID&gt;<\/h1>/);
  } finally {
    await database.dispose();
  }
});

test('pages: without branding settings, Signet and its own colour', async () => {
  const database = await sqliteDatabase();
  try {
    const flow = await flowSetup(database);
    const signin = await new TinyBrowser(flow).get('/signin');
    assert.match(signin.body, /<span>Signet<\/span>/);
    assert.doesNotMatch(signin.body, /brand-logo/);
    assert.match(signin.body, /<h1>Sign in to Signet<\/h1>/);
    const stylesheet = /href="(\/static\/brand\.css\?v=[^"]+)"/.exec(signin.body)![1]!;
    assert.match((await new TinyBrowser(flow).get(stylesheet)).body, /--accent: #0b57d0;/);
  } finally {
    await database.dispose();
  }
});
