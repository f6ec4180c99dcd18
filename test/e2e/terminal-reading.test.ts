/**
 * What a person reads at a terminal (issue 25, "Reading"), on the rendered screen: headings keep
 * their level however the stream splits them, text is word-wrapped with hanging indents for lists
 * and quotes, tables are boxes (records on a narrow terminal), code fences are not drawn, a
 * command's output shows its first lines and `+N lines`, the status line says how long the model
 * has been thinking and how to interrupt it (also in attach), the light palette and TERM=dumb.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { gate } from '../support/fake-provider.ts';
import { fakeModel, runJp, testProvider, useCleanup } from '../support/jp.ts';
import { type Screen, jpScreens } from '../support/screen.ts';

const cleanup = useCleanup();

const jp = jpScreens(cleanup);

/** Lines of the answer, without jp's own `jp: …` notices. */
function answerLines(screen: Screen): string[] {
  // jp's own notices (`jp: …`, wrapped at spaces with their rows after the first indented) are not the answer.
  let inNotice = false;
  return screen.lines().filter((line) => {
    inNotice = line.startsWith('jp: ') || (inNotice && line.startsWith('  '));
    return !inNotice;
  });
}

describe('headings', () => {
  it('a heading line split at every point keeps its level: `##` then ` Heading two` is level 2 (bold, not underlined), `#` then `# …` too', async () => {
    const sandbox = cleanup.sandbox();
    const headings = ['# Heading one', '## Heading two', '### Heading three'];
    const parts: unknown[] = [];
    // Each heading line streamed in two pieces, once for every split point, with a pause between
    // the pieces so that jp sees the first one alone.
    for (const heading of headings) {
      for (let split = 1; split < heading.length; split++)
        parts.push({ text: heading.slice(0, split) }, { delay_ms: 15 }, { text: `${heading.slice(split)}\n\n` });
    }
    const screen = jp(sandbox, ['query', ...testProvider(sandbox, { steps: [{ parts }] }), 'headings']);
    assert.equal((await screen.exited).exitCode, 0, screen.text());
    const lines = answerLines(screen).filter((line) => line !== '');
    const expected = headings.flatMap((heading) => Array.from({ length: heading.length - 1 }, () => heading));
    assert.deepEqual(lines, expected);
    const one = screen.rowStyles('# Heading one');
    const two = screen.rowStyles('## Heading two');
    const three = screen.rowStyles('### Heading three');
    assert.equal(one.length, headings[0]!.length - 1);
    assert.ok(
      one.every((style) => style.bold && style.underline),
      'level 1: bold and underlined at every split',
    );
    assert.ok(
      two.every((style) => style.bold && !style.underline),
      'level 2: bold, not underlined, at every split',
    );
    assert.ok(
      three.every((style) => style.bold && !style.underline),
      'level 3: bold, not underlined, at every split',
    );
  });
});

