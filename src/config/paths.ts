import os from 'node:os';
import path from 'node:path';

/** `$XDG_CONFIG_HOME/jp/config.toml` (default `~/.config/jp/config.toml`, `~` being `$HOME` of `environment`). */
export function userConfigFile(
  environment: NodeJS.ProcessEnv,
  home: string = environment.HOME || os.homedir(),
): string {
  const base = environment.XDG_CONFIG_HOME || path.join(home, '.config');
  return path.join(base, 'jp', 'config.toml');
}
