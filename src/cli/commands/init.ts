/**
 * `jp init`: makes the current directory a workspace (`.jp/` with a commented config, the
 * conversations directory and an ignore file). Running it again changes nothing. Inside another
 * workspace it nests, and says so; over another user's `.jp/` it refuses (ownership.ts).
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { RunError } from '../../errors.ts';
import { refusedOwnership, safeDirectoryHint } from '../../workspace/ownership.ts';
import { findWorkspaceRoot, workspaceDirectoryName } from '../../workspace/workspace.ts';
import type { CommandContext } from '../context.ts';

const template = `# jp workspace configuration. Every key is optional; \`jp config show\` prints the merged result.
# Reference: the "Configuration" section of jp's README.

[assistant]
# model = "openai/gpt-4.1-mini"        # or anthropic/<model>, ollama/<model>, <name>/<model>

[conversation.tools.defaults]
# run = "ask"          # attached: ask | unattended | edit | skip
# result = "unattended"
# detached = "deny"    # with no human: auto | defaults | deny | defer
`;

/**
 * `.jp/.gitignore`: conversations are the user's to commit or not, so they are left out of
 * `git add .` by default (a committed conversation configures nothing for anyone else either: its
 * settings are sealed for the user who recorded them); the config is meant to be committed.
 */
const ignoreFile = `# Written by \`jp init\`. Conversations are yours to commit or not: they are left out of
# \`git add .\` here; delete the line below to commit them. config.toml is meant to be committed.
/conversations/
`;

export function initCommand(context: CommandContext): number {
  const directory = path.join(context.facts.cwd, workspaceDirectoryName);
  if (existsSync(directory)) {
    const problems = refusedOwnership(context.facts.cwd);
    if (problems.length > 0) {
      throw new RunError(
        'unsafe_workspace',
        `cannot make a workspace ` +
          `in ${context.facts.cwd}: ${problems.map((entry) => `${entry.path} ${entry.problem}`).join('; ')}`,
        { hint: safeDirectoryHint(context.facts.cwd) },
      );
    }
    context.status(`${directory} already exists; this is already a jp workspace.`);
    return 0;
  }
  // The workspace this directory was in until now, if any: the new one nests inside it.
  const { root: enclosing } = findWorkspaceRoot(context.facts.cwd);
  // Private whatever the umask (DESIGN §10): conversations are the user's; the config may be read.
  mkdirSync(path.join(directory, 'conversations'), { recursive: true, mode: 0o700 });
  writeFileSync(path.join(directory, 'config.toml'), template, { flag: 'wx', mode: 0o644 });
  writeFileSync(path.join(directory, '.gitignore'), ignoreFile, { flag: 'wx', mode: 0o600 });
  if (context.format === 'json')
    context.jsonLine(context.stdout, 'initialized', { path: directory, nested_in: enclosing ?? null });
  else {
    context.status(`Initialized a jp workspace in ${directory}`);
    if (enclosing)
      context.status(
        `It nests inside the workspace at ${enclosing}: jp commands run here or below now use this one (its own ` +
          `config and conversations); those of ${enclosing} stay there.`,
      );
    context.status('Conversations are left out of `git add .` (.jp/.gitignore); config.toml is meant to be committed.');
  }
  return 0;
}
