/**
 * Shell completion from the one command definition (commander's tree in program.ts). The script of
 * each shell is a few lines that ask jp itself, at every Tab, for the candidates of the word being
 * completed (`jp __complete -- <words so far>`): commands, subcommands and flags come from the tree,
 * an option's choices from its definition, `-m` from the providers (src/llm/resolve.ts) and the
 * openai-compatible names configured in the user's and the workspace's config, `--tool` from the
 * builtin tools and the local tools configured, and conversation ids from the workspace (zsh and fish
 * show each id's title beside it: `jp __complete --describe` prints `candidate<TAB>description`).
 * Nothing is listed by hand, so nothing can drift.
 */
import { readdirSync } from 'node:fs';
import type { Command, Option } from 'commander';
import { keyPaths } from '../config/locate.ts';
import { userConfigFile } from '../config/paths.ts';
import { modelPrefixes } from '../llm/resolve.ts';
import { visible } from '../output/sanitize.ts';
import { readMetadata } from '../conversation/store.ts';
import { builtinTools } from '../tools/registry.ts';
import { resolveWorkspace } from '../workspace/workspace.ts';
import { readConfigFile } from '../workspace/files.ts';

import type { Shell } from './shells.ts';

const scripts: Record<Shell, string> = {
  // No shell ever evaluates a candidate: bash keeps the lines that start with the word (compgen -W
  // would expand each, running a `$(...)` in it), zsh quotes what it inserts (no -Q).
  bash: `# jp completion for bash: add to ~/.bashrc:  source <(jp completion bash)
_jp_complete() {
  local current="\${COMP_WORDS[COMP_CWORD]}" candidate
  COMPREPLY=()
  while IFS= read -r candidate; do
    [[ "$candidate" == "$current"* ]] && COMPREPLY+=("$candidate")
  done < <(jp __complete -- "\${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null)
}
complete -o default -F _jp_complete jp
`,
  zsh:
    `#compdef jp
# jp completion for zsh: add to ~/.zshrc (after compinit):  source <(jp completion zsh)
_jp() {
  local -a values displays
  local line
  for line in "\${(@f)$(jp __complete --describe -- "\${(@)words[2,CURRENT]}" 2>/dev/null)}"; do
    [[ -z "$line" ]] && continue
    values+=("\${line%%$'\\t'*}")
    if [[ "$line" == *$'\\t'* ]]; then displays+=("\${line%%$'\\t'*}  -- \${line#*$'\\t'}"); ` +
    `else displays+=("$line"); fi
  done
  compadd -l -d displays -- "\${(@)values}"
}
compdef _jp jp
`,
  fish: `# jp completion for fish: jp completion fish > ~/.config/fish/completions/jp.fish
complete -c jp -f -a '(jp __complete --describe -- (commandline -opc)[2..-1] (commandline -ct) 2>/dev/null)'
`,
};

export function completionScript(shell: Shell): string {
  return scripts[shell];
}

/** What a provider name must look like to be offered (nothing a shell could expand). */
const plainName = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/**
 * The names configured under `providers.openai-compatible` in the user's and the workspace's config
 * files, read without parsing or validating them (a file that is absent or unreadable names none).
 * Only names of letters, digits, `.`, `_` and `-` are offered: a cloned repository's config chooses
 * these names, and a shell must never be handed one to expand.
 */
function compatibleProviderNames(cwd: string, environment: NodeJS.ProcessEnv): string[] {
  const names: string[] = [];
  for (const source of configFiles(cwd, environment)) {
    for (const [first, second, name] of keyPaths(source))
      if (first === 'providers' && second === 'openai-compatible' && name && plainName.test(name)) names.push(name);
  }
  return names;
}

/** The text of the user's and the workspace's config files that can be read (unparsed). */
function configFiles(cwd: string, environment: NodeJS.ProcessEnv): string[] {
  const files = [userConfigFile(environment)];
  try {
    files.push(resolveWorkspace(cwd, environment).configFile);
  } catch {
    // no workspace: the user's config only
  }
  const sources: string[] = [];
  for (const file of files) {
    try {
      const source = readConfigFile(file);
      if (source !== undefined) sources.push(source);
    } catch {
      // absent or unreadable: names nothing
    }
  }
  return sources;
}

