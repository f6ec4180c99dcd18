/**
 * The CI examples (examples/ci/) run as a runner runs them: their YAML parsed, each `run:` step
 * (GitHub Actions) or script line (GitLab CI) executed by bash with no terminal, `CI=true` and a
 * fresh HOME, the job's environment as the file sets it. jp is installed by the file's own install
 * step (`npm install -g "$JP_PACKAGE"`, here this checkout), the provider is the fake one (its
 * address given the way a runner's environment would, JP_CFG_*), and the model's command runs in
 * the real sandbox. The steps a runner's own actions do (checkout, setup-node, upload-artifact)
 * are played by the test: the repository is checked out, node is on PATH, the artifact's paths
 * must exist.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { parse } from 'yaml';
import {
  startFakeProvider,
  stepByToolResults,
  textStep,
  toolStep,
  type FakeProvider,
} from '../support/fake-provider.ts';
import { repositoryRoot } from '../support/jp.ts';

const roots: string[] = [];
after(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
});

const answer = '## Review\n\nThe change adds one line to `notes.md`; nothing risky.';

/** A checked-out repository on a branch with one commit over origin/main; its runner's directories. */
function runnerMachine(): { root: string; workspace: string; home: string; prefix: string } {
  const root = mkdtempSync(path.join(os.tmpdir(), 'jpci-'));
  roots.push(root);
  const workspace = path.join(root, 'repo');
  const home = path.join(root, 'home');
  const prefix = path.join(root, 'npm-global');
  for (const directory of [workspace, home, prefix]) mkdirSync(directory, { recursive: true });
  const git = (...args: string[]): void => {
    execFileSync('git', args, {
      cwd: workspace,
      stdio: 'ignore',
      env: {
        PATH: process.env.PATH,
        HOME: home,
        GIT_AUTHOR_NAME: 'ci',
        GIT_AUTHOR_EMAIL: 'ci@example.com',
        GIT_COMMITTER_NAME: 'ci',
        GIT_COMMITTER_EMAIL: 'ci@example.com',
      },
    });
  };
  git('init', '-q', '-b', 'main');
  writeFileSync(path.join(workspace, 'notes.md'), 'first line\n');
  git('add', '.');
  git('commit', '-q', '-m', 'first');
  git('update-ref', 'refs/remotes/origin/main', 'HEAD');
  git('checkout', '-q', '-b', 'feature');
  writeFileSync(path.join(workspace, 'notes.md'), 'first line\nadded on the branch\n');
  git('commit', '-q', '-am', 'second');
  return { root, workspace, home, prefix };
}

/** The environment a runner gives every step: no terminal, CI=true, a fresh HOME, npm's global prefix on PATH. */
function runnerEnvironment(machine: ReturnType<typeof runnerMachine>): NodeJS.ProcessEnv {
  return {
    PATH: [path.join(machine.prefix, 'bin'), path.dirname(process.execPath), '/usr/local/bin', '/usr/bin', '/bin'].join(
      ':',
    ),
    HOME: machine.home,
    LANG: 'C.UTF-8',
    CI: 'true',
    npm_config_prefix: machine.prefix,
    npm_config_update_notifier: 'false',
  };
}

/** What the fake provider stands in for: its address, given as a runner's environment would. */
function providerEnvironment(provider: FakeProvider): NodeJS.ProcessEnv {
  return { JP_CFG_PROVIDERS__OPENAI__BASE_URL: provider.baseUrl, JP_CFG_PROVIDERS__OPENAI__API: 'chat' };
}

/** Runs `script` with bash as a runner does (`-eo pipefail`), from a file, detached from any terminal. */
function bash(script: string, cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'jpci-step-')), 'step.sh');
  roots.push(path.dirname(file));
  writeFileSync(file, script);
  const child = spawn('bash', ['--noprofile', '--norc', '-eo', 'pipefail', file], {
    cwd,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: Buffer[] = [];
  child.stdout.on('data', (chunk: Buffer) => output.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => output.push(chunk));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      process.kill(-child.pid!, 'SIGKILL');
      reject(new Error(`step still running after 180 s (hung):\n${script}\n${Buffer.concat(output).toString()}`));
    }, 180_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output: Buffer.concat(output).toString('utf8') });
    });
  });
}

