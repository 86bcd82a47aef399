// Audit events are kept SIGNET_AUDIT_RETENTION_DAYS (default 90), then swept. The sweep runs beside
// the housekeeping sweeps, on its own timer, because it needs the retention setting.
import type { Logger } from 'pino';
import { DAY, type Clock } from '../config/clock.ts';
import type { Db } from '../db/database.ts';
import * as store from './audit.store.ts';

export const AUDIT_SWEEP_INTERVAL_MS = DAY / 24;

/** Removes events older than the retention period. Returns how many. */
export async function forgetOldAuditEvents(db: Db, clock: Clock, retentionDays: number): Promise<number> {
  return store.deleteEventsBefore(db, clock() - retentionDays * DAY);
}

/** Sweeps every hour; returns a function that stops it. */
export function startAuditRetention(db: Db, clock: Clock, retentionDays: number, logger: Logger): () => void {
  const timer = setInterval(() => {
    forgetOldAuditEvents(db, clock, retentionDays).then(
      (removed) => logger.debug({ removed, retentionDays }, 'old audit events swept'),
      (error: unknown) => logger.warn({ err: error }, 'sweeping old audit events failed; will retry'),
    );
  }, AUDIT_SWEEP_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
