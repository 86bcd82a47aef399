// Reading form posts and query strings at the edge: anything from outside is unknown until narrowed.

function valueOf(source: unknown, name: string): unknown {
  return typeof source === 'object' && source !== null ? (source as Record<string, unknown>)[name] : undefined;
}

/** One text field; '' when absent, sent twice, or not text. */
export function field(source: unknown, name: string): string {
  const value = valueOf(source, name);
  return typeof value === 'string' ? value : '';
}

/** A field that may repeat (checkboxes). */
export function fields(source: unknown, name: string): string[] {
  const value = valueOf(source, name);
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}
