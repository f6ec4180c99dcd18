/**
 * Streaming at a terminal, on the rendered screen (DESIGN §13): lines are committed, never
 * rewritten, so answers taller than the screen appear exactly once in the scrollback; text is
 * word-wrapped at the terminal's width (no row is wider than the terminal, no word is cut), also in
 * narrow terminals and across a resize mid-stream; NO_COLOR means no style at all and FORCE_COLOR
 * forces it; replays separate turns.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runJp, testProvider, useCleanup } from '../support/jp.ts';
import { type Screen, jpScreens } from '../support/screen.ts';

const cleanup = useCleanup();

const jp = jpScreens(cleanup);

/**
 * Streams `text` in pieces of `size` characters, as a model does; with `pauseEvery`, a 1 ms pause
 * after every `pauseEvery` pieces, so that the text reaches jp in many pieces (without pauses the
 * whole answer may reach it at once, and the rendering of an unfinished line is never exercised).
 */
function streamed(text: string, size: number, pauseEvery = 0): unknown[] {
  const parts: unknown[] = [];
  for (let index = 0, piece = 1; index < text.length; index += size, piece++) {
    parts.push({ text: text.slice(index, index + size) });
    if (pauseEvery > 0 && piece % pauseEvery === 0) parts.push({ delay_ms: 1 });
  }
  return parts;
}

/**
 * The blocks of text on the screen: runs of non-empty lines joined with one space (each line
 * trimmed; jp's own `jp: …` lines left out), so a word-wrapped paragraph reads as the line it was written as.
 */
function blocks(lines: readonly string[]): string[] {
  const joined: string[] = [];
  let current: string[] = [];
  // jp's own notices (`jp: …`, wrapped at spaces with their rows after the first indented) are not the answer.
  const answer: string[] = [];
  let inNotice = false;
  for (const line of lines) {
    inNotice = line.startsWith('jp: ') || (inNotice && line.startsWith('  '));
    if (!inNotice) answer.push(line);
  }
  for (const line of [...answer, '']) {
    if (line.trim() === '') {
      if (current.length > 0) joined.push(current.join(' '));
      current = [];
    } else current.push(line.trim());
  }
  return joined;
}

/** Lines of the answer wider than the terminal (the terminal wrapped them: jp did not). */
function overWide(screen: Screen): string[] {
  return screen.lines().filter((line) => line.length > screen.columns && !line.startsWith('jp: '));
}

const codeLines = Array.from({ length: 60 }, (_, index) => `const value${index} = compute(${index}); // line ${index}`);
const paragraphWords = Array.from({ length: 3000 }, (_, index) => `w${index}`);