/** `${{ secrets.NAME }}` from `secrets`; any other expression fails the test (it would need emulating). */
function expand(value: unknown, secrets: Record<string, string>): string {
  return String(value).replace(/\$\{\{\s*(.*?)\s*\}\}/g, (_, expression: string) => {
    const secret = /^secrets\.(\w+)$/.exec(expression);
    if (!secret || secrets[secret[1]!] === undefined)
      throw new Error(`unsupported expression in the example: ${expression}`);
    return secrets[secret[1]!]!;
  });
}

interface GithubStep {
  name?: string;
  uses?: string;
  run?: string;
  if?: string;
  with?: Record<string, unknown>;
}

/** Runs the job's steps in order; after a failure only `if: always()` steps run, as on GitHub. */
async function runGithubJob(
  machine: ReturnType<typeof runnerMachine>,
  provider: FakeProvider,
): Promise<{ steps: { step: string; code: number | null; output: string }[]; summary: string }> {
  const workflow = parse(readFileSync(path.join(repositoryRoot, 'examples', 'ci', 'github-actions.yml'), 'utf8'));
  const job = workflow.jobs.review as { env: Record<string, string>; steps: GithubStep[] };
  const summary = path.join(machine.root, 'step-summary.md');
  writeFileSync(summary, '');
  const jobEnvironment = Object.fromEntries(
    Object.entries(job.env).map(([name, value]) => [
      name,
      expand(value, { OPENAI_API_KEY: 'sk-test-key-000000000000000000' }),
    ]),
  );
  const env: NodeJS.ProcessEnv = {
    ...runnerEnvironment(machine),
    GITHUB_ACTIONS: 'true',
    GITHUB_WORKSPACE: machine.workspace,
    GITHUB_STEP_SUMMARY: summary,
    GITHUB_BASE_REF: 'main',
    ...jobEnvironment,
    // What this test installs: this checkout, as `npm install -g <directory>` installs it.
    JP_PACKAGE: repositoryRoot,
    ...providerEnvironment(provider),
  };
  const results: { step: string; code: number | null; output: string }[] = [];
  let failed = false;
  for (const step of job.steps) {
    const name = step.name ?? step.uses ?? 'step';
    if (failed && step.if !== 'always()') continue;
    if (step.uses?.startsWith('actions/checkout@') || step.uses?.startsWith('actions/setup-node@')) continue;
    if (step.uses?.startsWith('actions/upload-artifact@')) {
      assert.equal(step.with?.['include-hidden-files'], true, 'the artifact keeps .jp/ (a hidden directory)');
      for (const entry of String(step.with?.path)
        .split('\n')
        .filter((line) => line.trim() !== ''))
        assert.ok(existsSync(path.join(machine.workspace, entry.trim())), `artifact path ${entry} exists`);
      continue;
    }
    assert.ok(step.run, `a step this test knows how to run: ${JSON.stringify(step)}`);
    const result = await bash(step.run, machine.workspace, env);
    results.push({ step: name, ...result });
    if (result.code !== 0) failed = true;
  }
  return { steps: results, summary: readFileSync(summary, 'utf8') };
}

function reviewProvider(firstCall: { name: string; arguments: unknown }): Promise<FakeProvider> {
  return startFakeProvider({
    wire: 'openai-chat',
    steps: stepByToolResults([toolStep([firstCall]), textStep(answer)]),
  });
}

function conversationLogs(workspace: string): string[] {
  const directory = path.join(workspace, '.jp', 'conversations');
  return readdirSync(directory)
    .filter((name) => name.startsWith('jp-c'))
    .map((name) => path.join(directory, name, 'events.ndjson'));
}

