/**
 * Workspace trust (DESIGN §10): `.jp/config.toml` travels with a repository, so until its user
 * trusts it (as it is: by content hash), the keys below are ignored in it. They decide where
 * requests or secrets go, loosen approval, or run programs. Every other key of the workspace config
 * applies; the user's own layers (user config, JP_CFG_*, --cfg, flags) always count.
 *
 * To make a new key trust-requiring, add one line to `trustRequiringKeys`.
 */
import { createHash } from 'node:crypto';
import { readFileSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { builtinDefaults } from './defaults.ts';
import type { ResultMode, RunMode } from './schema.ts';
import { someNames } from '../plural.ts';

export interface TrustRule {
  /** A dotted key; `*` stands for any one segment. The rule covers the whole value at that key. */
  key: string;
  /** Why it needs trust, in words for the prompt and `jp trust --show`. */
  reason: string;
  /**
   * When only some values need trust: true for those (`path` is the concrete key; `own` the user's
   * own layers, lowest first, to compare with). Default: every value.
   */
  when?: (value: unknown, path: readonly string[], own: readonly unknown[]) => boolean;
}

const runRank: Record<RunMode, number> = { skip: 0, ask: 1, edit: 1, unattended: 2 };
const resultRank: Record<ResultMode, number> = { skip: 0, ask: 1, edit: 1, unattended: 2 };
const safeDetached = new Set(['deny', 'defer']);

/**
 * The `run` or `result` mode the user's own layers (lowest first) give `tool` (`defaults` included),
 * resolved as policy.ts does: the tool's own value, else the defaults', the later layer winning.
 */
function ownMode(own: readonly unknown[], tool: string, field: 'run' | 'result'): string | undefined {
  for (const owner of [tool, 'defaults']) {
    for (const layer of [...own].reverse()) {
      const value = tableAt(layer, ['conversation', 'tools', owner])[field];
      // anything else is no mode: it counts for nothing
      if (typeof value === 'string' && value in (field === 'run' ? runRank : resultRank)) return value;
    }
  }
  return undefined;
}

function tableAt(layer: unknown, path: readonly string[]): Record<string, unknown> {
  let table = layer;
  for (const segment of path) table = isTable(table) ? table[segment] : undefined;
  return isTable(table) ? table : {};
}

function isTable(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

/** How strict each sandbox mode is: a workspace may only move up. */
const sandboxRank: Record<string, number> = { off: 0, 'workspace-write': 1, 'read-only': 2 };

/** `sandbox.<field>` as the user's own layers (lowest first) give it: the later layer wins. */
function ownSandbox(own: readonly unknown[], field: string): unknown {
  for (const layer of [...own].reverse()) {
    const value = tableAt(layer, ['sandbox'])[field];
    if (value !== undefined) return value;
  }
  return undefined;
}

/** The value the user's own layers (lowest first) give the key at `path`, the later winning. */
function ownValue(own: readonly unknown[], path: readonly string[]): unknown {
  let found: unknown;
  for (const layer of own) {
    const value = tableAt(layer, path.slice(0, -1))[path[path.length - 1]!];
    if (value !== undefined) found = value;
  }
  return found;
}

/** A request setting needs trust when it makes jp send more, or sooner, than the user's own layers do. */
const moreRequests =
  (direction: 'higher' | 'lower') =>
  (value: unknown, path: readonly string[], own: readonly unknown[]): boolean => {
    const mine = ownValue(own, path);
    if (typeof value !== 'number' || typeof mine !== 'number') return typeof value === 'number';
    return direction === 'higher' ? value > mine : value < mine;
  };

/** Needs trust unless the user's own layers give the same value. */
const differsFromOwn = (value: unknown, path: readonly string[], own: readonly unknown[]): boolean =>
  value !== ownValue(own, path);

export const trustRequiringKeys: readonly TrustRule[] = [
  { key: 'providers.*.base_url', reason: 'decides where your requests (and their API key) go' },
  { key: 'providers.*.api_key_env', reason: 'decides which of your secrets is sent as the API key' },
  { key: 'providers.openai-compatible.*', reason: 'a server your requests (and an API key) go to' },
  {
    key: 'conversation.tools.*',
    reason: 'a local command tool: runs a program named by this repository',
    when: (value) => isTable(value) && (value.command !== undefined || value.source === 'local'),
  },
  {
    key: 'conversation.tools.*.run',
    reason: 'runs the tool without asking you',
    when: (value, path, own) =>
      runRank[value as RunMode] > runRank[(ownMode(own, path[2]!, 'run') ?? 'ask') as RunMode],
  },
  {
    key: 'conversation.tools.*.result',
    reason: 'sends the tool result to the model without showing you',
    when: (value, path, own) =>
      resultRank[value as ResultMode] > resultRank[(ownMode(own, path[2]!, 'result') ?? 'unattended') as ResultMode],
  },
  {
    key: 'conversation.tools.*.detached',
    reason: 'decides for you when no human is there (anything but deny or defer)',
    when: (value) =>
      (isTable(value) ? Object.values(value) : [value]).some((policy) => !safeDetached.has(policy as string)),
  },
  {
    key: 'conversation.tools.*.side_effects',
    reason: 'lets a resumed turn run the tool again without asking',
    when: (value) => value === false,
  },
  { key: 'conversation.tools.*.env_vars', reason: 'passes your provider keys to a tool' },
  {
    key: 'conversation.tools.*.questions.*.exclusive',
    reason: 'lets the model answer a question meant for you',
    when: (value) => value === false,
  },
  {
    key: 'conversation.tools.*.questions.*.target',
    reason: 'lets the model answer a question meant for you',
    when: (value) => value === 'assistant',
  },
  { key: 'conversation.tools.*.questions.*.default', reason: 'answers a question for you when no human is there' },
  {
    key: 'conversation.tools.*.questions.*.default_option',
    reason: 'answers a question for you when no human is there',
  },
  { key: 'conversation.hooks', reason: 'runs a command' },
  { key: 'hooks', reason: 'runs commands of its choosing, outside the sandbox, at points of every run (hooks)' },
  {
    key: 'secrets.env_vars',
    reason:
      'hides the values of these variables wherever they appear, in what you approve too ' +
      '(a command would show [REDACTED] where one of them is)',
    // A union over the layers (config/load.ts): what the user's own layers list together needs no trust.
    when: (value, _path, own) => {
      const mine = own.flatMap((layer) => {
        const listed = tableAt(layer, ['secrets']).env_vars;
        return Array.isArray(listed) ? listed : [];
      });
      return Array.isArray(value) && value.some((name) => !mine.includes(name));
    },
  },
  {
    key: 'sandbox.mode',
    reason: 'confines the commands the model runs less than you do',
    when: (value, _path, own) =>
      sandboxRank[value as string]! < sandboxRank[(ownSandbox(own, 'mode') as string) ?? 'workspace-write']!,
  },
  {
    key: 'sandbox.network',
    reason: 'lets the commands the model runs reach the network',
    when: (value, _path, own) => value === true && ownSandbox(own, 'network') !== true,
  },
  {
    key: 'sandbox.writable_roots',
    reason: 'lets the commands the model runs write outside the workspace',
    when: (value, _path, own) => {
      const allowed = ownSandbox(own, 'writable_roots');
      return Array.isArray(value) && value.some((root) => !(Array.isArray(allowed) && allowed.includes(root)));
    },
  },
  {
    key: 'sandbox.hide_home',
    reason: 'shows the commands the model runs your home directory, which you hide',
    when: (value, _path, own) => value === false && ownSandbox(own, 'hide_home') === true,
  },
  {
    key: 'sandbox.readable_roots',
    reason: 'shows the commands the model runs parts of your home directory, which you hide',
    when: (value, _path, own) => {
      const allowed = ownSandbox(own, 'readable_roots');
      return Array.isArray(value) && value.some((root) => !(Array.isArray(allowed) && allowed.includes(root)));
    },
  },
  { key: 'sandbox.bwrap_path', reason: 'chooses the program that confines the commands the model runs' },
  {
    key: 'checkpoints.enabled',
    reason: 'turns off the checkpoints that let you undo what the model changes',
    when: (value) => value === false,
  },
  {
    key: 'assistant.instruction_files',
    reason:
      'reads the files of these names in your jp config directory, ' +
      "not only the repository's, into what the model is told",
  },
  { key: 'web', reason: 'makes jp web start ssh to hosts of its choosing and run commands there' },
  { key: 'mcp.servers.*', reason: 'starts a program or connects to a server, and offers its tools to the model' },
  {
    key: 'assistant.request.max_retries',
    reason: 'sends more requests with your API key than your own settings',
    when: moreRequests('higher'),
  },
  {
    key: 'assistant.request.backoff_base_ms',
    reason: 'retries with your API key sooner than your own settings',
    when: moreRequests('lower'),
  },
  {
    key: 'assistant.request.backoff_max_ms',
    reason: 'retries with your API key sooner than your own settings',
    when: moreRequests('lower'),
  },
  {
    key: 'assistant.request.idle_timeout_secs',
    reason: 'abandons and resends requests sooner than your own settings',
    when: moreRequests('lower'),
  },
  {
    key: 'assistant.request.headers_timeout_secs',
    reason: 'abandons and resends requests sooner than your own settings',
    when: moreRequests('lower'),
  },
  // Either way costs: a smaller window or threshold summarises (a request) more often, a larger one
  // lets every request grow. (A provider's own context_window is under providers.openai-compatible.*.)
  {
    key: 'assistant.context_window',
    reason: 'decides how large your requests grow and how often they are summarised',
    when: differsFromOwn,
  },
  {
    key: 'assistant.compaction.threshold',
    reason: 'decides how large your requests grow and how often they are summarised',
    when: differsFromOwn,
  },
];

export interface UntrustedKey {
  /** The dotted key, e.g. `providers.openai.base_url`. */
  key: string;
  path: string[];
  value: unknown;
  reason: string;
}

function matches(
  layer: unknown,
  pattern: readonly string[],
  prefix: string[],
  found: (path: string[], value: unknown) => void,
): void {
  if (pattern.length === 0) {
    found(prefix, layer);
    return;
  }
  if (!isTable(layer)) return;
  const [head, ...rest] = pattern;
  for (const [key, value] of Object.entries(layer))
    if (head === '*' || head === key) matches(value, rest, [...prefix, key], found);
}

/**
 * The keys of a workspace layer that need trust, outermost first; a key inside another is not listed
 * again. `own` is the user's own layers below the workspace, lowest first (the built-in defaults and
 * the user config): a `run` or `result` needs trust when it is more permissive than what they give,
 * so a workspace cannot undo a user's stricter setting.
 */
export function keysNeedingTrust(
  layer: Record<string, unknown>,
  rules: readonly TrustRule[] = trustRequiringKeys,
  own: readonly unknown[] = [builtinDefaults],
): UntrustedKey[] {
  const found: UntrustedKey[] = [];
  for (const rule of rules) {
    matches(layer, rule.key.split('.'), [], (path, value) => {
      if (rule.when && !rule.when(value, path, own)) return;
      found.push({ key: path.join('.'), path, value, reason: rule.reason });
    });
  }
  // The first of each path, and none inside another found one; linear in what was found (an
  // untrusted config may hold thousands of MCP servers).
  const pathText = (path: readonly string[]): string => path.join('\0');
  const paths = new Set(found.map((key) => pathText(key.path)));
  const seen = new Set<string>();
  const outermost = found.filter((key) => {
    const text = pathText(key.path);
    if (seen.has(text)) return false;
    seen.add(text);
    for (let length = 1; length < key.path.length; length++)
      if (paths.has(pathText(key.path.slice(0, length)))) return false;
    return true;
  });
  return outermost.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/**
 * The keys of a workspace config that need trust for its user: compared with the user's own layers
 * below it, the built-in defaults and the user config (`userLayer`; {} when there is none or it does
 * not parse). What loading leaves out (load.ts) and what the client names, asks about and shows
 * (cli/workspace-trust.ts) are this one list.
 */
export function workspaceKeysNeedingTrust(
  workspaceLayer: Record<string, unknown>,
  userLayer: unknown = {},
): UntrustedKey[] {
  return keysNeedingTrust(workspaceLayer, trustRequiringKeys, [builtinDefaults, userLayer]);
}

/** A copy of `layer` without `keys`. */
export function withoutKeys(layer: Record<string, unknown>, keys: readonly UntrustedKey[]): Record<string, unknown> {
  const copy = structuredClone(layer);
  for (const { path } of keys) {
    let table: unknown = copy;
    for (const segment of path.slice(0, -1)) table = isTable(table) ? table[segment] : undefined;
    if (isTable(table)) delete table[path[path.length - 1]!];
  }
  return copy;
}

/** What trust is keyed by when the config names no workspace script: the SHA-256 of its text. */
export function configContentHash(source: string): string {
  return createHash('sha256').update(source, 'utf8').digest('hex');
}

/**
 * What trust is keyed by (DESIGN §10 "trust covers what it names"): the config's text and the
 * content of every workspace file its local command tools and MCP servers would run (see
 * workspaceScripts), so a changed script is untrusted as a changed config is. A config that names
 * none is keyed by its text alone (configContentHash).
 */
export function workspaceTrustHash(source: string, scripts: readonly string[], root: string): string {
  if (scripts.length === 0) return configContentHash(source);
  const hash = createHash('sha256').update(source, 'utf8');
  for (const file of [...scripts].sort()) {
    let content: Buffer | string;
    try {
      content = createHash('sha256').update(readFileSync(file)).digest('hex');
    } catch (error) {
      content = `unreadable: ${(error as NodeJS.ErrnoException).code ?? 'error'}`;
    }
    hash.update(`\0${path.relative(root, file)}\0${realOrSame(file)}\0`).update(content);
  }
  return hash.digest('hex');
}

function realOrSame(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    return file;
  }
}

/**
 * The files inside the workspace `root` that the local command tools, hooks and MCP servers of
 * `layer` would run: every word of a tool's or a hook's command (or a tool's program and args) and a
 * server's command and args that names a regular file inside the workspace, resolved as they run (a
 * tool or a hook in the root, a server in its `cwd`).
 */
export function workspaceScripts(layer: Record<string, unknown>, root: string): string[] {
  const found = new Set<string>();
  const consider = (word: unknown, base: string): void => {
    if (typeof word !== 'string' || word === '') return;
    const candidate = path.resolve(base, word.replace(/^['"]|['"]$/g, ''));
    const relative = path.relative(root, candidate);
    if (relative === '' || relative.startsWith('..') || path.isAbsolute(relative)) return;
    try {
      if (statSync(candidate).isFile()) found.add(candidate);
    } catch {
      // not a file of the workspace: a program on PATH, an argument
    }
  };
  for (const entry of Object.values(tableAt(layer, ['conversation', 'tools']))) {
    if (!isTable(entry)) continue;
    const command = entry.command;
    if (typeof command === 'string') for (const word of command.split(/\s+/)) consider(word, root);
    else if (isTable(command)) {
      consider(command.program, root);
      if (Array.isArray(command.args)) for (const word of command.args) consider(word, root);
    }
  }
  for (const entries of Object.values(tableAt(layer, ['hooks']))) {
    if (!Array.isArray(entries)) continue;
    for (const entry of entries)
      if (isTable(entry) && typeof entry.command === 'string')
        for (const word of entry.command.split(/\s+/)) consider(word, root);
  }
  for (const entry of Object.values(tableAt(layer, ['mcp', 'servers']))) {
    if (!isTable(entry)) continue;
    const base = path.resolve(root, typeof entry.cwd === 'string' ? entry.cwd : '.');
    consider(entry.command, base);
    if (Array.isArray(entry.args)) for (const word of entry.args) consider(word, base);
  }
  return [...found];
}

/** What a run goes by: the decision about the workspace config (made by the front end), never re-decided. */
export interface WorkspaceTrust {
  /** The content hash of the workspace config its user trusts; null: not trusted (or nothing to trust). */
  trustedSha256: string | null;
  /** The keys left out because the config is not trusted. */
  ignored: UntrustedKey[];
  /** The workspace config file, when there is one. */
  file: string | undefined;
  /**
   * In words, for messages: `trusted`, `not trusted` (the user said so), `changed since you trusted it`, `no decision`.
   */
  state: string;
}

/** The warning for a run whose workspace config keys were left out as untrusted; undefined when none were. */
export function untrustedWarning(trust: WorkspaceTrust): string | undefined {
  if (trust.ignored.length === 0) return undefined;
  const names = someNames(trust.ignored.map((key) => key.key));
  return (
    `ignoring ${names} in ${trust.file}: this workspace config is not trusted. ` +
    'Review it, then run `jp trust` to use these settings.'
  );
}
