// Handing a message to the SMTP server (SIGNET_SMTP_URL, From: SIGNET_MAIL_FROM) with nodemailer, and
// reading its refusals: a 4xx answer or no answer at all is worth another try later; a 5xx answer to
// the message is permanent. The reason kept for a person is the server's answer, never the URL (which
// can hold the SMTP password).
import { createTransport } from 'nodemailer';

export type OutgoingEmail = {
  to: string;
  subject: string;
  text: string;
  html: string;
  headers: Record<string, string>;
};

/** What the delivery rules need of a mail server. */
export type Mailer = {
  /** Resolves once the server accepted the message; throws MailSendError otherwise. */
  send(message: OutgoingEmail): Promise<void>;
  close(): void;
};

export class MailSendError extends Error {
  override name = 'MailSendError';
  /** true: retrying cannot help (a 5xx answer); false: try again later */
  readonly permanent: boolean;
  constructor(reason: string, permanent: boolean) {
    super(reason);
    this.permanent = permanent;
  }
}

/**
 * How long one send may wait, in milliseconds. nodemailer's defaults (2 minutes to connect, 10 minutes
 * of silence) would hold a delivery's lease far longer than a stuck server deserves.
 */
export const SMTP_TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000, dnsTimeout: 10_000 };

export function createSmtpMailer(config: { url: string; from: string }): Mailer {
  const transport = createTransport({
    url: config.url,
    ...SMTP_TIMEOUTS,
    // The messages carry no attachments: nodemailer must never read a file or fetch a URL for them.
    disableFileAccess: true,
    disableUrlAccess: true,
    logger: false,
  });
  return {
    async send(message) {
      try {
        await transport.sendMail({ from: config.from, to: message.to, subject: message.subject, text: message.text, html: message.html, headers: message.headers });
      } catch (error) {
        throw sendFailure(error);
      }
    },
    close: () => transport.close(),
  };
}

const UNREACHABLE: Record<string, string> = {
  ETIMEDOUT: 'The mail server did not answer in time.',
  EDNS: 'The mail server’s name could not be resolved.',
  ETLS: 'The TLS connection to the mail server failed.',
  EAUTH: 'The mail server refused Signet’s credentials; the operator should check SIGNET_SMTP_URL.',
  ENOAUTH: 'The mail server wants a login; the operator should add credentials to SIGNET_SMTP_URL.',
};

/** A nodemailer error as a MailSendError: permanent for a 5xx answer to the message, else retryable. */
export function sendFailure(error: unknown): MailSendError {
  const { code, responseCode, response } = (typeof error === 'object' && error !== null ? error : {}) as { code?: unknown; responseCode?: unknown; response?: unknown };
  const errorCode = typeof code === 'string' ? code : undefined;
  // A 5xx to AUTH is the operator's configuration, not this message: it is retried like an outage.
  const permanent = typeof responseCode === 'number' && responseCode >= 500 && errorCode !== 'EAUTH' && errorCode !== 'ENOAUTH';
  if (typeof response === 'string' && response.trim() !== '') {
    // eslint-disable-next-line no-control-regex
    const answer = response.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim().slice(0, 500);
    const prefix = errorCode && UNREACHABLE[errorCode] ? `${UNREACHABLE[errorCode]} ` : '';
    return new MailSendError(`${prefix}The mail server answered: ${answer}`, permanent);
  }
  const reason = (errorCode && UNREACHABLE[errorCode]) ?? `The mail server could not be reached${errorCode ? ` (${errorCode})` : ''}.`;
  return new MailSendError(reason, permanent);
}
