/**
 * `jp init`: makes the current directory a workspace (`.jp/` with a commented config and the
 * conversations directory). Running it again changes nothing.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { workspaceDirectoryName } from '../../workspace/workspace.ts';
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

export function initCommand(context: CommandContext): number {
  const directory = path.join(context.facts.cwd, workspaceDirectoryName);
  if (existsSync(directory)) {
    context.status(`${directory} already exists; this is already a jp workspace.`);
    return 0;
  }
  // Private whatever the umask (DESIGN §10): conversations are the user's; the config may be read.
  mkdirSync(path.join(directory, 'conversations'), { recursive: true, mode: 0o700 });
  writeFileSync(path.join(directory, 'config.toml'), template, { flag: 'wx', mode: 0o644 });
  if (context.format === 'json') context.jsonLine(context.stdout, 'initialized', { path: directory });
  else context.status(`Initialized a jp workspace in ${directory}`);
  return 0;
}
