/**
 * Every command example in README.md runs, as written, in a sandbox: the shell code blocks
 * (```sh, bash, shell, console) are read from README.md on each run, so an example added later
 * is covered without touching this file.
 *
 * How the examples run: all blocks, in README order, one command per line (a backslash continues a
 * line; a heredoc runs to its end marker), in ONE bash session (so `cid=$(...)` on one line serves
 * the next ones) with `set -o pipefail`, no terminal and stdin from /dev/null unless the example
 * redirects it. `jp` on PATH is the built binary; its user config points every provider at local
 * fake servers speaking the providers' real streaming formats, so `openai/...`, `anthropic/...` and
 * `ollama/...` models answer with a scripted text and nothing leaves the machine; the environment
 * holds a (fake) key of each provider, as a user of that provider's models has. The workspace
 * starts empty except for the files the examples read (`fixtureFiles`). A literal conversation id
 * (`jp-c` and 16 digits) stands for a conversation of the sandbox: the first one listed.
 *
 * What each example must do: exit 0, print no line that is just `null` (a `jq` filter that does not
 * match jp's output), and report no internal error. The only exceptions are listed in
 * `exceptions`, each with its reason; an exception that matches no example fails the test, so the
 * list cannot go stale. Examples whose point is what they print are listed in `expectedOutputs`
 * with their exact stdout (an empty output does not pass); an entry that matches no example fails
 * the test too.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { startFakeProvider, textStep, type FakeProvider, type WireFormat } from '../support/fake-provider.ts';
import { jpBinary, repositoryRoot } from '../support/jp.ts';

interface Example {
  /** The command as the README shows it (continuations joined, heredocs included). */
  text: string;
  /** The command without its trailing comment, for matching exceptions and for messages. */
  command: string;
  /** 1-based line in README.md. */
  line: number;
}

interface Exception {
  command: string;
  reason: string;
  /** Not run at all (replaced by `:`). */
  skip?: true;
  /** The outcomes it may end with: an exit code, and what stderr then says. */
  outcomes?: { exitCode: number; stderr?: RegExp }[];
}

const exceptions: Exception[] = [
  {
    command: 'npm ci && npm run demo',
    skip: true,
    reason:
      'reinstalls the dependencies from the npm registry (no network in a sandbox) and rebuilds dist/ under the tests that are running it',
  },
  { command: 'npm test', skip: true, reason: 'the test suite that runs this test' },
  {
    command: 'npm install -g .',
    skip: true,
    reason: "changes the user's global prefix; installing into a temporary prefix is tested in install.test.ts",
  },
  {
    command: 'npm pack && npm install -g ./jp-agent-0.1.0.tgz',
    skip: true,
    reason:
      "changes the user's global prefix; packing and installing the tarball into a temporary prefix is tested in install.test.ts",
  },
  {
    command: 'jp',
    outcomes: [{ exitCode: 2, stderr: /no command given\. Start here:/ }],
    reason: 'bare jp is a usage case: where to start, then the commands, exit 2',
  },
  {
    command: 'jp query --continue',
    outcomes: [{ exitCode: 2, stderr: /has no incomplete turn to continue/ }],
    reason:
      'needs a turn that stopped half way; in the sandbox every turn before it completed, and jp says so (resuming is tested in resume.test.ts)',
  },
  ...['jp web', 'jp web --port 8765', 'jp web --host me@devbox'].map(
    (command): Exception => ({
      command,
      skip: true,
      reason:
        'a server that runs until Ctrl+C; jp web is served, driven by a real browser in web.test.ts and reached over SSH in web-ssh.test.ts',
    }),
  ),
  {
    command: 'ssh -L 8765:127.0.0.1:8765 me@workstation jp web --port 8765',
    skip: true,
    reason: "a host of the reader's own; jp web over SSH (against a real sshd) is tested in web-ssh.test.ts",
  },
  {
    command: 'jp conversation attach "$cid"',
    outcomes: [
      { exitCode: 0 },
      { exitCode: 1, stderr: /no running process for jp-c\d+, and its last turn is complete/ },
    ],
    reason:
      'the scripted model answers at once, so the detached run may be over before attach starts: attach then says so (exit 1) instead of watching it to its end (exit 0); attaching is tested in attach.test.ts',
  },
];

/** Files the examples read, created in the workspace before they run. */
const fixtureFiles: Record<string, string> = {
  'error.log': 'TypeError: cannot read properties of undefined (reading "length")\n    at parse (src/parser.ts:12:7)\n',
  'prompt.md': 'Summarise this repository in one sentence.\n',
};

const answer = 'README example answer.';

