// Drawing the two-step pages shared by /account and the sign-in flow: the authenticator set-up page
// (a server-side SVG QR code of the otpauth:// URI and the same key as grouped text) and the recovery
// codes shown once (with Download as a data: URL and Copy through our own script).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { findAccount } from '../../accounts/accounts.ts';
import { recoveryCodesText } from '../../accounts/factors/recovery-codes.ts';
import { beginTotpSetup } from '../../accounts/factors/totp.ts';
import type { SecondStepContext } from '../../accounts/factors/second-step.ts';
import type { Messages } from '../i18n/en.ts';
import { renderPage } from './view.ts';

/** The account's label in the authenticator app: spec "account = the e-mail or phone". */
export async function accountLabel(ctx: SecondStepContext, sub: string): Promise<string> {
  const account = await findAccount(ctx.db, sub);
  return account?.email ?? account?.phone_number ?? sub;
}

/** The key in groups of four, as people copy it by eye. */
export function keyGroups(base32: string): string[] {
  return base32.match(/.{1,4}/g) ?? [];
}

async function qrSvg(uri: string): Promise<string> {
  // Loaded here: only this page draws QR codes.
  const { default: QRCode } = await import('qrcode');
  // The SVG carries no script and no style attribute (fill/stroke are presentation attributes), so
  // the page's CSP (style-src 'self') holds; it is inlined, so no data: URL is needed.
  return QRCode.toString(uri, { type: 'svg', margin: 1, errorCorrectionLevel: 'M' });
}

export type SetupPage = {
  sub: string;
  /** where the form posts: /account/two-step/setup or /signin/two-step/setup */
  action: string;
  returnTo?: string | undefined;
  cancelHref?: string | undefined;
  status?: number;
  error?: ((t: Messages) => string) | undefined;
  notice?: ((t: Messages) => string) | undefined;
  /** false on the sign-in flow's pages (nobody is signed in yet) */
  header?: boolean;
};

export async function showSetup(ctx: SecondStepContext, request: FastifyRequest, reply: FastifyReply, page: SetupPage): Promise<FastifyReply> {
  const issuer = request.server.site.productName;
  const setup = await beginTotpSetup(ctx.db, ctx.factorKey, ctx.clock, { sub: page.sub, issuer, label: await accountLabel(ctx, page.sub) });
  const svg = await qrSvg(setup.uri);
  return renderPage(
    ctx.db,
    request,
    reply,
    'two-step-setup',
    (t) => t.twoStep.setupTitle,
    (t) => ({
      action: page.action,
      returnTo: page.returnTo,
      cancelHref: page.cancelHref,
      // Half signed in (SIGNET_MFA=required): the way out is to start the sign-in again.
      startOver: page.header === false,
      qrSvg: svg,
      setupKey: setup.secretBase32,
      keyGroups: keyGroups(setup.secretBase32),
      error: page.error?.(t),
      notice: page.notice?.(t),
    }),
    { status: page.status ?? 200, header: page.header ?? true, here: page.action },
  );
}

export async function showRecoveryCodes(
  ctx: SecondStepContext,
  request: FastifyRequest,
  reply: FastifyReply,
  input: { sub: string; codes: string[]; continueHref: string; notice: (t: Messages) => string; continueText: (t: Messages) => string },
): Promise<FastifyReply> {
  const product = request.server.site.productName;
  const text = recoveryCodesText(product, await accountLabel(ctx, input.sub), input.codes);
  return renderPage(
    ctx.db,
    request,
    reply,
    'recovery-codes',
    (t) => t.twoStep.codesTitle,
    (t) => ({
      codes: input.codes,
      // Download: a data: URL with the download attribute — the codes never travel in a URL to the server.
      downloadHref: `data:text/plain;charset=utf-8,${encodeURIComponent(text)}`,
      downloadName: `${product.replace(/[^A-Za-z0-9._-]+/g, '-').toLowerCase() || 'signet'}-recovery-codes.txt`,
      continueHref: input.continueHref,
      continueText: input.continueText(t),
      notice: input.notice(t),
    }),
    { here: '/account' },
  );
}
