/**
 * What an approval shows is never rewritten by an untrusted layer, and shows every character (DESIGN
 * §10 "What the user sees is what runs"; issue 35, attack 9), on the rendered screen:
 * - an untrusted workspace's `secrets.env_vars = ["HOME"]` does not turn `rm -rf /home/you/…` into
 *   `rm -rf [REDACTED]/…` in the prompt: a workspace's secret list needs trust;
 * - invisible and format characters (U+200B, U+2060, U+FEFF, U+3164, Unicode Cf and default-ignorable)
 *   are drawn as `<U+…>` in approval payloads and in `jp trust --show`.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { conversationIds, readEvents, runJp, testProvider, useCleanup } from '../support/jp.ts';
import { Screen } from '../support/screen.ts';

const cleanup = useCleanup();

describe('what an approval shows', () => {
  it("an untrusted workspace's secrets.env_vars does not hide the home directory in a command to approve", async () => {
    const sandbox = cleanup.sandbox({ config: '[secrets]\nenv_vars = ["HOME"]\n' });
    const home = sandbox.env.HOME!;
    const script = testProvider(sandbox, {
      steps: [
        { parts: [{ tool_call: { name: 'run_command', arguments: { command: `rm -rf ${home}/projects` } } }] },
        { parts: [{ text: 'Done.' }] },
      ],
    });
    // The user looked at the repository's config and does not trust it.
    assert.equal((await runJp(sandbox, ['trust', '--revoke'])).code, 0);
    const screen = Screen.jp(sandbox, ['query', ...script, 'clean up'], { cleanup, columns: 160 });
    await screen.waitFor(/Run run_command\? .*\[y\/Y\/a\/n\/N\/p\/e\]/);
    const shown = screen.text();
    screen.press('n');
    assert.equal((await screen.exited).exitCode, 0, screen.text());
    assert.ok(shown.includes(`$ rm -rf ${home}/projects`), `the prompt shows the real path:\n${shown}`);
    assert.doesNotMatch(shown, /REDACTED/);
    const recorded = readEvents(sandbox, conversationIds(sandbox)[0]!).find(
      (event) => event.type === 'tool_call_request',
    )!;
    assert.equal(recorded.arguments.command, `rm -rf ${home}/projects`);
  });

  it('invisible and format characters in a command are drawn as <U+…>', async () => {
    const sandbox = cleanup.sandbox();
    const command = 'echo ok\u200B; rm\u2060 -rf x\uFEFFy \u3164 z\u200D\u{E0041}';
    const script = testProvider(sandbox, {
      steps: [
        { parts: [{ tool_call: { name: 'run_command', arguments: { command } } }] },
        { parts: [{ text: 'Done.' }] },
      ],
    });
    const screen = Screen.jp(sandbox, ['query', ...script, 'go'], { cleanup, columns: 160 });
    await screen.waitFor(/Run run_command\? .*\[y\/Y\/a\/n\/N\/p\/e\]/);
    await screen.waitFor('$ echo ok<U+200B>; rm<U+2060> -rf x<U+FEFF>y <U+3164> z<U+200D><U+E0041>');
    screen.press('n');
    assert.equal((await screen.exited).exitCode, 0, screen.text());
  });

  it('jp trust --show draws them in keys and values', async () => {
    const sandbox = cleanup.sandbox({
      config: '[mcp.servers."tool\\u2060s"]\ncommand = "np\\u200Bx"\nargs = ["--\\uFEFFflag", "\\u3164"]\n',
    });
    const shown = await runJp(sandbox, ['trust', '--show']);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(
      shown.stdout,
      /^ {2}mcp\.servers\.tool<U\+2060>s = \{"command":"np<U\+200B>x","args":\["--<U\+FEFF>flag","<U\+3164>"\]\}$/m,
    );
    assert.doesNotMatch(shown.stdout, /[\u200B\u2060\uFEFF\u3164]/);
  });
});
