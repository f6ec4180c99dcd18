/**
 * "Did you mean": for an unknown configuration key, the known key at the same place in the schema
 * that is closest to it (a typo: at most two edits, and fewer than half its letters).
 */
import { configSchema } from './schema.ts';

interface SchemaNode {
  _zod: {
    def: {
      type: string;
      shape?: Record<string, SchemaNode>;
      catchall?: SchemaNode;
      innerType?: SchemaNode;
      valueType?: SchemaNode;
      options?: SchemaNode[];
      in?: SchemaNode;
    };
  };
}

/** The schemas a key path can lead to (a union offers several). */
function nodesAt(node: SchemaNode, path: readonly string[]): SchemaNode[] {
  const def = node._zod.def;
  const inner = def.innerType ?? def.in;
  if (inner) return nodesAt(inner, path);
  if (def.type === 'union') return (def.options ?? []).flatMap((option) => nodesAt(option, path));
  if (path.length === 0) return [node];
  const [segment, ...rest] = path as [string, ...string[]];
  if (def.type === 'record' && def.valueType) return nodesAt(def.valueType, rest);
  if (def.type !== 'object') return [];
  const next = def.shape?.[segment] ?? def.catchall;
  return next ? nodesAt(next, rest) : [];
}

/** The keys a table at `path` may have. */
export function knownKeysAt(path: readonly string[]): string[] {
  const keys = new Set<string>();
  for (const node of nodesAt(configSchema as unknown as SchemaNode, path))
    for (const key of Object.keys(node._zod.def.shape ?? {})) keys.add(key);
  return [...keys];
}

/** ` (did you mean a.b.model?)` for the unknown `key` in the table at `path`, or ''. */
export function didYouMean(path: readonly string[], key: string): string {
  let best: { key: string; distance: number } | undefined;
  for (const known of knownKeysAt(path)) {
    const distance = editDistance(key.toLowerCase(), known.toLowerCase());
    if (distance <= 2 && distance * 2 < Math.max(key.length, 2) && (!best || distance < best.distance))
      best = { key: known, distance };
  }
  return best ? ` (did you mean ${[...path, best.key].join('.')}?)` : '';
}

/** Edits (insert, delete, substitute, swap two neighbours) that turn `a` into `b`. */
function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, index) => [index, ...new Array<number>(b.length).fill(0)]);
  for (let column = 1; column <= b.length; column++) rows[0]![column] = column;
  for (let row = 1; row <= a.length; row++) {
    for (let column = 1; column <= b.length; column++) {
      const cost = a[row - 1] === b[column - 1] ? 0 : 1;
      let value = Math.min(
        rows[row - 1]![column]! + 1,
        rows[row]![column - 1]! + 1,
        rows[row - 1]![column - 1]! + cost,
      );
      if (row > 1 && column > 1 && a[row - 1] === b[column - 2] && a[row - 2] === b[column - 1])
        value = Math.min(value, rows[row - 2]![column - 2]! + 1);
      rows[row]![column] = value;
    }
  }
  return rows[a.length]![b.length]!;
}
