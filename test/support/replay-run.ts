/**
 * Runs the built jp against recorded provider streams (replay-provider.ts) and collects what a
 * script would read: the exit code, stdout and stderr, the JSON result (json mode), the log.
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { conversationIds, readEvents, runJp, type Sandbox } from './jp.ts';
import {
  loadRecording,
  recordedModel,
  replayModelArguments,
  startReplayProvider,
  type ReplayKind,
  type ReplayProvider,
  type Reply,
} from './replay-provider.ts';
import { createAjv, schemaProblem } from './schemas.ts';

/**
 * The user's own config (always trusted): every tool a recording calls exists as a local command
 * tool that prints what it got, and runs without a human (`detached.run = "auto"`).
 */
export const recordedTools: Record<string, string[]> = {
  run_me: ['foo', 'bar'],
  weather: ['location'],
  calculator: ['a', 'b', 'op'],
  search_items: ['query'],
  list_items: ['category'],
  updateIssueList: [],
  json: ['elements'],
  read_file: ['path'],
};

export function writeUserConfig(sandbox: Sandbox, extra = ''): void {
  const lines = ['[conversation.tools.defaults]', 'detached = { run = "auto" }', ''];
  for (const [name, parameters] of Object.entries(recordedTools)) {
    lines.push(
      `[conversation.tools.${name}]`,
      `command = "echo ran ${name}: $JP_TOOL_ARGUMENTS"`,
      'side_effects = false',
    );
    for (const parameter of parameters)
      lines.push(
        `parameters.${parameter} = { type = "${parameter === 'elements' ? 'array' : parameter === 'a' || parameter === 'b' ? 'number' : 'string'}" }`,
      );
    lines.push('');
  }
  const file = path.join(sandbox.env.XDG_CONFIG_HOME!, 'jp', 'config.toml');
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, lines.join('\n') + extra);
}

export interface ReplayRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The result line (json mode). */
  result: Record<string, any> | undefined;
  events: Record<string, any>[];
  provider: ReplayProvider;
}

export interface ReplayRunOptions {
  kind: ReplayKind;
  /** The replies in request order; strings are fixture paths played whole. */
  replies: (string | Reply)[] | Reply[];
  mode?: 'json' | 'text';
  writes?: 'whole' | 'event' | 'byte';
  /** More jp arguments (before the message). */
  args?: string[];
  message?: string;
  env?: NodeJS.ProcessEnv;
  /** The model jp asks for; by default the one the first reply says answered (recordedModel). */
  model?: string;
}

/** Expands fixture names: a fixture with several recorded exchanges gives one reply per exchange. */
export function repliesOf(replies: (string | Reply)[]): Reply[] {
  return replies.flatMap((reply) =>
    typeof reply === 'string' ? loadRecording(reply).map((recording) => ({ recording })) : [reply],
  );
}

export async function replayRun(
  sandbox: Sandbox,
  options: ReplayRunOptions,
  provider?: ReplayProvider,
): Promise<ReplayRun> {
  const server =
    provider ?? (await startReplayProvider({ replies: repliesOf(options.replies), writes: options.writes ?? 'event' }));
  try {
    const replies = repliesOf(options.replies.slice(0, 1));
    const model = replayModelArguments(
      options.kind,
      server.baseUrl,
      options.model ?? (replies[0] && recordedModel(replies[0].recording)) ?? 'recorded-model',
    );
    const mode = options.mode ?? 'json';
    const args = [
      'query',
      '--new',
      ...(mode === 'json' ? ['--json'] : []),
      ...model.args,
      '-c',
      'assistant.request.backoff_base_ms=5',
      '-c',
      'assistant.request.backoff_max_ms=20',
      ...(options.args ?? []),
      options.message ?? 'hello',
    ];
    const run = await runJp(sandbox, args, { env: { ...model.env, ...options.env } });
    const lines = run.stdout.trim().split('\n');
    const result = mode === 'json' ? (JSON.parse(lines[lines.length - 1]!) as Record<string, any>) : undefined;
    const ids = conversationIds(sandbox);
    return {
      code: run.code,
      stdout: run.stdout,
      stderr: run.stderr,
      result,
      events: ids.length > 0 ? readEvents(sandbox, ids[ids.length - 1]!) : [],
      provider: server,
    };
  } finally {
    if (!provider) await server.close();
  }
}

const ajv = createAjv();
/** The exit code of each result status (DESIGN §2). */
export const exitCodes: Record<string, number> = {
  success: 0,
  error: 1,
  usage: 2,
  denied: 3,
  deferred: 4,
  locked: 5,
  retryable: 6,
};

/**
 * Checks a JSON-mode run against its contracts and returns its result: the last stdout line is the
 * result, the exit code is its `exit_code` and that of its status, every stdout and stderr line and
 * every logged event matches the shipped schemas.
 */
export function checkJson(run: ReplayRun): Record<string, any> {
  const result = run.result!;
  assert.equal(result.type, 'result');
  assert.equal(run.code, result.exit_code, run.stderr);
  assert.equal(result.exit_code, exitCodes[result.status]);
  assert.equal(schemaProblem(ajv, 'result.schema.json', result), undefined);
  for (const line of run.stdout.trim().split('\n'))
    assert.equal(schemaProblem(ajv, 'output-line.schema.json', JSON.parse(line)), undefined, line);
  for (const line of run.stderr.split('\n').filter(Boolean))
    assert.equal(schemaProblem(ajv, 'output-line.schema.json', JSON.parse(line)), undefined, line);
  for (const event of run.events)
    assert.equal(schemaProblem(ajv, 'event.schema.json', event), undefined, JSON.stringify(event));
  return result;
}

/** The NDJSON lines a JSON-mode run wrote to stderr. */
export function stderrLines(run: ReplayRun): Record<string, any>[] {
  return run.stderr
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, any>);
}
