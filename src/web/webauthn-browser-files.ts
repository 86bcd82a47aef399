// @simplewebauthn/browser's ES modules, served from Signet's own origin (no CDN; CSP script-src 'self'):
// the public pages' passkeys.js imports them from /static/vendor/simplewebauthn/, the admin console's
// console-passkeys.js from /admin/static/vendor/simplewebauthn/. One set of @fastify/static options for both.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export function webauthnBrowserFiles(prefix: string) {
  return {
    root: path.dirname(fileURLToPath(import.meta.resolve('@simplewebauthn/browser'))),
    prefix,
    decorateReply: false,
    index: false,
    maxAge: '1h',
    allowedPath: (pathName: string) => pathName.endsWith('.js'),
  } as const;
}
