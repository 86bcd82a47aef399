// A real SMTP server on 127.0.0.1 (smtp-server) for the e-mail tests: it keeps every message it accepts,
// and can be told to refuse recipients for now (4xx), for good (5xx), or to be down (nothing listening
// on its port) and back up on the same port.
import type { AddressInfo } from 'node:net';
import PostalMime, { type Email } from 'postal-mime';
import { SMTPServer, type SMTPServerError } from 'smtp-server';

export type ReceivedMail = { from: string; to: string[]; raw: Buffer };

export type Answer = 'accept' | 'temporary' | 'permanent';

export type TestSmtp = {
  /** The SIGNET_SMTP_URL for this server. */
  url: string;
  /** Every message accepted so far, oldest first. */
  received: ReceivedMail[];
  /** How RCPT TO is answered from now on: 250, 451 (try again later) or 550 (no such mailbox). */
  answer(mode: Answer): void;
  /** Stops listening: connections are refused, as when the mail server is down. */
  down(): Promise<void>;
  /** Listens again on the same port. */
  up(): Promise<void>;
  close(): Promise<void>;
};

export const TEMPORARY_ANSWER = 'Mailbox busy, try again later';
export const PERMANENT_ANSWER = 'No such mailbox here';

/** `answerDelayMs` holds each accepted message that long before the 250 (a slow server, so workers overlap). */
export async function startSmtp(options: { answerDelayMs?: number } = {}): Promise<TestSmtp> {
  const received: ReceivedMail[] = [];
  let mode: Answer = 'accept';
  let server: SMTPServer | undefined;

  const refusal = (code: number, message: string): SMTPServerError => Object.assign(new Error(message), { responseCode: code });
  const listen = async (port: number): Promise<number> => {
    const instance = new SMTPServer({
      authOptional: true,
      disabledCommands: ['AUTH', 'STARTTLS'],
      logger: false,
      onRcptTo(_address, _session, callback) {
        if (mode === 'temporary') return callback(refusal(451, `4.3.0 ${TEMPORARY_ANSWER}`));
        if (mode === 'permanent') return callback(refusal(550, `5.1.1 ${PERMANENT_ANSWER}`));
        callback();
      },
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          const mailFrom = session.envelope.mailFrom;
          received.push({ from: mailFrom ? mailFrom.address : '', to: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks) });
          if (options.answerDelayMs) setTimeout(() => callback(), options.answerDelayMs);
          else callback();
        });
      },
    });
    await new Promise<void>((resolve, reject) => {
      instance.once('error', reject);
      instance.listen(port, '127.0.0.1', () => resolve());
    });
    server = instance;
    return (instance.server.address() as AddressInfo).port;
  };
  const down = async (): Promise<void> => {
    const running = server;
    server = undefined;
    if (running) await new Promise<void>((resolve) => running.close(() => resolve()));
  };

  const port = await listen(0);
  return {
    url: `smtp://127.0.0.1:${port}`,
    received,
    answer(next) {
      mode = next;
    },
    down,
    async up() {
      if (!server) await listen(port);
    },
    close: down,
  };
}

/** A received message parsed as a mail client would (postal-mime). */
export function parseMail(mail: ReceivedMail): Promise<Email> {
  return PostalMime.parse(mail.raw);
}

/** The value of one header of a parsed message (first occurrence, name case-insensitive). */
export function headerOf(email: Email, name: string): string | undefined {
  return email.headers.find((h) => h.key === name.toLowerCase())?.value;
}
