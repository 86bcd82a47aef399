// PostgreSQL: the same statement asked by many requests at once, sent as one (issue 44).
//
// Every statement to PostgreSQL costs a pooled connection, a write to its socket, a wake-up of its
// backend, a read of the answer and, for a write, a commit — more, in CPU on both sides, than the
// primary-key probe or update it carries (userinfo's profile: the driver and its syscalls ~30 % of a
// request). Requests that arrive together (read from their sockets in one turn of the event loop) each
// ask for their own key; a batch collects the keys asked until the end of that turn (setImmediate: after
// the turn's I/O callbacks) and sends them in one statement that answers every key (`unnest($1)`).
//
// Only statements outside a transaction are batched, so a transaction's statements stay in it. A read's
// answer is what the same statement would have read alone a moment later (one committed snapshot,
// taken when the batch runs, after every request in it arrived). A write batched this way must be one
// atomic statement whose rule holds per key (tokens.store.ts's rotation: each key's conditional UPDATE
// of its own row; of two keys for one row, one wins), answered only once the statement committed. A
// failed batch fails each of its keys with the same error, as each statement alone would have.
import type { Db } from './database.ts';

/** At most this many keys in one statement; more asked in one turn go as several. */
export const MAX_BATCH = 256;

/**
 * A condition on a batch's positions (`n`, from `unnest(…) with ordinality`) that always holds, for its
 * statement's plan: PostgreSQL plans a named statement with array parameters anew on every run (a
 * custom plan: ~0.3 ms of the backend's CPU, more than running it) as long as its generic plan, which
 * assumes 10 elements, looks dearer than plans for the few actually sent. With this range on `n` both
 * estimate one row, the same cost, and after five runs the generic plan is kept (0.03 ms).
 */
export function batchPositions(column: string): string {
  return `${column} between 1 and ${MAX_BATCH}`;
}

type Waiter<Row> = { resolve(row: Row | undefined): void; reject(error: unknown): void };

/**
 * A statement by key that batches: `one` runs a single key (a batch of one, and every call inside a
 * transaction), `many` runs several and returns each key's row by the key's index in the list (keys may
 * repeat; each asker gets its own answer, undefined when the list's index has no row).
 */
export function batchedByTurn<Key, Row>(options: {
  one: (db: Db, key: Key) => Promise<Row | undefined>;
  many: (db: Db, keys: readonly Key[]) => Promise<Map<number, Row>>;
}): (db: Db, key: Key) => Promise<Row | undefined> {
  const pending = new WeakMap<Db, { keys: Key[]; waiters: Array<Waiter<Row>> }>();

  async function flush(db: Db, keys: Key[], waiters: Array<Waiter<Row>>): Promise<void> {
    if (keys.length === 1) {
      try {
        waiters[0]!.resolve(await options.one(db, keys[0]!));
      } catch (error) {
        waiters[0]!.reject(error);
      }
      return;
    }
    try {
      const rows = await options.many(db, keys);
      waiters.forEach((waiter, index) => waiter.resolve(rows.get(index)));
    } catch (error) {
      for (const waiter of waiters) waiter.reject(error);
    }
  }

  return (db, key) => {
    if (db.isTransaction) return options.one(db, key);
    let batch = pending.get(db);
    if (batch === undefined || batch.keys.length >= MAX_BATCH) {
      const started = { keys: [] as Key[], waiters: [] as Array<Waiter<Row>> };
      batch = started;
      pending.set(db, started);
      setImmediate(() => {
        if (pending.get(db) === started) pending.delete(db);
        void flush(db, started.keys, started.waiters);
      });
    }
    const { keys, waiters } = batch;
    return new Promise<Row | undefined>((resolve, reject) => {
      keys.push(key);
      waiters.push({ resolve, reject });
    });
  };
}
