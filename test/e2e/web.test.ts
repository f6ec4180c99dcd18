/**
 * `jp web` in a real browser (Chromium through playwright-core) against real runs of the built
 * binary: the list follows runs as they start and end, a live answer streams, a live run's
 * question is answered from the page and the run goes on, a deferred run is continued from the
 * page, the model's and tools' text cannot inject markup, and requests without the token, with
 * another Host or from another origin are refused.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { launchBrowser } from '../support/browser.ts';
import {
  conversationIds,
  eventually,
  jpBinary,
  readEvents,
  runJp,
  type Sandbox,
  testProvider,
  useCleanup,
} from '../support/jp.ts';
import { startWeb, type RunningWeb } from '../support/web.ts';

const cleanup = useCleanup();
/** Safety net for what the page waits on (a loaded machine); never a timed assertion. */
const patience = { timeout: 60_000 };

/** A command that waits until the test creates `release` in the workspace. */
const releaseWait = 'while [ ! -f release ]; do sleep 0.05; done';
const unattendedCommands = ['-c', 'conversation.tools.run_command.run="unattended"'];

async function web(sandbox: Sandbox): Promise<RunningWeb> {
  const running = await startWeb(sandbox);
  cleanup.add(() => running.stop());
  return running;
}

async function openPage(running: RunningWeb, options: Parameters<typeof launchBrowser>[0] = {}): Promise<Page> {
  const context = await launchBrowser(options);
  const page = await context.newPage();
  await page.goto(running.url);
  return page;
}

async function detached(sandbox: Sandbox, script: unknown, message: string, extra: string[] = []): Promise<string> {
  const result = await runJp(sandbox, ['query', '--detach', ...testProvider(sandbox, script), ...extra, message]);
  assert.equal(result.code, 0, result.stderr);
  return result.stdout.trim();
}

/** The list row of a conversation (its title), and its state as the page shows it. */
function row(page: Page, title: string) {
  return page.locator('.run', { hasText: title });
}

