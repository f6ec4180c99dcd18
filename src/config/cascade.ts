/**
 * How one layer of the configuration goes over the layers below it (DESIGN §3), the one rule for
 * every pair of layers (built-in, user, workspace, JP_CFG_*, --cfg, the conversation's recorded
 * settings, flags) and for the settings a conversation records:
 *
 * - a table goes over a table key by key, so a later layer sets only the keys it names;
 * - a scalar-or-table key (RFD 019's `detached = "auto"`, shorthand for the table of the keys it
 *   covers) is merged as that table: a later table fills in under an earlier scalar, and a later
 *   scalar sets the keys it covers and keeps the rest (`escalate`, which no scalar covers);
 * - a key whose list is the union of every layer's (`unionKeys`) only grows;
 * - anything else is replaced whole.
 */

export type Table = Record<string, unknown>;

export function isTable(value: unknown): value is Table {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

/**
 * The keys a scalar stands for at `keyPath`, for the keys that take a scalar or a table; undefined
 * for any other key. `conversation.tools.<tool>.detached = "auto"` is `{ run, deliver, tool }` =
 * "auto": leaving the sandbox (`escalate`) is set explicitly (DESIGN §3).
 */
export function keysCoveredByScalar(keyPath: readonly string[]): readonly string[] | undefined {
  const [section, tools, , field] = keyPath;
  return keyPath.length === 4 && section === 'conversation' && tools === 'tools' && field === 'detached'
    ? ['run', 'deliver', 'tool']
    : undefined;
}

/**
 * Keys whose list is the union of every layer's, not the last layer's: a later layer adds to it and
 * never removes, so a workspace config (`secrets.env_vars = []`) cannot take a secret its user
 * listed out of redaction, nor a guard hook its user set. The layer recorded for such a key is the
 * last one that added to it.
 */
function isUnionKey(keyPath: readonly string[]): boolean {
  const [section, name] = keyPath;
  if (keyPath.length !== 2) return false;
  // Every layer's hooks run (`hooks.<Event>`).
  return (
    (section === 'secrets' && name === 'env_vars') ||
    (section === 'sandbox' && name === 'hidden_paths') ||
    section === 'hooks'
  );
}

/**
 * Where each leaf key came from, kept up to date by `mergeOver`: dotted key → what set it (a
 * layer). A key a scalar-or-table shorthand set is recorded under each key it covers.
 */
export type Sources<Origin> = Map<string, Origin>;

/**
 * `over` merged over `base` by the rules above; neither is changed. With `sources` and `origin`,
 * every leaf `over` sets is recorded as set by `origin` (and what it replaced is forgotten).
 */
export function mergeOver<Origin>(
  base: Table,
  over: Table,
  sources?: { map: Sources<Origin>; origin: Origin },
  prefix: readonly string[] = [],
): Table {
  const result: Table = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const keyPath = [...prefix, key];
    const dotted = keyPath.join('.');
    let existing = result[key];
    let incoming = value;
    const covered = keysCoveredByScalar(keyPath);
    if (covered && isTable(incoming) && typeof existing === 'string') {
      // A table fills in under an earlier scalar: the scalar becomes the keys it stands for.
      existing = expandScalar(existing, covered);
      if (sources) moveSource(sources.map, dotted, covered);
    } else if (covered && typeof incoming === 'string' && isTable(existing)) {
      // A scalar over a table sets the keys it covers; it stays a scalar when the table had no other.
      if (Object.keys(existing).some((name) => !covered.includes(name))) incoming = expandScalar(incoming, covered);
    }
    if (isTable(incoming) && isTable(existing)) {
      result[key] = mergeOver(existing, incoming, sources, keyPath);
      continue;
    }
    if (sources) forgetUnder(sources.map, dotted);
    if (isTable(incoming)) {
      sources?.map.delete(dotted);
      result[key] = mergeOver({}, incoming, sources, keyPath);
    } else if (isUnionKey(keyPath) && Array.isArray(existing) && Array.isArray(incoming)) {
      const union = [...new Set([...existing, ...incoming])];
      if (sources && union.length > existing.length) sources.map.set(dotted, sources.origin);
      result[key] = union;
    } else {
      result[key] = incoming;
      sources?.map.set(dotted, sources.origin);
    }
  }
  return result;
}

function expandScalar(value: string, covered: readonly string[]): Table {
  return Object.fromEntries(covered.map((name) => [name, value]));
}

/** The scalar at `dotted` became a table of the keys it covers: each is set by what set the scalar. */
function moveSource<Origin>(sources: Sources<Origin>, dotted: string, covered: readonly string[]): void {
  const origin = sources.get(dotted);
  if (origin === undefined) return;
  sources.delete(dotted);
  for (const name of covered) sources.set(`${dotted}.${name}`, origin);
}

/** What was recorded under `dotted` is replaced. */
function forgetUnder<Origin>(sources: Sources<Origin>, dotted: string): void {
  for (const known of [...sources.keys()]) if (known.startsWith(dotted + '.')) sources.delete(known);
}
