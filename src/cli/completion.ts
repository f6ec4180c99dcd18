/**
 * Shell completion from the one command definition (commander's tree in program.ts). The script of
 * each shell is a few lines that ask jp itself, at every Tab, for the candidates of the word being
 * completed (`jp __complete -- <words so far>`): commands, subcommands and flags come from the tree,
 * an option's choices from its definition, `-m` from the providers (src/llm/resolve.ts) and the
 * openai-compatible names configured in the user's and the workspace's config, and conversation ids
 * from the workspace. Nothing is listed by hand, so nothing can drift.
 */
import { readdirSync, readFileSync } from 'node:fs';
import type { Command, Option } from 'commander';
import { keyPaths } from '../config/locate.ts';
import { userConfigFile } from '../config/paths.ts';
import { modelPrefixes } from '../llm/resolve.ts';
import { resolveWorkspace } from '../workspace/workspace.ts';

export const shells = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof shells)[number];

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
  zsh: `#compdef jp
# jp completion for zsh: add to ~/.zshrc (after compinit):  source <(jp completion zsh)
_jp() {
  local -a candidates
  candidates=("\${(@f)$(jp __complete -- "\${(@)words[2,CURRENT]}" 2>/dev/null)}")
  compadd -- "\${(@)candidates:#}"
}
compdef _jp jp
`,
  fish: `# jp completion for fish: jp completion fish > ~/.config/fish/completions/jp.fish
complete -c jp -f -a '(jp __complete -- (commandline -opc)[2..-1] (commandline -ct) 2>/dev/null)'
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
  const files = [userConfigFile(environment)];
  try {
    files.push(resolveWorkspace(cwd, environment).configFile);
  } catch {
    // no workspace: the user's config only
  }
  for (const file of files) {
    let source: string;
    try {
      source = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const [first, second, name] of keyPaths(source)) if (first === 'providers' && second === 'openai-compatible' && name && plainName.test(name)) names.push(name);
  }
  return names;
}

function conversationIds(cwd: string, environment: NodeJS.ProcessEnv): string[] {
  try {
    return readdirSync(resolveWorkspace(cwd, environment).conversationsDirectory)
      .filter((name) => /^jp-c\d+$/.test(name))
      .sort()
      .reverse();
  } catch {
    return [];
  }
}

/** The options a word of `command` can be: its own and those of the commands above it. */
function optionsIn(command: Command): Option[] {
  const options: Option[] = [];
  for (let current: Command | null = command; current; current = current.parent) options.push(...current.options.filter((option) => !option.hidden));
  return options;
}

/** What the word being completed (the last of `words`) can be. */
export function completionCandidates(program: Command, words: string[], cwd: string, environment: NodeJS.ProcessEnv): string[] {
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
    command = command.commands.find((subcommand) => subcommand.name() === word || subcommand.aliases().includes(word)) ?? command;
  }
  if (awaitingValueOf) {
    if (awaitingValueOf.argChoices) return awaitingValueOf.argChoices;
    if (awaitingValueOf.attributeName() === 'model') return modelPrefixes(compatibleProviderNames(cwd, environment));
    if (awaitingValueOf.attributeName() === 'id') return conversationIds(cwd, environment);
    return [];
  }
  if (current.startsWith('-')) return [...new Set(optionsIn(command).flatMap((option) => (option.long ? [option.long] : [])))];
  const subcommands = command.createHelp().visibleCommands(command).map((subcommand) => subcommand.name());
  const takesConversation = command.registeredArguments[0]?.name() === 'cid';
  return [...subcommands, ...(takesConversation ? conversationIds(cwd, environment) : [])];
}
