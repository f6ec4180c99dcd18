/**
 * The non-interactive matrix through the built binary against a local provider server:
 * contexts × inquiries × detached policies. Each cell checks the action taken (from the log), the
 * file effect, the exit code and the result entries. No cell may wait: every run ends on its own
 * (a safety timeout fails the cell as "hung").
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  startFakeProvider,
  stepByToolResults,
  textStep,
  toolStep,
  type FakeProvider,
  type RecordedRequest,
  type ScriptedStep,
} from '../support/fake-provider.ts';
import {
  conversationIds,
  createSandbox,
  fakeModelArguments,
  jpBinary,
  readEvents,
  runJp,
  type Sandbox,
} from '../support/jp.ts';
import { runInTerminal, shellQuote } from '../support/pty.ts';

type InquiryName = 'run' | 'deliver' | 'question' | 'exclusive-question' | 'question-with-default';
type Policy = 'auto' | 'defaults' | 'deny';
type Context =
  | 'terminal'
  | 'terminal-stdout-piped'
  | 'terminal-non-interactive'
  | 'JP_NON_INTERACTIVE'
  | 'setsid-no-terminal'
  | 'CI';

const inquiryNames: InquiryName[] = ['run', 'deliver', 'question', 'exclusive-question', 'question-with-default'];
const policies: Policy[] = ['auto', 'defaults', 'deny'];
const contexts: Context[] = [
  'terminal',
  'terminal-stdout-piped',
  'terminal-non-interactive',
  'JP_NON_INTERACTIVE',
  'setsid-no-terminal',
  'CI',
];
const hasHuman = (context: Context): boolean => context === 'terminal' || context === 'terminal-stdout-piped';

const toolCallFor: Record<InquiryName, { name: string; arguments: unknown }> = {
  run: { name: 'fs_create_file', arguments: { path: 'created.txt', content: 'made' } },
  deliver: { name: 'fs_read_file', arguments: { path: 'secret.txt' } },
  question: { name: 'ask_user', arguments: { question: 'Which color?', options: ['red', 'blue'] } },
  'exclusive-question': {
    name: 'ask_user',
    arguments: { question: 'Which color?', options: ['red', 'blue'], exclusive: true },
  },
  'question-with-default': {
    name: 'ask_user',
    arguments: { question: 'Which color?', options: ['red', 'blue'], default: 'blue' },
  },
};

interface Expected {
  /** route()'s action, or PromptClient answered by the test's keys. */
  action: 'PromptClient' | 'AutoApprove' | 'AutoDeliver' | 'LlmInquiry' | 'UseDefault' | 'Fail';
  exitCode: number;
  denials: number;
  unanswered: number;
  /** For run: whether created.txt exists afterwards. */
  fileCreated?: boolean;
}

function expected(inquiry: InquiryName, policy: Policy, context: Context): Expected {
  if (hasHuman(context))
    return {
      action: 'PromptClient',
      exitCode: 0,
      denials: 0,
      unanswered: 0,
      ...(inquiry === 'run' ? { fileCreated: true } : {}),
    };
  const fail = (kind: 'denial' | 'unanswered'): Expected => ({
    action: 'Fail',
    exitCode: 3,
    denials: kind === 'denial' ? 1 : 0,
    unanswered: kind === 'unanswered' ? 1 : 0,
    ...(inquiry === 'run' ? { fileCreated: false } : {}),
  });
  const ok = (action: Expected['action']): Expected => ({
    action,
    exitCode: 0,
    denials: 0,
    unanswered: 0,
    ...(inquiry === 'run' ? { fileCreated: true } : {}),
  });
  switch (inquiry) {
    case 'run':
      return policy === 'auto' ? ok('AutoApprove') : fail('denial');
    case 'deliver':
      return policy === 'auto' ? ok('AutoDeliver') : fail('denial');
    case 'question':
      return policy === 'auto' ? ok('LlmInquiry') : fail('unanswered');
    case 'exclusive-question':
      return fail('unanswered');
    case 'question-with-default':
      return policy === 'auto' ? ok('LlmInquiry') : policy === 'defaults' ? ok('UseDefault') : fail('unanswered');
  }
}

/** What the human presses at each prompt. */
const keysFor: Record<InquiryName, { prompt: string; keys: string }> = {
  run: { prompt: 'Run fs_create_file?', keys: 'y' },
  deliver: { prompt: 'Send the result of fs_read_file', keys: 'y' },
  question: { prompt: 'ask_user asks: Which color?', keys: '\r' },
  'exclusive-question': { prompt: 'ask_user asks: Which color?', keys: '\r' },
  'question-with-default': { prompt: 'ask_user asks: Which color?', keys: '\r' },
};

