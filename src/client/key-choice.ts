/**
 * The one-key prompt over a payload that permissions, escalations, deliveries and the trust
 * question use: the payload's first lines that fit the screen (diff lines coloured), the question
 * with what Enter and Esc do, and a legend of the keys. A key that approves what was not seen is
 * refused until the whole payload was shown; any other key says which keys there are.
 */
import type { TerminalStreams } from '../output/channels.ts';
import { resetAttributes, visible } from '../output/sanitize.ts';
import { fitPayload, wrapPayload, type PayloadLine } from './permission-view.ts';
import type { PromptContext } from './prompt-context.ts';
import type { PromptStyle } from './prompt-theme.ts';
import { listed, together, wrapWords } from './word-wrap.ts';

type Key = { name: string; ctrl: boolean; shift?: boolean; sequence?: string };

/** What a prompt closed by Ctrl+C was answered with (never a key of a choice). */
const interruptedKey = '\u0003';

/** How a payload line is drawn: diff lines in the palette's addition, deletion and hunk colours. */
function paintLine(line: PayloadLine, style: PromptStyle): string {
  const text = `  ${line.text}`;
  switch (line.kind) {
    case 'removed':
      return style.paint('error', text);
    case 'added':
      return style.paint('string', text);
    case 'hunk':
      return style.paint('name', text);
    case 'note':
      return style.paint('muted', text);
    default:
      return text;
  }
}

/** One key of a choice prompt: the key, what it does, and whether it needs the payload seen whole. */
interface ChoiceKey {
  key: string;
  meaning: string;
  /** Refused while part of the payload is not shown (approving what was not seen). */
  needsAll?: boolean;
}

export interface Choice {
  /** The call, e.g. `⚙ fs_modify_file notes.txt`. */
  title: string;
  /** The payload, as lines to wrap and show. */
  payload: PayloadLine[];
  /** The question, e.g. `Run fs_modify_file?`. */
  question: string;
  keys: ChoiceKey[];
  /** Enter. */
  enter: string;
  /** Esc. */
  escape: string;
}

/**
 * A one-key prompt over a payload (a permission or a delivery; an escalation may use it too):
 * the title, the payload's first lines that fit the screen (with `+N more lines — press p to
 * see all` when some do not), the question with what Enter and Esc do, and the legend under
 * it. Keys marked `needsAll` are refused until the whole payload was seen; `p` prints all of
 * it, then the prompt is drawn again. Returns the key (never `p`).
 */
export async function keyChoice(
  choice: Choice,
  context: () => PromptContext,
  terminal: TerminalStreams,
  style: PromptStyle,
  print: (text: string) => void,
): Promise<string> {
  const core = await import('@inquirer/core');
  const columns = Math.max(20, (terminal.output.columns || 80) - 1);
  const rows = terminal.output.rows || 24;
  const wrapped = wrapPayload(choice.payload, columns - 2);
  let seenAll = false;
  // jp's own lines of the prompt wrap at spaces, each key with what it does kept on one row.
  const rowsOf = (text: string, continuation = '  '): string => wrapWords(text, columns, continuation).join('\n');
  const title = rowsOf(style.paint('name', choice.title));
  for (;;) {
    const meaning = (key: string): string => choice.keys.find((candidate) => candidate.key === key)?.meaning ?? '';
    const keysOf = (blocked: boolean): ChoiceKey[] => choice.keys.filter((key) => !(blocked && key.needsAll));
    const legendOf = (keys: ChoiceKey[]): string =>
      rowsOf(`  ${listed(keys.map(({ key, meaning: text }) => `${key} ${text}`))}`);
    // The payload gets the rows the rest of the prompt leaves (a complaint about a key takes two).
    const chrome = [title, legendOf(keysOf(true)), choice.question].join('\n').split('\n').length + 4;
    const { shown, hidden } = seenAll
      ? { shown: [] as PayloadLine[], hidden: 0 }
      : fitPayload(wrapped, Math.max(3, rows - chrome));
    const blocked = hidden > 0;
    const offered = keysOf(blocked);
    const enter = blocked && choice.keys.find((key) => key.key === choice.enter)?.needsAll ? 'p' : choice.enter;
    const head = [
      ...(seenAll ? [] : [title]),
      ...shown.map((line) => paintLine(line, style)),
      ...(blocked
        ? [rowsOf(style.bold(`  … +${hidden} more line${hidden === 1 ? '' : 's'} — press p to see all`))]
        : []),
    ];
    const legend = legendOf(offered);
    const hint = listed([`Enter: ${enter} ${meaning(enter)}`, `Esc: ${choice.escape} ${meaning(choice.escape)}`]);
    const prompt = core.createPrompt<string, { message: string }>((config, done) => {
      const [status, setStatus] = core.useState<'idle' | 'done'>('idle');
      const [chosen, setChosen] = core.useState('');
      const [problem, setProblem] = core.useState('');
      core.useKeypress((event) => {
        const key = event as Key;
        // Ctrl+C is the interrupt (the prompt ends with it, and the menu opens): the prompt closes
        // to a line that says so, not to a complaint about the key.
        if (key.ctrl && key.name === 'c') {
          setStatus('done');
          setChosen(interruptedKey);
          return;
        }
        let pressed =
          key.sequence && key.sequence.length === 1 && key.sequence >= ' '
            ? key.sequence
            : key.shift
              ? key.name.toUpperCase()
              : key.name;
        if (key.name === 'return' || key.name === 'enter') pressed = enter;
        else if (key.name === 'escape') pressed = choice.escape;
        if (offered.some((candidate) => candidate.key === pressed)) {
          setStatus('done');
          setChosen(pressed);
          done(pressed);
          return;
        }
        const label =
          key.sequence && key.sequence >= ' '
            ? JSON.stringify(visible(key.sequence, { singleLine: true }))
            : key.name || 'that key';
        const keyNames = [
          ...offered.map((candidate) => candidate.key),
          together(`Enter (${enter})`),
          together(`Esc (${choice.escape})`),
        ];
        setProblem(
          choice.keys.some((candidate) => candidate.key === pressed)
            ? `  ${pressed} needs all of it seen first: press p to see all`
            : `  ${label} does nothing here; the keys are: ${keyNames.join(', ')}`,
        );
      });
      const keysShown = `[${offered.map(({ key }) => key).join('/')}]`;
      // After `p` the prompt closes to its title: the whole payload follows it, then the prompt again.
      if (status === 'done' && chosen === 'p' && !seenAll) return head[0]!;
      if (status === 'done' && chosen === interruptedKey)
        return [...head, rowsOf(`${config.message} Ctrl+C (interrupted)`)].join('\n');
      if (status === 'done') return [...head, rowsOf(`${config.message} ${chosen} (${meaning(chosen)})`)].join('\n');
      const bottom = problem ? `${rowsOf(style.paint('warning', problem), '    ')}\n${legend}` : legend;
      return [[...head, rowsOf(`${config.message} ${keysShown} ${style.paint('muted', hint)}`)].join('\n'), bottom];
    });
    const answer = await prompt({ message: style.bold(choice.question) }, context());
    if (answer !== 'p') return answer;
    // The whole payload, once, as plain lines in the scrollback; then the prompt again.
    print(`${resetAttributes}${wrapped.map((line) => paintLine(line, style)).join('\n')}\n`);
    seenAll = true;
  }
}