/** Examples that must print exactly this on stdout (the fake providers answer `answer`). */
const expectedOutputs: { command: string; stdout: string; reason: string }[] = [
  {
    command: `jp query --json "list the TODOs" | jq -r 'select(.type=="result").answer'`,
    stdout: `${answer}\n`,
    reason: "the documented way to get the answer out of --json: the result line's answer, once, as raw text",
  },
];
const shellLanguages = new Set(['sh', 'bash', 'shell', 'console']);

/** The text before a trailing `# comment`, outside quotes. */
function withoutComment(text: string): string {
  let quote: string | undefined;
  for (let index = 0; index < text.length; index++) {
    const character = text[index]!;
    if (quote) {
      if (character === '\\' && quote === '"') index++;
      else if (character === quote) quote = undefined;
    } else if (character === '\\') index++;
    else if (character === "'" || character === '"') quote = character;
    else if (character === '#' && (index === 0 || /\s/.test(text[index - 1]!))) return text.slice(0, index).trimEnd();
  }
  return text.trimEnd();
}

function readmeExamples(markdown: string): Example[] {
  const lines = markdown.split('\n');
  const examples: Example[] = [];
  let inShellBlock = false;
  let inOtherBlock = false;
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!;
    const fence = /^\s*```\s*([\w-]*)/.exec(line);
    if (fence) {
      if (inShellBlock || inOtherBlock) {
        inShellBlock = inOtherBlock = false;
      } else if (shellLanguages.has(fence[1]!.toLowerCase())) inShellBlock = true;
      else inOtherBlock = true;
      continue;
    }
    if (!inShellBlock) continue;
    const start = index;
    let text = line.replace(/^\s*\$ /, '');
    // The backslash stays: bash reads the lines as one command, as a reader of the README does.
    while (text.endsWith('\\') && index + 1 < lines.length) text = text + '\n' + lines[++index]!;
    const heredoc = /<<(-?)\s*['"]?(\w+)['"]?/.exec(withoutComment(text));
    if (heredoc) {
      const marker = heredoc[2]!;
      while (index + 1 < lines.length) {
        const next = lines[++index]!;
        text += '\n' + next;
        if ((heredoc[1] ? next.trim() : next) === marker) break;
      }
    }
    const command = withoutComment(text).trim();
    if (command === '') continue;
    examples.push({ text, command, line: start + 1 });
  }
  return examples;
}

const readme = readFileSync(path.join(repositoryRoot, 'README.md'), 'utf8');
const examples = readmeExamples(readme);

describe('README examples', () => {
  const providers: FakeProvider[] = [];
  const root = mkdtempSync(path.join(os.tmpdir(), 'jpr-'));
  after(async () => {
    for (const provider of providers) await provider.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('the README has shell examples, and every exception names one of them', () => {
    assert.ok(examples.length >= 10, `only ${examples.length} shell examples found in README.md`);
    for (const exception of exceptions) {
      assert.ok(
        examples.some((example) => example.command === exception.command),
        `the exception for \`${exception.command}\` matches no README example any more: remove it from test/e2e/readme-examples.test.ts`,
      );
    }
    for (const expected of expectedOutputs) {
      assert.ok(
        examples.some((example) => example.command === expected.command),
        `the expected output of \`${expected.command}\` matches no README example any more: update expectedOutputs in test/e2e/readme-examples.test.ts`,
      );
    }
  });

  it('every shell example in README.md runs as documented against the local fake providers', async () => {
    const start = async (wire: WireFormat): Promise<string> => {
      const provider = await startFakeProvider({ wire, steps: () => textStep(answer) });
      providers.push(provider);
      return provider.baseUrl;
    };
    const [openai, anthropic, chat] = [
      await start('openai-responses'),
      await start('anthropic'),
      await start('openai-chat'),
    ];

    const workspace = path.join(root, 'w');
    const bin = path.join(root, 'bin');
    const outputs = path.join(root, 'out');
    for (const directory of [workspace, bin, outputs, path.join(root, 'home'), path.join(root, 'c', 'jp')])
      mkdirSync(directory, { recursive: true });
    writeFileSync(
      path.join(bin, 'jp'),
      `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(jpBinary)} "$@"\n`,
      { mode: 0o755 },
    );
    writeFileSync(
      path.join(root, 'c', 'jp', 'config.toml'),
      [
        `[providers.openai]`,
        `base_url = "${openai}"`,
        `[providers.anthropic]`,
        `base_url = "${anthropic}"`,
        `[providers.ollama]`,
        `base_url = "${chat}"`,
        '',
      ].join('\n'),
    );
    for (const [name, content] of Object.entries(fixtureFiles)) writeFileSync(path.join(workspace, name), content);

    const exceptionOf = (example: Example): Exception | undefined =>
      exceptions.find((exception) => exception.command === example.command);
    const script = ['set -o pipefail', `cd ${JSON.stringify(workspace)}`, '__jp_cid=jp-c0000000000000000'];
    examples.forEach((example, index) => {
      const body = exceptionOf(example)?.skip ? ':' : example.text.replace(/\bjp-c\d{16}\b/g, `$${'{'}__jp_cid}`);
      script.push(
        `__jp_cid=$(ls .jp/conversations 2>/dev/null | grep '^jp-c' | head -n 1)`,
        `{ ${body}`,
        `} >${JSON.stringify(path.join(outputs, `${index}.out`))} 2>${JSON.stringify(path.join(outputs, `${index}.err`))} </dev/null`,
        `echo "${index} $?" >>${JSON.stringify(path.join(outputs, 'status'))}`,
      );
    });
    writeFileSync(path.join(root, 'examples.sh'), script.join('\n') + '\n');

    const environment: NodeJS.ProcessEnv = {
      PATH: `${bin}:${path.dirname(process.execPath)}:${process.env.PATH ?? '/usr/bin:/bin'}`,
      HOME: path.join(root, 'home'),
      XDG_DATA_HOME: path.join(root, 'd'),
      XDG_CONFIG_HOME: path.join(root, 'c'),
      XDG_CACHE_HOME: path.join(root, 'cache'),
      LANG: 'C.UTF-8',
      TERM: 'xterm-256color',
      JP_SESSION: 'readme',
      ANTHROPIC_API_KEY: 'sk-ant-readme-0000000000000000',
    };
    const shell = spawn('bash', [path.join(root, 'examples.sh')], {
      cwd: workspace,
      env: environment,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let shellError = '';
    shell.stderr.on('data', (chunk: Buffer) => (shellError += chunk.toString()));
    const safetyLimitMs = 240_000;
    const finished = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        try {
          process.kill(-shell.pid!, 'SIGKILL');
        } catch {
          // already gone
        }
        resolve(false);
      }, safetyLimitMs);
      shell.on('close', () => {
        clearTimeout(timer);
        resolve(true);
      });
    });

    const statusFile = path.join(outputs, 'status');
    const statuses = new Map<number, number>();
    for (const line of existsSync(statusFile) ? readFileSync(statusFile, 'utf8').trim().split('\n') : []) {
      const [index, code] = line.split(' ').map(Number);
      statuses.set(index!, code!);
    }
    const read = (index: number, stream: 'out' | 'err'): string => {
      const file = path.join(outputs, `${index}.${stream}`);
      return existsSync(file) ? readFileSync(file, 'utf8') : '';
    };

    const failures: string[] = [];
    examples.forEach((example, index) => {
      const where = `README.md:${example.line} \`${example.command}\``;
      const code = statuses.get(index);
      const stdout = read(index, 'out');
      const stderr = read(index, 'err');
      const shown = `\n    stdout: ${JSON.stringify(stdout.slice(0, 400))}\n    stderr: ${JSON.stringify(stderr.slice(0, 600))}`;
      if (code === undefined) {
        failures.push(
          `${where}: did not finish${finished ? '' : ` within the ${safetyLimitMs / 1000} s safety limit (it hung)`}${shown}`,
        );
        return;
      }
      const exception = exceptionOf(example);
      if (exception?.skip) return;
      const outcomes = exception?.outcomes ?? [{ exitCode: 0 }];
      const outcome = outcomes.find((candidate) => candidate.exitCode === code);
      if (!outcome)
        failures.push(
          `${where}: exit ${code}, expected ${outcomes.map((candidate) => candidate.exitCode).join(' or ')}${shown}`,
        );
      else if (outcome.stderr && !outcome.stderr.test(stderr))
        failures.push(`${where}: exit ${code} without saying ${outcome.stderr}${shown}`);
      const expected = expectedOutputs.find((candidate) => candidate.command === example.command);
      if (expected && stdout !== expected.stdout)
        failures.push(
          `${where}: printed ${JSON.stringify(stdout)}, expected ${JSON.stringify(expected.stdout)} (${expected.reason})${shown}`,
        );
      if (/^null$/m.test(stdout))
        failures.push(`${where}: printed \`null\` (a filter that matches nothing in jp's output?)${shown}`);
      if (/internal error|This is a bug in jp/i.test(stderr))
        failures.push(`${where}: reported an internal error${shown}`);
    });
    assert.deepEqual(
      failures,
      [],
      `README examples that do not work as documented:\n${failures.join('\n')}\n${shellError ? `bash: ${shellError}` : ''}`,
    );
  });
});
