/**
 * What bare `jp` (no command) prints before the list of commands: the first steps of a new user.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { userConfigFile } from '../config/paths.ts';

/** The demo script shipped in the package (examples/), found from the program's real location. */
function demoScript(programFile: string): string {
  let directory = path.dirname(programFile);
  for (let level = 0; level < 3; level++) {
    const candidate = path.join(directory, 'examples', 'demo-script.json');
    if (existsSync(candidate)) return candidate;
    directory = path.dirname(directory);
  }
  return 'examples/demo-script.json';
}

const quoted = (text: string): string => (/^[\w./=:@+-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`);

export function startHere(programFile: string, environment: NodeJS.ProcessEnv): string {
  return [
    'jp: no command given. Start here:',
    '',
    '  jp init                     make the current directory a workspace (.jp/)',
    `  jp query -m test -c ${quoted(`providers.test.script=${demoScript(programFile)}`)} "hello"`,
    '                              a first query, offline: the test provider replays a script (no model, no key)',
    '  export OPENAI_API_KEY=...   then `jp query "..."` asks a real model (openai/gpt-4.1-mini by default);',
    '                              or ANTHROPIC_API_KEY with -m anthropic/<model>, or -m ollama/<model> with no key',
    '',
    `Configuration: ${userConfigFile(environment)} (yours) and .jp/config.toml (the workspace's);`,
    '`jp config show` prints the merged result and where each value came from.',
    '',
  ].join('\n');
}
