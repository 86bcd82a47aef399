// How a first step that proved who the person is — a password, or an upstream identity provider
// (issue 33) — becomes a sign-in: the second step when the account has a factor (or SIGNET_MFA=required
// and it has none), else a session; then on to the pending request's consent page, as a password
// sign-in goes on. Shared by signin.routes.ts and upstream-signin.routes.ts; the helpers below them all are in signin-flow.ts.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isRememberedBrowser } from '../../accounts/factors/remembered-browser.ts';
import { beginSecondStep, enabledFactorIds, secondStepDue, type Purpose } from '../../accounts/factors/second-step.ts';
import { cookieOptions } from '../cookies.ts';
import { nextAfterSignIn, rotateCsrfSecret, type SecondStepPageContext } from './signin-flow.ts';

/**
 * Whether a correct first step leaves the person half signed in: 'verify' when the account has a factor
 * (unless this browser was remembered for it — the device cookie never skips the step), 'enrol' when
 * SIGNET_MFA=required and it has none.
 */
export async function secondStepAfterFirst(factors: SecondStepPageContext, request: FastifyRequest, sub: string): Promise<Purpose | undefined> {
  const due = await secondStepDue(factors, sub);
  if (due !== 'verify') return due;
  const remembered = isRememberedBrowser(factors.rememberKey, sub, await enabledFactorIds(factors.db, sub), request.cookies[request.server.cookieNames.remembered], factors.clock());
  return remembered ? undefined : due;
}

/**
 * Finishes a correct first step: the second step (`due`, from secondStepAfterFirst) or a session with
 * `amr` (RFC 8176 values; a password when absent). Returns where to send the browser.
 */
export async function finishFirstStep(
  factors: SecondStepPageContext,
  request: FastifyRequest,
  reply: FastifyReply,
  input: { sub: string; due: Purpose | undefined; amr?: readonly string[] | undefined; requestId?: string | undefined; returnTo?: string | undefined },
): Promise<string> {
  if (input.due !== undefined) {
    // spec (issue 19): "Until that step is done there is no signed-in session" — whoever was signed in
    // in this browser is signed out, and the half-signed-in state gets a cookie of its own.
    await reply.signOut();
    const step = await beginSecondStep(factors, { sub: input.sub, purpose: input.due, origin: request.servedOrigin.origin, requestId: input.requestId, returnTo: input.returnTo, firstFactor: input.amr });
    reply.setCookie(request.server.cookieNames.secondStep, step.id, cookieOptions(request, { expiresAt: step.expiresAt }));
  } else {
    await reply.signIn(input.sub, input.amr);
  }
  rotateCsrfSecret(request, reply);
  if (input.due !== undefined) return input.due === 'enrol' ? '/signin/two-step/setup' : '/signin/two-step';
  return nextAfterSignIn(input);
}