describe('word wrap', () => {
  it('at 60 columns, a paragraph, a list (nested) and a quote wrap at word boundaries with hanging indents and a bar on every quote row', async () => {
    const sandbox = cleanup.sandbox();
    const paragraph =
      'This paragraph is long enough that it has to wrap at sixty columns, which matters for input that a person reads.';
    const item =
      'A list item that also goes on for longer than one row of sixty columns, so it wraps under its own text.';
    const nested = 'A nested item, indented, that wraps under its own text too, past the sixty columns.';
    const quote = 'A quoted remark that is long enough to need two or three rows at sixty columns of width.';
    const url = 'https://example.com/docs/a-rather-long-path/that-fits';
    const answer = `${paragraph}\n\n- ${item}\n  - ${nested}\n\n> ${quote}\n\nSee ${url} for \`inline code that stays\` whole.\n`;
    // Streamed a few characters at a time, so words reach jp cut in pieces.
    const parts = Array.from({ length: Math.ceil(answer.length / 6) }, (_, index) => [
      { text: answer.slice(index * 6, index * 6 + 6) },
      { delay_ms: 1 },
    ]).flat();
    const screen = jp(sandbox, ['query', ...testProvider(sandbox, { steps: [{ parts }] }), 'wrap'], {
      columns: 60,
      rows: 30,
    });
    assert.equal((await screen.exited).exitCode, 0, screen.text());
    const lines = answerLines(screen);
    assert.deepEqual(
      lines.filter((line) => line.length > 60),
      [],
      'no row is wider than the terminal (jp wrapped them, not the terminal)',
    );
    const words = new Set(answer.split(/\s+/).map((word) => word.replace(/^[-*>`]+|`$/g, '')));
    for (const line of lines) {
      for (const word of line.replace(/^[\s│•]+/, '').split(/\s+/))
        if (word !== '')
          assert.ok(
            words.has(word) || words.has(word.replace(/`/g, '')),
            `"${word}" is a whole word of the answer (row: ${JSON.stringify(line)})\n${lines.join('\n')}`,
          );
    }
    const rowsOf = (start: string): string[] => {
      const first = lines.findIndex((line) => line.startsWith(start));
      assert.notEqual(first, -1, `${start}\n${lines.join('\n')}`);
      const rows = [lines[first]!];
      for (
        let index = first + 1;
        index < lines.length && lines[index] !== '' && !/^\s*[•│]? ?[•]/.test(lines[index]!.replace(/^│ /, ''));
        index++
      )
        rows.push(lines[index]!);
      return rows;
    };
    const paragraphRows = rowsOf('This paragraph');
    assert.ok(paragraphRows.length >= 2);
    assert.equal(paragraphRows.join(' '), paragraph);
    const itemRows = rowsOf('• A list item');
    assert.ok(itemRows.length >= 2, itemRows.join('\n'));
    for (const row of itemRows.slice(1)) assert.match(row, /^ {2}\S/, 'hanging indent under the item text');
    assert.equal(itemRows.map((row) => row.trim()).join(' '), `• ${item}`);
    const nestedRows = rowsOf('  • A nested item');
    assert.ok(nestedRows.length >= 2, nestedRows.join('\n'));
    for (const row of nestedRows.slice(1)) assert.match(row, /^ {4}\S/, 'hanging indent under the nested item text');
    const quoteRows = rowsOf('│ A quoted remark');
    assert.ok(quoteRows.length >= 2, quoteRows.join('\n'));
    for (const row of quoteRows) assert.match(row, /^│ \S/, 'the bar on every row of the quote');
    assert.equal(quoteRows.map((row) => row.slice(2)).join(' '), quote);
    assert.equal(screen.count(url), 1, 'the URL is whole on one row');
    assert.equal(screen.count('inline code that stays'), 1);
  });
});

describe('tables and code', () => {
  const table =
    '| Name | Role | Notes |\n|------|:----:|------:|\n| Alice | Engineer | Writes **code** |\n| Bob | Designer | Draws things all day long |\n';

  it('at 100 columns a table is a box sized to its cells; code fences are not drawn, the code is', async () => {
    const sandbox = cleanup.sandbox();
    const answer = `The team:\n\n${table}\nAnd the code:\n\n\`\`\`js\nconst x = 1;\n\`\`\`\n`;
    const screen = jp(
      sandbox,
      [
        'query',
        ...testProvider(sandbox, {
          steps: [{ parts: [{ text: answer.slice(0, 30) }, { delay_ms: 5 }, { text: answer.slice(30) }] }],
        }),
        'table',
      ],
      { columns: 100 },
    );
    assert.equal((await screen.exited).exitCode, 0, screen.text());
    const lines = answerLines(screen);
    const top = lines.findIndex((line) => line.startsWith('┌'));
    assert.deepEqual(lines.slice(top, top + 6), [
      `┌${'─'.repeat(7)}┬${'─'.repeat(10)}┬${'─'.repeat(27)}┐`,
      `│ Name  │   Role   │ ${'Notes'.padStart(25)} │`,
      `├${'─'.repeat(7)}┼${'─'.repeat(10)}┼${'─'.repeat(27)}┤`,
      `│ Alice │ Engineer │ ${'Writes code'.padStart(25)} │`,
      `│ Bob   │ Designer │ Draws things all day long │`,
      `└${'─'.repeat(7)}┴${'─'.repeat(10)}┴${'─'.repeat(27)}┘`,
    ]);
    assert.equal(screen.count('|'), 0, 'no raw pipes');
    assert.equal(screen.count('```'), 0, 'no fence is drawn');
    assert.equal(screen.count('const x = 1;'), 1);
  });

  it('at 40 columns the same table is drawn as records of `header: value`', async () => {
    const sandbox = cleanup.sandbox();
    const screen = jp(
      sandbox,
      ['query', ...testProvider(sandbox, { steps: [{ parts: [{ text: table }] }] }), 'table'],
      { columns: 40 },
    );
    assert.equal((await screen.exited).exitCode, 0, screen.text());
    const lines = answerLines(screen);
    const first = lines.indexOf('Name: Alice');
    assert.notEqual(first, -1, lines.join('\n'));
    assert.deepEqual(lines.slice(first, first + 7), [
      'Name: Alice',
      'Role: Engineer',
      'Notes: Writes code',
      '─'.repeat(40),
      'Name: Bob',
      'Role: Designer',
      'Notes: Draws things all day long',
    ]);
    assert.deepEqual(
      lines.filter((line) => line.length > 40),
      [],
    );
  });
});

describe('command output', () => {
  it('a command shows its first lines and `+N lines` at the terminal; print shows all of them', async () => {
    const sandbox = cleanup.sandbox();
    const script = testProvider(sandbox, {
      steps: [
        { parts: [{ tool_call: { name: 'run_command', arguments: { command: 'seq 1 12' } } }] },
        { parts: [{ text: 'Counted.' }] },
      ],
    });
    const screen = jp(sandbox, ['query', ...script, '-c', 'conversation.tools.run_command.run="unattended"', 'count']);
    assert.equal((await screen.exited).exitCode, 0, screen.text());
    const lines = answerLines(screen);
    const header = lines.findIndex((line) => line.startsWith('  ↳ run_command: ok'));
    assert.notEqual(header, -1, lines.join('\n'));
    assert.equal(lines[header], '  ↳ run_command: ok — exit code 0');
    assert.deepEqual(lines.slice(header + 1, header + 7), [
      '    1',
      '    2',
      '    3',
      '    4',
      '    5',
      '    … +7 lines',
    ]);
    assert.equal(screen.count(/^ {4}6$/m), 0);
    const printed = jp(sandbox, ['conversation', 'print']);
    assert.equal((await printed.exited).exitCode, 0, printed.text());
    const printedLines = answerLines(printed);
    const at = printedLines.indexOf('  ↳ run_command: ok — exit code 0');
    assert.deepEqual(
      printedLines.slice(at + 1, at + 13),
      Array.from({ length: 12 }, (_, index) => `    ${index + 1}`),
    );
    assert.equal(printed.count('+7 lines'), 0);
  });
});

describe('while the model thinks', () => {
  it('the status line shows the elapsed time and the interrupt key, in a query and in attach', async () => {
    const sandbox = cleanup.sandbox();
    // The model answers once the status line has been seen.
    const thought = gate();
    const model = await fakeModel(cleanup, [{ parts: [{ gate: thought }, { text: 'MOCK_OK: thought' }] }]);
    const screen = jp(sandbox, ['query', ...model.args, 'think'], { env: model.env });
    await screen.waitFor(/thinking \([1-9]\d*s • Ctrl\+C to interrupt\)/, { on: 'screen' });
    thought.open();
    assert.equal((await screen.exited).exitCode, 0, screen.text());
    assert.equal(screen.count('MOCK_OK: thought'), 1);
    assert.equal(screen.count('thinking'), 0, 'the status line is gone once the answer is drawn');

    const seenAttached = gate();
    const slow = await fakeModel(cleanup, [{ parts: [{ gate: seenAttached }, { text: 'MOCK_OK: attached' }] }]);
    const detached = await runJp(sandbox, ['query', '--detach', '--new', ...slow.args, 'think in the background'], {
      env: slow.env,
    });
    assert.equal(detached.code, 0, detached.stderr);
    const attached = jp(sandbox, ['conversation', 'attach', '--read-only', detached.stdout.trim()]);
    await attached.waitFor(/thinking \(\d+s • Ctrl\+C to leave\)/, { on: 'screen' });
    seenAttached.open();
    assert.equal((await attached.exited).exitCode, 0, attached.text());
    assert.equal(attached.count('MOCK_OK: attached'), 1);
  });
});

describe('theme and TERM=dumb', () => {
  const answer = 'Some `inline code` here.\n\n```js\nconst name = "string";\n```\n';

  it('ui.theme = "light" draws inline code in the light palette (xterm-256 colour 94; dark: 179)', async () => {
    const sandbox = cleanup.sandbox();
    const script = testProvider(sandbox, { steps: [{ parts: [{ text: answer }] }] });
    const light = jp(sandbox, ['query', ...script, '-c', 'ui.theme="light"', 'light']);
    assert.equal((await light.exited).exitCode, 0, light.text());
    assert.equal(light.rowStyles('Some inline code here.')[0]?.color, undefined, 'the row starts with plain text');
    const dark = jp(sandbox, ['query', ...script, '-c', 'ui.theme="dark"', 'dark']);
    assert.equal((await dark.exited).exitCode, 0, dark.text());
    assert.match(light.raw(), /\u001b\[38;5;94minline code/);
    assert.match(dark.raw(), /\u001b\[38;5;179minline code/);
  });

  it('a terminal that reports a white background (OSC 11) gets the light palette; one that does not answer, the dark one', async () => {
    const sandbox = cleanup.sandbox();
    const script = testProvider(sandbox, { steps: [{ parts: [{ text: answer }] }] });
    const white = jp(sandbox, ['query', ...script, 'white'], { background: 'rgb:ffff/ffff/ffff' });
    assert.equal((await white.exited).exitCode, 0, white.text());
    assert.match(white.raw(), /\u001b\[38;5;94minline code/);
    const black = jp(sandbox, ['query', ...script, 'black'], { background: 'rgb:0000/0000/0000' });
    assert.equal((await black.exited).exitCode, 0, black.text());
    assert.match(black.raw(), /\u001b\[38;5;179minline code/);
    const silent = jp(sandbox, ['query', ...script, 'silent']);
    assert.equal((await silent.exited).exitCode, 0, silent.text());
    assert.match(silent.raw(), /\u001b\[38;5;179minline code/);
  });

  it('TERM=dumb: not one escape sequence (no colour, no cursor movement, no spinner), and the answer and chrome are there', async () => {
    const sandbox = cleanup.sandbox();
    sandbox.write('notes.txt', 'some notes');
    const script = testProvider(sandbox, {
      steps: [
        {
          parts: [
            { delay_ms: 300 },
            { text: '# Title\n\nSome **bold** and `code`.\n' },
            { tool_call: { name: 'fs_read_file', arguments: { path: 'notes.txt' } } },
          ],
        },
        { parts: [{ delay_ms: 300 }, { text: 'Done.' }] },
      ],
    });
    const screen = jp(sandbox, ['query', ...script, 'dumb'], { env: { TERM: 'dumb' } });
    assert.equal((await screen.exited).exitCode, 0, screen.text());
    assert.doesNotMatch(screen.raw(), /[\u001b\u009b]/, JSON.stringify(screen.raw()));
    assert.doesNotMatch(screen.raw(), /\r(?!\n)/, 'no carriage return redraws a line');
    assert.match(screen.text(), /# Title/);
    assert.match(screen.text(), /Some bold and `code`\./);
    assert.match(screen.text(), /fs_read_file: ok — some notes/);
    assert.match(screen.text(), /Done\./);
  });
});

describe('conversation ls', () => {
  it('fits in 100 columns: a long title and status are cut with …', async () => {
    const sandbox = cleanup.sandbox();
    const script = testProvider(sandbox, { steps: [{ parts: [{ text: 'ok' }] }] });
    const long = `a title that goes on and on ${'and on '.repeat(20)}until the end`;
    assert.equal((await runJp(sandbox, ['query', ...script, long])).code, 0);
    const screen = jp(sandbox, ['conversation', 'ls'], { columns: 100 });
    assert.equal((await screen.exited).exitCode, 0, screen.text());
    const lines = screen.lines();
    assert.deepEqual(
      lines.filter((line) => line.length > 100),
      [],
      lines.join('\n'),
    );
    assert.match(screen.text(), /a title that goes on and on .*…/);
  });
});
