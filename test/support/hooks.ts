/**
 * Hooks for tests (README "Hooks"): the user's own config file with `[[hooks.<Event>]]` entries,
 * hook scripts written into the sandbox (outside the workspace), and what they recorded.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Sandbox } from './jp.ts';

/** Writes the user's config file (`$XDG_CONFIG_HOME/jp/config.toml`): the user's own layer. */
export function writeUserConfig(sandbox: Sandbox, toml: string): string {
  const directory = path.join(sandbox.env.XDG_CONFIG_HOME!, 'jp');
  mkdirSync(directory, { recursive: true });
  const file = path.join(directory, 'config.toml');
  writeFileSync(file, toml);
  return file;
}

/** An executable script in the sandbox, outside the workspace; returns its absolute path. */
export function hookScript(sandbox: Sandbox, name: string, text: string): string {
  const directory = path.join(sandbox.root, 'hooks');
  mkdirSync(directory, { recursive: true });
  const file = path.join(directory, name);
  writeFileSync(file, text);
  chmodSync(file, 0o755);
  return file;
}

/** A file in the sandbox outside the workspace, for hooks to write to. */
export function outsideFile(sandbox: Sandbox, name: string): string {
  return path.join(sandbox.root, name);
}

/** One `[[hooks.<event>]]` entry (TOML); the command as a literal string. */
export function hookEntry(
  event: string,
  command: string,
  extra: Record<string, string | number | boolean> = {},
): string {
  const lines = [`[[hooks.${event}]]`, `command = '${command}'`];
  for (const [key, value] of Object.entries(extra))
    lines.push(`${key} = ${typeof value === 'string' ? JSON.stringify(value) : String(value)}`);
  return `${lines.join('\n')}\n`;
}

/** The JSON lines a recording hook appended (`cat >> file`), parsed; none when it never ran. */
export function recorded(file: string): Record<string, any>[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, any>);
}
