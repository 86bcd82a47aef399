// Command output: one JSON value on stdout with --json or when stdout is not a terminal; on a
// terminal a table for a list and `key: value` lines for one record. Failures are one line on
// stderr and a non-zero exit; on success stderr stays empty for scripts.

export class UsageError extends Error {
  override name = 'UsageError';
}

export function wantsJson(options: { json?: boolean }): boolean {
  return options.json === true || !process.stdout.isTTY;
}

/** The line printed after a secret on a terminal. */
export const SHOWN_ONCE = 'shown once — store it now; Signet keeps only a hash';

export type Column = { header: string; value: (row: Record<string, unknown>) => unknown };

/** How a command's result reads on a terminal. */
export type HumanView = {
  /** columns of the table when the result is a list; every field when absent */
  columns?: Column[];
  /** the field holding a secret shown this once (a "shown once" line follows it when present) */
  secretField?: string;
};

/** A field's value as a table cell or a `key: value` line. */
export function cellText(value: unknown): string {
  if (value === null || value === undefined || value === '') return '-';
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (Array.isArray(value)) return value.length === 0 ? '-' : value.map(cellText).join(', ');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** ISO times read as "2026-01-31 14:05 UTC" in a table. */
export function shortTime(value: unknown): string {
  return typeof value === 'string' && /^\d{4}-\d\d-\d\dT\d\d:\d\d/.test(value) ? `${value.slice(0, 10)} ${value.slice(11, 16)} UTC` : cellText(value);
}

export function formatTable(rows: readonly Record<string, unknown>[], columns?: readonly Column[]): string {
  if (rows.length === 0) return '(none)';
  const cols = columns ?? Object.keys(rows[0]!).map((key): Column => ({ header: key, value: (row) => row[key] }));
  const cells = rows.map((row) => cols.map((c) => cellText(c.value(row))));
  const widths = cols.map((c, i) => Math.max(c.header.length, ...cells.map((r) => r[i]!.length)));
  const line = (values: string[]) => values.map((v, i) => (i === values.length - 1 ? v : v.padEnd(widths[i]!))).join('  ');
  return [line(cols.map((c) => c.header)), ...cells.map(line)].join('\n');
}

export function formatRecord(record: Record<string, unknown>): string {
  return Object.entries(record)
    .map(([key, value]) => `${key}: ${cellText(value)}`)
    .join('\n');
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The terminal form of a result: a table for a list of records, `key: value` lines for one record. */
export function formatHuman(value: unknown, view: HumanView = {}): string {
  if (Array.isArray(value) && value.every(isRecord)) return formatTable(value, view.columns);
  if (isRecord(value)) return formatRecord(value);
  return cellText(value);
}

/**
 * Prints a command's result. `footer` (which data the command used) follows the human form only:
 * JSON stays one value, exactly as before.
 */
export function print(value: unknown, options: { json?: boolean }, view: HumanView = {}, footer?: string): void {
  if (wantsJson(options)) {
    process.stdout.write(JSON.stringify(value) + '\n');
    return;
  }
  process.stdout.write(formatHuman(value, view) + '\n');
  // On stderr, so what stdout holds stays the value itself.
  if (view.secretField && isRecord(value) && value[view.secretField] !== undefined) process.stderr.write(`${SHOWN_ONCE}\n`);
  if (footer) process.stdout.write(footer + '\n');
}

/** Reads the whole of standard input; one trailing newline (as `echo` adds) is not part of the value. */
export async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) throw new UsageError('--password-stdin reads the password from standard input; pipe it in, e.g. printf %s "$PASSWORD" | signet …');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}