describe('jp web in a browser', () => {
  it('lists a run when it starts, shows it running, and idle when it ends', async () => {
    const sandbox = cleanup.sandbox();
    const running = await web(sandbox);
    const page = await openPage(running);
    await page.locator('#empty').waitFor({ state: 'visible', ...patience });
    await detached(
      sandbox,
      {
        steps: [
          { parts: [{ tool_call: { name: 'run_command', arguments: { command: releaseWait } } }] },
          { parts: [{ text: 'Finished.' }] },
        ],
      },
      'a run to list',
      unattendedCommands,
    );
    await row(page, 'a run to list').locator('.state.running').waitFor(patience);
    sandbox.write('release', '');
    await row(page, 'a run to list').locator('.state.idle').waitFor(patience);
    assert.equal(await page.locator('.run').count(), 1);
  });

  it('streams a live answer, then shows it whole once, rendered as markdown', async () => {
    const sandbox = cleanup.sandbox();
    const running = await web(sandbox);
    await detached(
      sandbox,
      {
        steps: [
          {
            parts: [
              { text: 'Streaming **part one**.\n\n' },
              { tool_call: { name: 'run_command', arguments: { command: releaseWait } } },
            ],
          },
          { parts: [{ text: 'Part ' }, { delay_ms: 200 }, { text: 'two, ' }, { delay_ms: 200 }, { text: 'the end.' }] },
        ],
      },
      'stream it',
      unattendedCommands,
    );
    const page = await openPage(running);
    await row(page, 'stream it').click();
    // While the run waits in its tool, the first part is on the page: it came live, not at the end.
    await page.locator('.block.assistant strong', { hasText: 'part one' }).waitFor(patience);
    assert.equal(
      readEvents(sandbox, readConversation(sandbox)).some((event) => event.type === 'turn_end'),
      false,
      JSON.stringify(readEvents(sandbox, readConversation(sandbox)).filter((event) => event.type !== 'system_prompt')),
    );
    sandbox.write('release', '');
    await page.locator('.block.assistant', { hasText: 'Part two, the end.' }).waitFor(patience);
    await row(page, 'stream it').locator('.state.idle').waitFor(patience);
    const transcript = (await page.locator('#blocks').textContent()) ?? '';
    assert.equal(transcript.split('Part two, the end.').length, 2, transcript);
    assert.equal(transcript.split('part one').length, 2, transcript);
    assert.equal(await page.locator('#live').isVisible(), false, (await page.locator('#live').textContent()) ?? '');
  });

  it("answers a live run's question from the page: the run goes on, and the answer is recorded by the user in jp web", async () => {
    const sandbox = cleanup.sandbox();
    const running = await web(sandbox);
    const conversationId = await detached(
      sandbox,
      {
        steps: [
          {
            parts: [
              { text: 'Waiting.\n\n' },
              { tool_call: { name: 'run_command', arguments: { command: releaseWait } } },
            ],
          },
          {
            parts: [
              { text: 'Now a file.\n\n' },
              {
                tool_call: {
                  name: 'fs_create_file',
                  arguments: { path: 'approved.txt', content: 'approved\nsecond line' },
                },
              },
            ],
          },
          { parts: [{ text: 'Written after approval.' }] },
        ],
      },
      'ask me',
      unattendedCommands,
    );
    const page = await openPage(running);
    await row(page, 'ask me').click();
    await page.locator('.block.assistant', { hasText: 'Waiting.' }).waitFor(patience);
    sandbox.write('release', '');
    const ask = page.locator('.ask.live');
    await ask.waitFor(patience);
    // The whole payload: the file and its content, line by line.
    assert.match(
      (await ask.textContent()) ?? '',
      /Run fs_create_file\?[\s\S]*approved\.txt[\s\S]*\+ approved[\s\S]*\+ second line/,
    );
    assert.equal(sandbox.exists('approved.txt'), false);
    await ask.getByRole('button', { name: 'Run', exact: true }).click();
    await page.locator('.block.assistant', { hasText: 'Written after approval.' }).waitFor(patience);
    assert.equal(sandbox.read('approved.txt'), 'approved\nsecond line');
    const responses = readEvents(sandbox, conversationId).filter((event) => event.type === 'inquiry_response');
    assert.deepEqual(
      responses.map((event) => [event.answer, event.by, event.client]),
      [['run', 'user', 'jp web']],
    );
  });

  it('continues a deferred run from the page: it goes on in the background and finishes', async () => {
    const sandbox = cleanup.sandbox();
    const conversationId = await detached(
      sandbox,
      {
        steps: [
          { parts: [{ tool_call: { name: 'run_command', arguments: { command: 'echo continued > out.txt' } } }] },
          { parts: [{ text: 'Continued and done.' }] },
        ],
      },
      'deferred one',
    );
    await eventually('the run to defer', async () => {
      const listed = await runJp(sandbox, ['conversation', 'ls', '--json']);
      return JSON.parse(listed.stdout)[0]?.state === 'waiting-for-input';
    });
    const running = await web(sandbox);
    const page = await openPage(running);
    await row(page, 'deferred one').locator('.state.waiting-for-input').waitFor(patience);
    await row(page, 'deferred one').click();
    const ask = page.locator('.ask.deferred');
    await ask.waitFor(patience);
    assert.match(
      (await ask.textContent()) ?? '',
      /Run run_command\?[\s\S]*Sandbox: workspace-write, no network[\s\S]*echo continued > out\.txt/,
    );
    await ask.getByRole('button', { name: 'Run', exact: true }).click();
    await row(page, 'deferred one').locator('.state.idle').waitFor(patience);
    assert.equal(sandbox.read('out.txt'), 'continued\n');
    const responses = readEvents(sandbox, conversationId).filter((event) => event.type === 'inquiry_response');
    assert.deepEqual(
      responses.map((event) => [event.answer, event.by, event.client]),
      [['run', 'user', 'jp web']],
    );
    // Opened again, the finished run shows its answer, once.
    await row(page, 'deferred one').click();
    await page.locator('.block.assistant', { hasText: 'Continued and done.' }).waitFor(patience);
    assert.equal(await page.locator('.block.assistant', { hasText: 'Continued and done.' }).count(), 1);
  });

  it("renders the model's and a tool's markup as text: no script runs, no element is injected", async () => {
    const sandbox = cleanup.sandbox();
    const attack = '<script>window.__jpInjected = 1</script><img src=x onerror="window.__jpInjected = 2">';
    sandbox.write('attack.txt', `${attack}\n`);
    await detached(
      sandbox,
      {
        steps: [
          {
            parts: [
              { text: `Look: ${attack}\n\n<b>bold?</b> [link](javascript:window.__jpInjected=3)\n\n` },
              { tool_call: { name: 'fs_read_file', arguments: { path: 'attack.txt' } } },
            ],
          },
          { parts: [{ text: 'Read it.' }] },
        ],
      },
      'attack <img src=x onerror="window.__jpInjected=4">',
    );
    const running = await web(sandbox);
    const page = await openPage(running);
    await row(page, 'attack').locator('.state.idle').waitFor(patience);
    await row(page, 'attack').click();
    await page.locator('.block.assistant', { hasText: 'Read it.' }).waitFor(patience);
    await page.locator('details.tool').first().click();
    assert.equal(await page.evaluate(() => (window as { __jpInjected?: number }).__jpInjected), undefined);
    assert.equal(await page.locator('#transcript img, #transcript script, .run img, #transcript b').count(), 0);
    const text = (await page.locator('#transcript').textContent()) ?? '';
    assert.ok(text.includes('<script>window.__jpInjected = 1</script>'), text);
    assert.ok(text.includes('<b>bold?</b>'), text);
    assert.ok(((await page.locator('details.tool .output').textContent()) ?? '').includes('<img src=x onerror='));
    assert.ok(((await page.locator('.run .title').textContent()) ?? '').includes('<img src=x'));
    const hrefs = await page
      .locator('#transcript a')
      .evaluateAll((links) => links.map((link) => link.getAttribute('href')));
    assert.ok(
      hrefs.every((href) => href === null || !href.startsWith('javascript')),
      String(hrefs),
    );
  });
});

