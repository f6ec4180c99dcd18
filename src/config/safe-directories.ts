/**
 * `safe.directories` (DESIGN §10): the workspace roots whose ownership the user accepts as it is
 * (workspace/ownership.ts), read from the user config only: a workspace cannot declare itself safe.
 */
import { isTable } from './cascade.ts';
import type { ConfigFile } from './snapshot.ts';

/**
 * The list in the user config (as the process's snapshot read it); [] when it is absent or not TOML
 * (loading reports that).
 */
export function safeDirectories(userConfig: ConfigFile): string[] {
  const safe = userConfig.tableIfValid()?.safe;
  const value = isTable(safe) ? safe.directories : undefined;
  return Array.isArray(value) ? value.filter((entry): entry is string => typeof entry === 'string') : [];
}
