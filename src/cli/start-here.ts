/**
 * What bare `jp` (no command) prints before the list of commands: the first steps of a new user.
 */
import { accessSync, constants, existsSync, realpathSync } from 'node:fs';
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

/** Whether `jp` on PATH is this very program (a global install, `npm link`, a symlink of the user's). */
function jpOnPath(programFile: string, environment: NodeJS.ProcessEnv): boolean {
  let program: string;
  try {
    program = realpathSync(programFile);
  } catch {
    return false;
  }
  for (const directory of (environment.PATH ?? '').split(path.delimiter)) {
    if (directory === '') continue;
    const candidate = path.join(directory, 'jp');
    try {
      accessSync(candidate, constants.X_OK);
      return realpathSync(candidate) === program;
    } catch {
      // not here: the next directory
    }
  }
  return false;
}

/**
 * How the user can run this jp again: as npx ran it (`npx --package <spec> jp`); else `jp` when that
 * is this program on PATH; else through node and its path (a clone, an unpacked tarball).
 */
export function invocation(programFile: string, environment: NodeJS.ProcessEnv): string {
  // npx puts the package's bin on PATH for this one run only: check for it first.
  const npxPackage = environment.npm_command === 'exec' ? environment.npm_config_package : undefined;
  if (npxPackage) return `npx --package ${quoted(npxPackage)} jp`;
  if (jpOnPath(programFile, environment)) return 'jp';
  return `node ${quoted(programFile)}`;
}

export function startHere(programFile: string, environment: NodeJS.ProcessEnv): string {
  const jp = invocation(programFile, environment);
  const pad = (command: string): string => `  ${command.padEnd(26)}  `;
  return [
    'jp: no command given. Start here:',
    '',
    `${pad(`${jp} init`)}make the current directory a workspace (.jp/)`,
    `  ${jp} query -m test -c ${quoted(`providers.test.script=${demoScript(programFile)}`)} "hello"`,
    '                              a first query, offline: the test provider replays a script (no model, no key)',
    `  export OPENAI_API_KEY=...   then \`${jp} query "..."\` asks a real model (openai/gpt-4.1-mini by default);`,
    '                              or ANTHROPIC_API_KEY with -m anthropic/<model>, or -m ollama/<model> with no key',
    '',
    `Configuration: ${userConfigFile(environment)} (yours) and .jp/config.toml (the workspace's);`,
    `\`${jp} config show\` prints the merged result and where each value came from.`,
    ...(jp === 'jp'
      ? []
      : [
          '',
          'jp is not on your PATH: `npm install -g .` in a clone (or `npm install -g <jp tarball>`) puts it there.',
        ]),
    '',
  ].join('\n');
}