describe('answers taller than the screen', () => {
  it('at 100×30, a 60-line code block and a 3,000-word paragraph, streamed in many pieces, each appear exactly once in the scrollback, in order', async () => {
    const sandbox = cleanup.sandbox();
    const answer = `Here is the code:\n\n\`\`\`ts\n${codeLines.join('\n')}\n\`\`\`\n\n${paragraphWords.join(' ')}\n\nThe end.`;
    // Pieces of 7 characters with a pause after every 4: the code block's lines and the paragraph
    // (about 180 rows at 100 columns) reach jp unfinished, a few pieces at a time.
    const screen = jp(
      sandbox,
      ['query', ...testProvider(sandbox, { steps: [{ parts: streamed(answer, 7, 4) }] }), 'show me'],
      { columns: 100, rows: 30 },
    );
    const exit = await screen.exited;
    assert.equal(exit.exitCode, 0, screen.text());
    const lines = screen.lines();
    const at = codeLines.map((line) => lines.indexOf(line));
    for (const [index, line] of codeLines.entries())
      assert.equal(lines.filter((candidate) => candidate === line).length, 1, `code line ${index} once`);
    assert.deepEqual(
      at,
      [...at].sort((a, b) => a - b),
      'the code lines are in order',
    );
    assert.equal(at[59]! - at[0]!, 59, 'one row each, nothing between them');
    const paragraph = blocks(lines).filter((block) => block.startsWith('w0 '));
    assert.equal(paragraph.length, 1, 'the paragraph is drawn once');
    assert.equal(paragraph[0], paragraphWords.join(' '), 'whole, every word once, in order');
    assert.deepEqual(overWide(screen), [], 'word-wrapped by jp: no row is wider than the terminal');
    assert.ok(lines.findIndex((line) => line.startsWith('w0 ')) > at[59]!, 'after the code');
    assert.equal(screen.count('w2999'), 1);
    assert.equal(screen.count('The end.'), 1);
  });

  it('a 40-column terminal keeps every line whole', async () => {
    const sandbox = cleanup.sandbox();
    const answer = `# A heading that is longer than forty columns\n\n- a list item that is also longer than forty columns\n\n\`\`\`\n${codeLines.slice(0, 5).join('\n')}\n\`\`\`\n\nSome **bold** words in a sentence that wraps around the narrow terminal.`;
    const screen = jp(
      sandbox,
      ['query', ...testProvider(sandbox, { steps: [{ parts: streamed(answer, 5) }] }), 'narrow'],
      { columns: 40, rows: 20 },
    );
    assert.equal((await screen.exited).exitCode, 0, screen.text());
    const lines = screen.lines();
    const text = blocks(lines);
    assert.ok(text.includes('# A heading that is longer than forty columns'), lines.join('\n'));
    assert.ok(text.includes('• a list item that is also longer than forty columns'));
    for (const line of codeLines.slice(0, 5)) assert.equal(lines.filter((candidate) => candidate === line).length, 1);
    assert.ok(text.includes('Some bold words in a sentence that wraps around the narrow terminal.'));
    assert.deepEqual(overWide(screen), [], 'no row is wider than 40 columns');
  });

  it('a resize while streaming keeps lines whole and drawn once', async () => {
    const sandbox = cleanup.sandbox();
    const sentences = Array.from(
      { length: 40 },
      (_, index) => `Sentence number ${index} is here to be long enough to wrap at sixty columns of width.`,
    );
    const script = testProvider(sandbox, {
      steps: [
        {
          parts: [
            { text: 'Start.\n\n' },
            ...sentences.flatMap((sentence) => [{ text: sentence + '\n' }, { delay_ms: 25 }]),
          ],
        },
      ],
    });
    const screen = jp(sandbox, ['query', ...script, 'resize'], { columns: 100, rows: 30 });
    await screen.waitFor('Sentence number 5 ');
    screen.resize(60, 20);
    await screen.waitFor('Sentence number 20 ');
    screen.resize(120, 30);
    assert.equal((await screen.exited).exitCode, 0, screen.text());
    // Rows joined with one space: a sentence jp wrapped reads whole again, and appears once.
    const lines = screen.lines();
    const text = lines.map((line) => line.trim()).join(' ');
    for (const sentence of sentences)
      assert.equal(text.split(sentence).length - 1, 1, `${sentence}\n---\n${lines.join('\n')}`);
  });
});

describe('bytes written to the terminal', () => {
  it('a 20,000-word answer streamed a word at a time at 100×30 writes at most 3× its bytes, and appears exactly once', async () => {
    const sandbox = cleanup.sandbox();
    // Paragraphs of 100 words, one in ten of them bold, streamed one word per piece with a pause
    // every five words: without pauses the whole answer reaches the client at once, and the
    // rendering of an unfinished line is never exercised.
    const pieces: string[] = [];
    const paragraphs: string[] = [];
    let paragraph: string[] = [];
    for (let index = 0; index < 20_000; index++) {
      const word = `word${index}`;
      const last = index % 100 === 99;
      pieces.push(`${index % 10 === 3 ? `**${word}**` : word}${last ? '.\n\n' : ' '}`);
      paragraph.push(last ? `${word}.` : word);
      if (last) {
        paragraphs.push(paragraph.join(' '));
        paragraph = [];
      }
    }
    const answer = pieces.join('');
    const parts = pieces.flatMap((text, index) => (index % 5 === 4 ? [{ text }, { delay_ms: 1 }] : [{ text }]));
    const screen = jp(sandbox, ['query', ...testProvider(sandbox, { steps: [{ parts }] }), 'a long answer'], {
      columns: 100,
      rows: 30,
    });
    assert.equal((await screen.exited).exitCode, 0, screen.text().slice(-2000));
    const bytes = screen.bytesWritten();
    assert.ok(
      bytes <= 3 * Buffer.byteLength(answer),
      `${bytes} bytes written for an answer of ${Buffer.byteLength(answer)} bytes (${(bytes / Buffer.byteLength(answer)).toFixed(2)}×)`,
    );
    const drawn = blocks(screen.lines());
    const at = paragraphs.map((text) => drawn.indexOf(text));
    for (const [index, text] of paragraphs.entries())
      assert.equal(drawn.filter((block) => block === text).length, 1, `paragraph ${index} once, whole`);
    assert.deepEqual(
      at,
      [...at].sort((a, b) => a - b),
      'the paragraphs are in order',
    );
    assert.deepEqual(overWide(screen), [], 'word-wrapped by jp: no row is wider than the terminal');
    assert.equal(screen.count(/\bword\d+\b/), 20_000, 'every word once');
  });
});

