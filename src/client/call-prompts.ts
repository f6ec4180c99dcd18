/**
 * The prompts that settle a tool call's inquiries at a terminal, each a one-key prompt over what
 * the call does (key-choice.ts, permission-view.ts) drawn in a session of the prompter (prompts.ts):
 * permission to run it, leaving the sandbox, sending its result. They return typed answers
 * (inquiry/answer.ts).
 */
import { closeSync, constants, fstatSync, openSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { AnswerOf } from '../inquiry/answer.ts';
import { describeRule, rulesFor } from '../approvals/rules.ts';
import type { ApprovalRule } from '../inquiry/approval-rule.ts';
import type { InquiryOf, JsonValue } from '../inquiry/types.ts';
import type { TerminalStreams } from '../output/channels.ts';
import { visible } from '../output/sanitize.ts';
import { EditorFailed } from './editor.ts';
import { keyChoice, type Choice } from './key-choice.ts';
import { describeCall } from './permission-view.ts';
import type { PromptContext } from './prompt-context.ts';
import type { PromptStyle } from './prompt-theme.ts';

/** What a call's prompt draws with, in its session. */
export interface CallDrawing {
  /** Each prompt's context (a finished prompt ends its output). */
  context: () => PromptContext;
  terminal: TerminalStreams;
  style: PromptStyle;
  /** jp's own text to the terminal (plain on a dumb terminal). */
  print(text: string): void;
  /** Opens the editor at once on `text`, saying what is edited; jp stops reading the terminal meanwhile. */
  edit(what: string, text: string, extension: string): Promise<string>;
  /** Where relative paths of file tools start, for previews (the diff of fs_modify_file). */
  workspaceRoot: string | undefined;
}

/** A one-key prompt over a payload (key-choice.ts), in the theme's colours. */
export function keyChoiceIn(
  choice: Choice,
  drawing: Pick<CallDrawing, 'context' | 'terminal' | 'style' | 'print'>,
): Promise<string> {
  return keyChoice(choice, drawing.context, drawing.terminal, drawing.style, drawing.print);
}

/** Reads a file for a preview: a regular file of at most 1 MiB, never blocking on a FIFO or device. */
function readForPreview(root: string | undefined, requested: string): string | undefined {
  if (root === undefined) return undefined;
  let fd: number | undefined;
  try {
    fd = openSync(path.resolve(root, requested), constants.O_RDONLY | constants.O_NONBLOCK);
    const stat = fstatSync(fd);
    if (!stat.isFile() || stat.size > 1024 * 1024) return undefined;
    return readFileSync(fd, 'utf8');
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * y run · Y run and remember for this turn · n skip · N skip and remember · p show all of it ·
 * e edit. The call is shown as it will run (a diff, the content, the command); with `run = "edit"`
 * the editor opens at once.
 */
export async function askPermission(
  inquiry: InquiryOf<'run_tool'>,
  drawing: CallDrawing,
  sandbox?: string,
): Promise<AnswerOf<'run_tool'>> {
  const argumentsText = JSON.stringify(inquiry.arguments, null, 2) ?? 'null';
  const view = describeCall(inquiry.tool, inquiry.arguments, (file) => readForPreview(drawing.workspaceRoot, file));
  const sandboxNote =
    sandbox === undefined ? '' : ` [sandbox: ${visible(sandbox, { singleLine: true, invisible: true })}]`;
  for (;;) {
    const choice = inquiry.edit
      ? 'e'
      : await keyChoiceIn(
          {
            title: `⚙ ${view.title}${sandboxNote}`,
            payload: view.lines,
            question: `Run ${visible(inquiry.tool, { singleLine: true, invisible: true })}?`,
            keys: [
              { key: 'y', meaning: 'run', needsAll: true },
              { key: 'Y', meaning: 'run, and for the rest of this turn', needsAll: true },
              { key: 'a', meaning: 'always in this workspace…', needsAll: true },
              { key: 'n', meaning: 'skip' },
              { key: 'N', meaning: 'skip, and for the rest of this turn' },
              { key: 'p', meaning: 'show all of it' },
              { key: 'e', meaning: 'edit' },
            ],
            enter: 'y',
            escape: 'n',
          },
          drawing,
        );
    switch (choice) {
      case 'y':
        return { decision: 'approve', scope: 'once' };
      case 'Y':
        return { decision: 'approve', scope: 'turn' };
      case 'a': {
        const rule = await chooseRule(inquiry, drawing);
        if (rule) return { decision: 'approve_always', rule };
        continue;
      }
      case 'n':
        return { decision: 'deny', scope: 'once' };
      case 'N':
        return { decision: 'deny', scope: 'turn' };
      default:
        return {
          decision: 'edit',
          arguments: await editJson(`the arguments of ${inquiry.tool}`, argumentsText, drawing),
        };
    }
  }
}

/**
 * "Always in this workspace": which calls from now on run without asking, narrowest first (this
 * command, a prefix of its words, writes under a directory, every call of the tool); undefined
 * when the person goes back to the question.
 */
async function chooseRule(inquiry: InquiryOf<'run_tool'>, drawing: CallDrawing): Promise<ApprovalRule | undefined> {
  const prompts = await import('@inquirer/prompts');
  const back = 'back';
  const rules = rulesFor(inquiry.tool, inquiry.arguments);
  const chosen = await prompts.select<number | typeof back>(
    {
      message: 'Run without asking, from now on in this workspace (jp approvals revokes it):',
      theme: drawing.style.inquirer,
      choices: [
        ...rules.map((rule, index) => ({
          name: visible(describeRule(rule), { singleLine: true, invisible: true }),
          value: index,
        })),
        { name: 'no: back to the question', value: back },
      ],
    },
    drawing.context(),
  );
  return chosen === back ? undefined : rules[chosen];
}

/**
 * y run it outside the sandbox · n keep it in (it is not run) · p show all of it. The call is
 * shown as a permission prompt shows it, with why it asks to leave the sandbox. A file tool's
 * write inside `.git/` (needs `git`) is asked the same way, saying what git would run from there.
 */
export async function askEscalation(
  inquiry: InquiryOf<'escalate'>,
  drawing: CallDrawing,
): Promise<AnswerOf<'escalate'>> {
  const gitWrite = inquiry.needs === 'git';
  const needs = {
    network: ' (it needs the network)',
    write: ' (it needs to write outside the workspace)',
    unconfined: '',
    git: '',
  }[inquiry.needs];
  const view = describeCall(inquiry.tool, inquiry.arguments, (file) => readForPreview(drawing.workspaceRoot, file));
  const why = inquiry.justification.split('\n');
  const choice = await keyChoiceIn(
    {
      title: `⚙ ${view.title}`,
      payload: [
        ...view.lines,
        ...why.map((line, index) => ({
          kind: 'note' as const,
          text: `${index === 0 ? 'Why: ' : '     '}${visible(line, { singleLine: true, invisible: true })}`,
        })),
      ],
      question: gitWrite
        ? `Let ${visible(inquiry.tool, { singleLine: true, invisible: true })} write inside .git/, where git runs ` +
          `programs from?`
        : `Run ${visible(inquiry.tool, { singleLine: true, invisible: true })} outside the sandbox${needs}?`,
      keys: [
        { key: 'y', meaning: gitWrite ? 'write it' : 'run it outside the sandbox', needsAll: true },
        { key: 'n', meaning: gitWrite ? 'do not write it' : 'do not run it' },
        { key: 'p', meaning: 'show all of it' },
      ],
      enter: 'n',
      escape: 'n',
    },
    drawing,
  );
  return { decision: choice === 'y' ? 'approve' : 'deny', scope: 'once' };
}

export async function askDelivery(
  inquiry: InquiryOf<'deliver_tool_result'>,
  drawing: CallDrawing,
): Promise<AnswerOf<'deliver_tool_result'>> {
  const tool = visible(inquiry.tool, { singleLine: true, invisible: true });
  const choice = inquiry.edit
    ? 'e'
    : await keyChoiceIn(
        {
          title: `⚙ ${tool} result${inquiry.is_error ? ' (an error)' : ''}`,
          payload: inquiry.result
            .split('\n')
            .map((line) => ({ kind: 'plain' as const, text: visible(line, { singleLine: true, invisible: true }) })),
          question: `Send the result of ${tool} to the assistant?`,
          keys: [
            { key: 'y', meaning: 'send it' },
            { key: 'n', meaning: 'withhold it' },
            { key: 'p', meaning: 'show all of it' },
            { key: 'e', meaning: 'edit it first' },
          ],
          enter: 'y',
          escape: 'n',
        },
        drawing,
      );
  if (choice === 'y') return { decision: 'deliver' };
  if (choice === 'n') return { decision: 'deny', scope: 'once' };
  return {
    decision: 'edit',
    result: await drawing.edit(`the result of ${inquiry.tool}`, inquiry.result, '.txt'),
  };
}

/** Edits JSON until it parses (an empty file keeps the original); says what was wrong each time. */
async function editJson(what: string, initial: string, drawing: CallDrawing): Promise<JsonValue> {
  let text = initial;
  for (;;) {
    let edited: string;
    try {
      edited = await drawing.edit(what, text, '.json');
    } catch (error) {
      if (!(error instanceof EditorFailed)) throw error;
      drawing.print(`${error.message}\n`);
      return JSON.parse(initial);
    }
    if (edited.trim() === '') return JSON.parse(initial);
    try {
      return JSON.parse(edited);
    } catch (error) {
      drawing.print(
        `not valid JSON: ${(error as Error).message}; opening the editor again (empty the file to keep the original)\n`,
      );
      text = edited;
    }
  }
}
