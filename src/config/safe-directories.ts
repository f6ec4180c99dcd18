/**
 * `safe.directories` (DESIGN §10): the workspace roots whose ownership the user accepts as it is
 * (workspace/ownership.ts), read from the user config only: a workspace cannot declare itself safe.
 */
import { parse } from 'smol-toml';
import { readConfigFile } from '../workspace/files.ts';

/**
 * The list in the user config; [] when it is absent, unreadable, not a regular file or not TOML
 * (loading reports that). Read as every config file is: never blocking on a FIFO or a device.
 */
export function safeDirectories(userConfigFile: string | undefined): string[] {
  if (!userConfigFile) return [];
  try {
    const value = (parse(readConfigFile(userConfigFile) ?? '') as { safe?: { directories?: unknown } }).safe
      ?.directories;
    return Array.isArray(value) ? value.filter((entry): entry is string => typeof entry === 'string') : [];
  } catch {
    return [];
  }
}