describe('jp web refuses', () => {
  it('a request without the token, with another Host, or from another origin; the token in the URL becomes a same-site cookie', async () => {
    const sandbox = cleanup.sandbox();
    const running = await web(sandbox);
    const request = (path: string, headers: http.OutgoingHttpHeaders, method = 'GET', body?: string) =>
      new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
        const outgoing = http.request({ host: '127.0.0.1', port: running.port, path, method, headers }, (response) => {
          let text = '';
          response.on('data', (chunk: Buffer) => (text += chunk.toString()));
          response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body: text }));
        });
        outgoing.on('error', reject);
        outgoing.end(body);
      });
    const host = `127.0.0.1:${running.port}`;
    const cookie = `jp-web-${running.port}=${running.token}`;
    assert.equal((await request('/', { host })).status, 401);
    assert.equal((await request('/api/runs', { host, cookie: `jp-web-${running.port}=wrong` })).status, 401);
    assert.equal((await request(`/?token=wrong`, { host })).status, 401);
    // DNS rebinding: a name that resolves to 127.0.0.1 is not this server's name.
    assert.equal((await request(`/?token=${running.token}`, { host: `attacker.example:${running.port}` })).status, 403);
    assert.equal((await request('/', { host: `attacker.example:${running.port}`, cookie })).status, 403);
    const entered = await request(`/?token=${running.token}`, { host });
    assert.equal(entered.status, 303);
    assert.match(String(entered.headers['set-cookie']), /HttpOnly; SameSite=Strict/);
    assert.equal(entered.headers.location, '/');
    assert.equal((await request('/', { host, cookie })).status, 200);
    // Another origin, with the cookie (a browser that sent it anyway): refused, reading and acting.
    assert.equal((await request('/api/runs', { host, cookie, origin: 'http://attacker.example' })).status, 403);
    assert.equal((await request('/api/runs', { host, cookie, 'sec-fetch-site': 'cross-site' })).status, 403);
    const kill = JSON.stringify({ source: 'local', workspace: 'w', conversation: 'jp-c1' });
    const json = { 'content-type': 'application/json' };
    assert.equal(
      (await request('/api/kill', { host, cookie, ...json, origin: 'http://attacker.example' }, 'POST', kill)).status,
      403,
    );
    assert.equal((await request('/api/kill', { host, cookie, ...json }, 'POST', kill)).status, 403);
    assert.equal(
      (await request('/api/kill', { host, cookie, origin: running.origin, 'content-type': 'text/plain' }, 'POST', kill))
        .status,
      400,
    );
  });

  it('a page of another origin, in the browser that holds the cookie, can neither read the runs nor stop one', async () => {
    const sandbox = cleanup.sandbox();
    const conversationId = await detached(
      sandbox,
      {
        steps: [
          { parts: [{ tool_call: { name: 'run_command', arguments: { command: releaseWait } } }] },
          { parts: [{ text: 'Survived.' }] },
        ],
      },
      'target run',
      unattendedCommands,
    );
    const running = await web(sandbox);
    const page = await openPage(running);
    await row(page, 'target run').locator('.state.running').waitFor(patience);
    const workspace = sandbox.userDirectory().split('/').pop()!;
    // The attacker's site: another origin on this machine, visited in the same browser.
    const attacker = http.createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end('<!doctype html><title>attacker</title>');
    });
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
    cleanup.add(() => new Promise((resolve) => attacker.close(resolve)));
    const attackerPort = (attacker.address() as { port: number }).port;
    const evil = await page.context().newPage();
    await evil.goto(`http://localhost:${attackerPort}/`);
    const outcome = await evil.evaluate(
      async ({ target, body }) => {
        const results: string[] = [];
        try {
          const read = await fetch(`${target}/api/runs`, { credentials: 'include' });
          results.push(`read ${read.status}`);
        } catch {
          results.push('read blocked');
        }
        try {
          await fetch(`${target}/api/kill`, { method: 'POST', credentials: 'include', mode: 'no-cors', body });
          results.push('kill sent');
        } catch {
          results.push('kill blocked');
        }
        try {
          await fetch(`${target}/api/kill`, {
            method: 'POST',
            credentials: 'include',
            headers: { 'content-type': 'application/json' },
            body,
          });
          results.push('json kill sent');
        } catch {
          results.push('json kill blocked');
        }
        return results;
      },
      {
        target: running.origin,
        body: JSON.stringify({ source: 'local', workspace, conversation: conversationId }),
      },
    );
    assert.deepEqual(outcome, ['read blocked', 'kill sent', 'json kill blocked']);
    // Each request was answered (the fetches returned) and the run still runs.
    const listed = JSON.parse((await runJp(sandbox, ['conversation', 'ls', '--json'])).stdout);
    assert.equal(listed[0].state, 'running');
    sandbox.write('release', '');
    await row(page, 'target run').locator('.state.idle').waitFor(patience);
  });
});