describe('examples/ci/github-actions.yml', () => {
  it('installs jp, runs the review inside the read-only sandbox, keeps the conversation, writes the job summary', async () => {
    const provider = await reviewProvider({
      name: 'run_command',
      arguments: { command: 'git diff origin/main...HEAD' },
    });
    after(() => provider.close());
    const machine = runnerMachine();
    const { steps, summary } = await runGithubJob(machine, provider);
    for (const step of steps) assert.equal(step.code, 0, `${step.step}:\n${step.output}`);
    assert.deepEqual(
      steps.map((step) => step.step),
      ['Install jp and its command sandbox', 'Ask jp', 'Job summary'],
    );

    const result = JSON.parse(
      readFileSync(path.join(machine.workspace, 'jp-result.ndjson'), 'utf8').trim().split('\n').pop()!,
    );
    assert.equal(result.status, 'success');
    assert.equal(result.tools[0].status, 'ok');
    assert.match(result.tools[0].result, /\+added on the branch/, 'the command ran and saw the branch');
    const logs = conversationLogs(machine.workspace);
    assert.equal(logs.length, 1, 'one conversation, kept for the artifact');
    const call = readFileSync(logs[0]!, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
      .find((event) => event.type === 'tool_call_request');
    assert.match(call.sandbox, /^read-only, no network/);

    assert.equal(
      summary,
      `### jp: success (exit 0)\n\n${answer}\n\n\n<sub>conversation \`${result.conversation_id}\` · openai/gpt-4.1-mini · ${result.metadata.usage.total_tokens} tokens</sub>\n`,
    );
  });

  it('a call the policy refuses fails the step; the summary says what was refused and the conversation is still kept', async () => {
    const provider = await reviewProvider({ name: 'fs_create_file', arguments: { path: 'x.txt', content: 'x' } });
    after(() => provider.close());
    const machine = runnerMachine();
    const { steps, summary } = await runGithubJob(machine, provider);
    const ask = steps.find((step) => step.step === 'Ask jp')!;
    assert.equal(ask.code, 3, ask.output);
    assert.equal(steps.find((step) => step.step === 'Job summary')?.code, 0, 'the summary runs after a failure');
    assert.match(summary, /^### jp: denied \(exit 3\)/);
    assert.match(
      summary,
      /- refused, nobody to ask: `fs_create_file`: .*conversation\.tools\.fs_create_file\.detached/,
    );
    assert.equal(existsSync(path.join(machine.workspace, 'x.txt')), false);
    assert.equal(conversationLogs(machine.workspace).length, 1);
  });
});

describe('examples/ci/gitlab-ci.yml', () => {
  it('before_script, script and after_script as a runner runs them: the review, its summary and the artifacts', async () => {
    const provider = await reviewProvider({
      name: 'run_command',
      arguments: { command: 'git diff origin/main...HEAD' },
    });
    after(() => provider.close());
    const machine = runnerMachine();
    const job = parse(readFileSync(path.join(repositoryRoot, 'examples', 'ci', 'gitlab-ci.yml'), 'utf8'))[
      'jp-review'
    ] as {
      variables: Record<string, unknown>;
      before_script: string[];
      script: string[];
      after_script: string[];
      artifacts: { when: string; paths: string[] };
    };
    const env: NodeJS.ProcessEnv = {
      ...runnerEnvironment(machine),
      GITLAB_CI: 'true',
      CI_DEFAULT_BRANCH: 'main',
      // A masked CI/CD variable.
      OPENAI_API_KEY: 'sk-test-key-000000000000000000',
      ...Object.fromEntries(Object.entries(job.variables).map(([name, value]) => [name, String(value)])),
      JP_PACKAGE: repositoryRoot,
      ...providerEnvironment(provider),
    };
    const main = await bash([...job.before_script, ...job.script].join('\n'), machine.workspace, env);
    assert.equal(main.code, 0, main.output);
    const afterScript = await bash(job.after_script.join('\n'), machine.workspace, env);
    assert.equal(afterScript.code, 0, afterScript.output);

    assert.equal(job.artifacts.when, 'always');
    for (const entry of job.artifacts.paths) assert.ok(existsSync(path.join(machine.workspace, entry)), entry);
    const result = JSON.parse(
      readFileSync(path.join(machine.workspace, 'jp-result.ndjson'), 'utf8').trim().split('\n').pop()!,
    );
    assert.equal(result.status, 'success');
    assert.match(result.tools[0].result, /\+added on the branch/);
    const summary = readFileSync(path.join(machine.workspace, 'jp-summary.md'), 'utf8');
    assert.match(summary, /^### jp: success \(exit 0\)\n\n## Review\n/);
    assert.match(summary, new RegExp(`conversation \`${result.conversation_id}\``));
  });
});