describe('non-interactive matrix', { concurrency: 4 }, () => {
  let provider: FakeProvider;
  const sandboxes: Sandbox[] = [];
  before(async () => {
    provider = await startFakeProvider({
      wire: 'openai-chat',
      steps: (request: RecordedRequest): ScriptedStep => {
        if (request.wantsJson) return textStep('{"answer":"red"}');
        const message = request.messages.find((entry) => entry.role === 'user')?.text ?? '';
        const name = inquiryNames.find((candidate) => message.endsWith(`inquiry:${candidate}`)) ?? 'run';
        return stepByToolResults([toolStep([toolCallFor[name]]), textStep('Finished.')])(request);
      },
    });
  });
  after(async () => {
    await provider.close();
    for (const sandbox of sandboxes) sandbox.cleanup();
  });

  for (const context of contexts) {
    for (const inquiry of inquiryNames) {
      for (const policy of policies) {
        const want = expected(inquiry, policy, context);
        it(`${context} × ${inquiry} × ${policy} → ${want.action}, exit ${want.exitCode}`, async () => {
          const sandbox = createSandbox();
          sandboxes.push(sandbox);
          sandbox.write('secret.txt', 'the secret contents');
          const model = fakeModelArguments('openai-chat', provider.baseUrl);
          const args = [
            'query',
            ...model.args,
            '-c',
            `conversation.tools.defaults.detached="${policy}"`,
            '-c',
            'conversation.tools.fs_read_file.result="ask"',
            `inquiry:${inquiry}`,
          ];
          let exitCode: number | null;
          let result: Record<string, any> | undefined;
          if (context === 'setsid-no-terminal') {
            const run = await runJp(sandbox, ['--json', ...args], { stdin: 'null', env: model.env });
            exitCode = run.code;
            result = JSON.parse(run.stdout.trim().split('\n').pop()!);
          } else {
            const prefix =
              context === 'JP_NON_INTERACTIVE' ? 'JP_NON_INTERACTIVE=1 ' : context === 'CI' ? 'CI=true ' : '';
            const extra = context === 'terminal-non-interactive' ? ['--non-interactive'] : [];
            const json = context === 'terminal' ? [] : ['--json'];
            const jp = `${prefix}node ${shellQuote(jpBinary)} ${[...json, ...args.slice(0, 1), ...extra, ...args.slice(1)].map(shellQuote).join(' ')}`;
            const commandLine =
              context === 'terminal' ? `${jp}; echo $? > code.txt` : `(${jp}; echo $? > code.txt) | cat > out.txt`;
            const terminal = runInTerminal(sandbox, commandLine, { env: model.env });
            if (hasHuman(context)) {
              await terminal.waitFor(keysFor[inquiry].prompt);
              terminal.write(keysFor[inquiry].keys);
            }
            await terminal.exited;
            exitCode = Number(readFileSync(path.join(sandbox.workspace, 'code.txt'), 'utf8').trim());
            if (context !== 'terminal') result = JSON.parse(sandbox.read('out.txt').trim().split('\n').pop()!);
          }

          assert.equal(exitCode, want.exitCode, 'exit code');
          const events = readEvents(sandbox, conversationIds(sandbox)[0]!);
          const responses = events.filter((event) => event.type === 'inquiry_response');
          assert.equal(responses.length, 1, 'one inquiry, settled once');
          const response = responses[0]!;
          if (want.action === 'PromptClient') assert.equal(response.by, 'user');
          else if (want.action === 'LlmInquiry') {
            assert.equal(response.by, 'assistant');
            assert.equal(response.action, 'LlmInquiry');
          } else {
            assert.equal(response.by, 'policy');
            assert.equal(response.action, want.action);
            if (want.action === 'Fail') assert.match(response.reason, /no user is available/);
          }
          if (want.fileCreated !== undefined)
            assert.equal(existsSync(path.join(sandbox.workspace, 'created.txt')), want.fileCreated, 'file effect');
          if (result) {
            assert.equal(result.type, 'result');
            assert.equal(result.exit_code, want.exitCode);
            assert.equal(result.permission_denials.length, want.denials, 'permission_denials');
            assert.equal(result.unanswered.length, want.unanswered, 'unanswered');
          }
          // The model always hears, in plain words, what happened.
          const toolResponse = events.find((event) => event.type === 'tool_call_response')!;
          if (want.action === 'Fail') assert.match(toolResponse.content, /no user is available/);
          if (want.action === 'UseDefault') assert.match(toolResponse.content, /default answer was used: blue/);
          if (want.action === 'LlmInquiry')
            assert.match(toolResponse.content, /assistant answered on the user's behalf: red/);
        });
      }
    }
  }
});
