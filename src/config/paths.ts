import { readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { dataHome } from '../workspace/workspace.ts';

/** `$XDG_CONFIG_HOME/jp/config.toml` (default `~/.config/jp/config.toml`, `~` being `$HOME` of `environment`). */
export function userConfigFile(
  environment: NodeJS.ProcessEnv,
  home: string = environment.HOME || os.homedir(),
): string {
  const base = environment.XDG_CONFIG_HOME || path.join(home, '.config');
  return path.join(base, 'jp', 'config.toml');
}

/** `jp-<uid>`: the name of jp's socket directory in a shared runtime or temporary directory. */
function runtimeName(): string {
  return `jp-${process.getuid?.() ?? 'user'}`;
}

/**
 * Where a query server's socket goes when its path beside the registry would be too long:
 * `$XDG_RUNTIME_DIR/jp`, else `<tmp>/jp-<uid>` (src/server/socket-path.ts).
 */
export function socketRuntimeDirectory(environment: NodeJS.ProcessEnv): string {
  return environment.XDG_RUNTIME_DIR
    ? path.join(environment.XDG_RUNTIME_DIR, 'jp')
    : path.join(os.tmpdir(), runtimeName());
}

/**
 * Every directory jp keeps its own state in (configuration, data with the seal key, registry,
 * sessions, locks, sockets and run logs, compile cache), as this environment names them and as
 * jp run under another environment would (no XDG variables, as under cron or `su`): the default
 * locations under the home directory, `/run/user/<uid>/jp` and the temporary directories. Also the
 * private socket directories made when `<tmp>/jp-<uid>` belonged to someone else
 * (`<tmp>/jp-<uid>-*`, listed as they are now). What a sandboxed command must never see
 * (src/sandbox/engine.ts) and file tools never touch.
 */
export function jpDirectories(environment: NodeJS.ProcessEnv): string[] {
  const home = environment.HOME || os.homedir();
  const cacheHome =
    environment.XDG_CACHE_HOME && path.isAbsolute(environment.XDG_CACHE_HOME)
      ? environment.XDG_CACHE_HOME
      : path.join(home, '.cache');
  const temporaryDirectories = [...new Set([os.tmpdir(), '/tmp'])];
  const uid = process.getuid?.();
  const directories = [
    path.dirname(userConfigFile(environment)),
    path.join(home, '.config', 'jp'),
    path.join(dataHome(environment), 'jp'),
    path.join(home, '.local', 'share', 'jp'),
    path.join(cacheHome, 'jp'),
    path.join(home, '.cache', 'jp'),
    socketRuntimeDirectory(environment),
    ...(uid === undefined ? [] : [path.join('/run/user', String(uid), 'jp')]),
    ...temporaryDirectories.map((directory) => path.join(directory, runtimeName())),
    ...temporaryDirectories.flatMap((directory) =>
      entriesStartingWith(directory, `${runtimeName()}-`).map((name) => path.join(directory, name)),
    ),
  ];
  return [...new Set(directories)];
}

/** The names in `directory` that start with `prefix` (none when it cannot be read). */
export function entriesStartingWith(directory: string, prefix: string): string[] {
  try {
    return readdirSync(directory).filter((name) => name.startsWith(prefix));
  } catch {
    return [];
  }
}
