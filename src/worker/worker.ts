// `signet worker`: background work beside the servers — task execution and (with the notifications
// feature) e-mail delivery. Several may run at once, on one host or many; they share work through the
// database only.
import type { Logger } from 'pino';
import type { Clock } from '../config/clock.ts';
import { deriveKeys, loadRootSecret, type Keys } from '../config/keys.ts';
import type { Settings } from '../config/settings.ts';
import type { DatabaseHandle } from '../db/database.ts';
import { openObjectStore, parseStorageUrl } from '../storage/open.ts';
import { createTranslator } from '../documents/translate/create.ts';
import { startEmailRunner, type EmailRunnerOptions } from './email-runner.ts';
import { startTaskRunner, type TaskRunnerOptions } from './task-runner.ts';

export type WorkKind = 'tasks' | 'email';

export type RunningWorker = { stop(): Promise<void> };

export function startWorker(input: {
  settings: Settings;
  database: DatabaseHandle;
  clock: Clock;
  logger: Logger;
  kinds: WorkKind[];
  /** derived from the settings' root secret when not given (unsubscribe links and account links need them) */
  keys?: Keys;
  taskOptions?: TaskRunnerOptions;
  emailOptions?: EmailRunnerOptions;
}): RunningWorker {
  const { settings, database, clock, logger } = input;
  const objects = openObjectStore(parseStorageUrl(settings.storageUrl));
  const translator = settings.translate.engine ? createTranslator(settings.translate) : undefined;
  const runners: Array<{ stop(): Promise<void> }> = [];
  if (input.kinds.includes('tasks')) {
    runners.push(startTaskRunner({ db: database.db, dialect: database.dialect, clock, objects, translator, logger }, { ...taskOptionsFrom(settings), ...input.taskOptions }));
  }
  if (input.kinds.includes('email')) {
    const keys = input.keys ?? deriveKeys(loadRootSecret(settings));
    const smtp = settings.smtpUrl && settings.mailFrom ? { url: settings.smtpUrl, from: settings.mailFrom } : undefined;
    runners.push(
      startEmailRunner(
        {
          db: database.db,
          dialect: database.dialect,
          clock,
          logger,
          smtp,
          baseUrl: settings.baseUrl,
          unsubscribeKey: keys.unsubscribe,
          accountMail: { tokenKey: keys.accountToken, productName: settings.brand.productName },
        },
        { leaseMs: settings.worker.leaseSeconds * 1000, ...input.emailOptions },
      ),
    );
  }
  logger.info({ work: input.kinds, translate: settings.translate.engine ?? 'none', email: settings.smtpUrl ? 'smtp' : 'none' }, 'signet worker is running');
  return {
    async stop() {
      await Promise.all(runners.map((r) => r.stop()));
      await objects.close();
    },
  };
}

function taskOptionsFrom(settings: Settings): TaskRunnerOptions {
  return { leaseMs: settings.worker.leaseSeconds * 1000, concurrency: settings.worker.concurrency, parseThreads: settings.worker.parseThreads };
}
