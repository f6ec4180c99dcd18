/**
 * `jp web --host`: an SSH host's runs through `ssh host jp web --stdio`, against an sshd the test
 * starts on 127.0.0.1 with throwaway keys (test/support/sshd.ts). The host's jp is another
 * user-local state and workspace on this machine, reached only through that sshd: its runs are
 * listed and opened, a live run's question is answered from the page, a deferred run continued.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startSshServer } from '../support/sshd.ts';
import { eventually, jpBinary, readEvents, runJp, type Sandbox, useCleanup } from '../support/jp.ts';
import { detached, patience, releaseWait, row, unattendedCommands, webTesting } from '../support/web.ts';

const cleanup = useCleanup();
const { web, openPage } = webTesting(cleanup);

/** `jp web` here with one SSH host whose jp runs in `remote`'s workspace and user-local state. */
async function webWithHost(remote: Sandbox) {
  const server = await startSshServer();
  const remoteJp = [
    `cd ${remote.workspace} &&`,
    `env HOME=${remote.env.HOME} XDG_DATA_HOME=${remote.env.XDG_DATA_HOME} XDG_CONFIG_HOME=${remote.env.XDG_CONFIG_HOME}`,
    `${process.execPath} ${jpBinary}`,
  ].join(' ');
  return web(cleanup.sandbox(), [
    '--host',
    server.alias,
    '-c',
    `web.ssh_command=${JSON.stringify(server.sshCommand)}`,
    '-c',
    `web.remote_command=${JSON.stringify(remoteJp)}`,
  ]);
}

describe('jp web with an SSH host', () => {
  it("shows the host's runs through `ssh host jp web --stdio`, and opens one", async () => {
    const remote = cleanup.sandbox();
    await detached(remote, { steps: [{ parts: [{ text: 'An answer **on the host**.' }] }] }, 'remote work');
    const page = await openPage(await webWithHost(remote));
    const remoteRow = row(page, 'remote work');
    await remoteRow.locator('.state.idle').waitFor(patience);
    assert.match((await remoteRow.textContent()) ?? '', /jp-test-host: w/);
    await remoteRow.click();
    await page.locator('.block.assistant strong', { hasText: 'on the host' }).waitFor(patience);
    assert.equal(await page.locator('#sources').textContent(), '');
  });

  it("answers a live run's question on the host from the page: the run goes on there", async () => {
    const remote = cleanup.sandbox();
    const conversationId = await detached(
      remote,
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
              { tool_call: { name: 'fs_create_file', arguments: { path: 'approved.txt', content: 'on the host' } } },
            ],
          },
          { parts: [{ text: 'Written on the host.' }] },
        ],
      },
      'remote question',
      unattendedCommands,
    );
    const page = await openPage(await webWithHost(remote));
    await row(page, 'remote question').click();
    await page.locator('.block.assistant', { hasText: 'Waiting.' }).waitFor(patience);
    remote.write('release', '');
    const ask = page.locator('.ask.live');
    await ask.waitFor(patience);
    assert.match((await ask.textContent()) ?? '', /Run fs_create_file\?[\s\S]*approved\.txt[\s\S]*\+ on the host/);
    await ask.getByRole('button', { name: 'Run', exact: true }).click();
    await page.locator('.block.assistant', { hasText: 'Written on the host.' }).waitFor(patience);
    assert.equal(remote.read('approved.txt'), 'on the host');
    assert.deepEqual(
      readEvents(remote, conversationId)
        .filter((event) => event.type === 'inquiry_response')
        .map((event) => [event.answer, event.by, event.client]),
      [['run', 'user', 'jp web (ssh)']],
    );
  });

  it('continues a deferred run on the host from the page: it finishes there', async () => {
    const remote = cleanup.sandbox();
    const conversationId = await detached(
      remote,
      {
        steps: [
          { parts: [{ tool_call: { name: 'run_command', arguments: { command: 'echo continued > out.txt' } } }] },
          { parts: [{ text: 'Continued on the host.' }] },
        ],
      },
      'remote deferred',
    );
    await eventually('the run to defer', async () => {
      const listed = await runJp(remote, ['conversation', 'ls', '--json']);
      return JSON.parse(listed.stdout)[0]?.state === 'waiting-for-input';
    });
    const page = await openPage(await webWithHost(remote));
    await row(page, 'remote deferred').locator('.state.waiting-for-input').waitFor(patience);
    await row(page, 'remote deferred').click();
    const ask = page.locator('.ask.deferred');
    await ask.waitFor(patience);
    await ask.getByRole('button', { name: 'Run', exact: true }).click();
    await row(page, 'remote deferred').locator('.state.idle').waitFor(patience);
    assert.equal(remote.read('out.txt'), 'continued\n');
    assert.deepEqual(
      readEvents(remote, conversationId)
        .filter((event) => event.type === 'inquiry_response')
        .map((event) => [event.answer, event.by, event.client]),
      [['run', 'user', 'jp web (ssh)']],
    );
  });
});
