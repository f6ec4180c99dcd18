/**
 * Deep merge of plain tables, its own module so that what needs only it (a conversation's recorded
 * settings, read by the query client) does not load the config schema and its validation library.
 */

/** A TOML table as parsed: a plain object (not an array, not a date). */
export function isTable(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

/** Deep merge of plain tables, later wins; used for the layers of the config and conversation deltas. */
export function mergeTables(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const result: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const existing = result[key];
    result[key] = isTable(existing) && isTable(value) ? mergeTables(existing, value) : value;
  }
  return result;
}