function readConversation(sandbox: Sandbox): string {
  const ids = conversationIds(sandbox);
  assert.equal(ids.length, 1);
  return ids[0]!;
}

describe('jp web with an SSH host', () => {
  it("shows the host's runs through `ssh host jp web --stdio`, and opens one", async () => {
    const { startSshServer } = await import('../support/sshd.ts');
    const server = await startSshServer();
    const local = cleanup.sandbox();
    // The host's jp: another user-local state and workspace on this machine, reached only through sshd.
    const remote = cleanup.sandbox();
    await detached(remote, { steps: [{ parts: [{ text: 'An answer **on the host**.' }] }] }, 'remote work');
    const remoteJp = [
      `cd ${remote.workspace} &&`,
      `env HOME=${remote.env.HOME} XDG_DATA_HOME=${remote.env.XDG_DATA_HOME} XDG_CONFIG_HOME=${remote.env.XDG_CONFIG_HOME}`,
      `${process.execPath} ${jpBinary}`,
    ].join(' ');
    const running = await startWeb(local, [
      '--host',
      server.alias,
      '-c',
      `web.ssh_command=${JSON.stringify(server.sshCommand)}`,
      '-c',
      `web.remote_command=${JSON.stringify(remoteJp)}`,
    ]);
    cleanup.add(() => running.stop());
    const page = await openPage(running);
    const remoteRow = row(page, 'remote work');
    await remoteRow.locator('.state.idle').waitFor(patience);
    assert.match((await remoteRow.textContent()) ?? '', /jp-test-host: w/);
    await remoteRow.click();
    await page.locator('.block.assistant strong', { hasText: 'on the host' }).waitFor(patience);
    assert.equal(await page.locator('#sources').textContent(), '');
  });
});
