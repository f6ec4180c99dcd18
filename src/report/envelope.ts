/**
 * The NDJSON envelope of every `--format json` line (DESIGN §5): `v`, `type`, `ts` and
 * `conversation_id`, then the line's own fields. The one place that writes it (schema/output-line).
 */
export function outputLine(
  type: string,
  fields: Record<string, unknown>,
  conversationId: string | null,
  ts: string = new Date().toISOString(),
): string {
  return JSON.stringify({ v: 1, type, ts, conversation_id: conversationId, ...fields }) + '\n';
}