/** A word the shell may insert, and what zsh and fish show beside it. */
export interface Candidate {
  value: string;
  description?: string;
}

const plain = (values: readonly string[]): Candidate[] => values.map((value) => ({ value }));

/** The workspace's conversations, newest first, each described by its title (shown, never expanded). */
function conversationIds(cwd: string, environment: NodeJS.ProcessEnv): Candidate[] {
  let directory: string;
  let names: string[];
  try {
    directory = resolveWorkspace(cwd, environment).conversationsDirectory;
    names = readdirSync(directory);
  } catch {
    return [];
  }
  return names
    .filter((name) => /^jp-c\d+$/.test(name))
    .sort()
    .reverse()
    .map((value) => {
      let title: string | null = null;
      try {
        title = readMetadata(directory, value).title;
      } catch {
        // an unreadable conversation is still offered, without its title
      }
      return title ? { value, description: visible(title, { singleLine: true }).slice(0, 60) } : { value };
    });
}

/**
 * The tools `--tool` can name: the builtins, then the local tools configured under
 * `conversation.tools` in the user's and the workspace's config (plain names only, as for providers).
 */
function toolNames(cwd: string, environment: NodeJS.ProcessEnv): string[] {
  const names = builtinTools({ protectedDirectories: [] }).map((tool) => tool.name);
  for (const file of configFiles(cwd, environment)) {
    for (const [first, second, name] of keyPaths(file)) {
      if (
        first === 'conversation' &&
        second === 'tools' &&
        name &&
        name !== 'defaults' &&
        plainName.test(name) &&
        !names.includes(name)
      )
        names.push(name);
    }
  }
  return names;
}

/** The options a word of `command` can be: its own and those of the commands above it. */
function optionsIn(command: Command): Option[] {
  const options: Option[] = [];
  for (let current: Command | null = command; current; current = current.parent)
    options.push(...current.options.filter((option) => !option.hidden));
  return options;
}

/** What the word being completed (the last of `words`) can be. */
export function completionCandidates(
  program: Command,
  words: string[],
  cwd: string,
  environment: NodeJS.ProcessEnv,
): Candidate[] {
  const current = words.at(-1) ?? '';
  let command = program;
  let awaitingValueOf: Option | undefined;
  for (const word of words.slice(0, -1)) {
    if (awaitingValueOf) {
      awaitingValueOf = undefined;
      continue;
    }
    if (word.startsWith('-')) {
      // An option's value attached (`--id=x`) or optional (`--fork[=cid]`) is never the next word.
      const option = optionsIn(command).find((candidate) => candidate.long === word || candidate.short === word);
      if (option?.required) awaitingValueOf = option;
      continue;
    }
    command =
      command.commands.find((subcommand) => subcommand.name() === word || subcommand.aliases().includes(word)) ??
      command;
  }
  if (awaitingValueOf) {
    if (awaitingValueOf.argChoices) return plain(awaitingValueOf.argChoices);
    if (awaitingValueOf.attributeName() === 'model')
      return plain(modelPrefixes(compatibleProviderNames(cwd, environment)));
    if (awaitingValueOf.attributeName() === 'id') return conversationIds(cwd, environment);
    if (awaitingValueOf.attributeName() === 'tool') return plain(toolNames(cwd, environment));
    return [];
  }
  if (current.startsWith('-'))
    return plain([...new Set(optionsIn(command).flatMap((option) => (option.long ? [option.long] : [])))]);
  const subcommands = command
    .createHelp()
    .visibleCommands(command)
    .map((subcommand) => subcommand.name());
  const takesConversation = command.registeredArguments[0]?.name() === 'cid';
  return [...plain(subcommands), ...(takesConversation ? conversationIds(cwd, environment) : [])];
}