describe('colour', () => {
  const answer = '# Title\n\nSome **bold** and `code` and *em*.\n\n```js\nconst x = 1;\n```\n';

  it('NO_COLOR: no colour and no bold anywhere, markdown included', async () => {
    const sandbox = cleanup.sandbox();
    const script = testProvider(sandbox, {
      steps: [
        { parts: [{ text: answer }, { tool_call: { name: 'fs_read_file', arguments: { path: 'missing.txt' } } }] },
        { parts: [{ text: 'Done **now**.' }] },
      ],
    });
    const screen = jp(sandbox, ['query', ...script, 'plain'], { env: { NO_COLOR: '1' } });
    assert.equal((await screen.exited).exitCode, 0, screen.text());
    assert.match(screen.text(), /Some bold and `code` and em\./);
    assert.match(screen.text(), /Done now\./);
    assert.equal(screen.styledText(), '', 'nothing is styled');
  });

  it('without NO_COLOR markdown is styled at a terminal; FORCE_COLOR styles it through a pipe', async () => {
    const sandbox = cleanup.sandbox();
    const script = testProvider(sandbox, { steps: [{ parts: [{ text: answer }] }] });
    const screen = jp(sandbox, ['query', ...script, 'styled']);
    assert.equal((await screen.exited).exitCode, 0, screen.text());
    assert.match(screen.styledText(), /Title.*bold.*code.*em.*const/s);
    const forced = await runJp(sandbox, ['query', '--new', ...script, '-F', 'text-pretty', 'forced'], {
      env: { FORCE_COLOR: '1' },
    });
    assert.match(forced.stdout, /\u001b\[1mbold/);
    const unforced = await runJp(sandbox, ['query', '--new', ...script, '-F', 'text-pretty', 'plain pipe']);
    assert.doesNotMatch(unforced.stdout, /\u001b\[/);
  });
});

describe('replays', () => {
  it('print and attach --tail show each turn: the user message, the answer, tool calls with results, a blank line between turns; stdout only the answers', async () => {
    const sandbox = cleanup.sandbox();
    sandbox.write('notes.txt', 'some notes');
    const first = testProvider(
      sandbox,
      {
        steps: [
          { parts: [{ text: 'Reading.' }, { tool_call: { name: 'fs_read_file', arguments: { path: 'notes.txt' } } }] },
          { parts: [{ text: 'MOCK_OK: one' }] },
        ],
      },
      'one.json',
    );
    const second = testProvider(sandbox, { steps: [{ parts: [{ text: 'MOCK_OK: two' }] }] }, 'two.json');
    assert.equal((await runJp(sandbox, ['query', ...first, 'first question'])).code, 0);
    assert.equal((await runJp(sandbox, ['query', ...second, 'second question'])).code, 0);
    const printed = await runJp(sandbox, ['conversation', 'print']);
    assert.equal(printed.stdout, 'Reading.\nMOCK_OK: one\n\nMOCK_OK: two\n');
    const screen = jp(sandbox, ['conversation', 'print']);
    assert.equal((await screen.exited).exitCode, 0);
    const lines = screen.lines().filter((line) => !line.startsWith('jp:'));
    assert.deepEqual(lines, [
      '> first question',
      'Reading.',
      '⚙ fs_read_file {"path":"notes.txt"}',
      '  ↳ fs_read_file: ok — some notes',
      'MOCK_OK: one',
      '',
      '> second question',
      'MOCK_OK: two',
    ]);
    // attach --tail replays the same way, then goes on live.
    const third = testProvider(
      sandbox,
      {
        steps: [
          {
            parts: [
              { text: 'Waiting.' },
              {
                tool_call: {
                  name: 'run_command',
                  arguments: { command: 'while [ ! -f release ]; do sleep 0.05; done' },
                },
              },
            ],
          },
          { parts: [{ text: 'MOCK_OK: three' }] },
        ],
      },
      'three.json',
    );
    const detached = await runJp(sandbox, [
      'query',
      '--detach',
      ...third,
      '-c',
      'conversation.tools.run_command.run="unattended"',
      'third question',
    ]);
    const conversationId = detached.stdout.trim();
    const attached = jp(sandbox, ['conversation', 'attach', '--read-only', '--tail=20', conversationId]);
    await attached.waitFor('Waiting.');
    sandbox.write('release', '');
    assert.equal((await attached.exited).exitCode, 0, attached.text());
    const attachedLines = attached.lines().filter((line) => !line.startsWith('jp:'));
    assert.deepEqual(
      attachedLines.slice(
        attachedLines.indexOf('> second question') - 1,
        attachedLines.indexOf('> third question') + 2,
      ),
      ['', '> second question', 'MOCK_OK: two', '', '> third question', 'Waiting.'],
    );
    assert.equal(attached.count('MOCK_OK: three'), 1);
  });
});
