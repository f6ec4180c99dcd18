/**
 * `jp web` against who should not reach it, or not that way (DESIGN §10), on the real binary and
 * in a real browser: requests without the token, with another Host (DNS rebinding) or from another
 * origin, or naming a conversation by a path; a page of another origin in the same browser, reading,
 * acting or framing the page; another local user's server on another port, reached by a link in the
 * model's text; images in the model's text that would call home; the Content-Security-Policy behind
 * the sanitiser; markup in the model's and tools' text and titles; answers not bound to the very
 * inquiry, call and payload shown; a log whose question says something else than its call.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import path from 'node:path';
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { eventually, readEvents, runJp, type Sandbox, useCleanup } from '../support/jp.ts';
import {
  detached,
  openStream,
  patience,
  postAsPage,
  releaseWait,
  request,
  row,
  unattendedCommands,
  webTesting,
} from '../support/web.ts';

const cleanup = useCleanup();
const { web, openPage } = webTesting(cleanup);

/** A server of someone else on 127.0.0.1 (another port): what it was asked, and its origin. */
async function otherServer(
  answer: (request: http.IncomingMessage, response: http.ServerResponse) => void,
): Promise<{ origin: string; seen: { url: string; headers: http.IncomingHttpHeaders }[] }> {
  const seen: { url: string; headers: http.IncomingHttpHeaders }[] = [];
  const server = http.createServer((request, response) => {
    seen.push({ url: request.url ?? '', headers: request.headers });
    answer(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.add(() => new Promise((resolve) => server.close(resolve)));
  return { origin: `http://127.0.0.1:${(server.address() as { port: number }).port}`, seen };
}

/** The id of the sandbox's workspace, as the page names it. */
function workspaceId(sandbox: Sandbox): string {
  return path.basename(sandbox.userDirectory());
}

async function waitingForInput(sandbox: Sandbox): Promise<void> {
  await eventually('the run to defer', async () => {
    const listed = await runJp(sandbox, ['conversation', 'ls', '--json']);
    return JSON.parse(listed.stdout)[0]?.state === 'waiting-for-input';
  });
}

/** A one-pixel GIF: an image a browser loads, if it is let. */
const pixel = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

describe('jp web shows untrusted text as text', () => {
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
    // Nowhere on the page: the list, the heading, the transcript.
    assert.equal(await page.locator('img, #transcript script, #transcript b').count(), 0);
    assert.ok(((await page.locator('#title').textContent()) ?? '').includes('<img src=x'));
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

describe("jp web against the model's links and images", () => {
  it("a link in the model's text, followed, gives another local server nothing of the page's secret; an image in it calls nobody", async () => {
    // Another local user's server on another port of 127.0.0.1: cookies are not kept apart by port.
    const { origin: elsewhere, seen } = await otherServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end('<!doctype html><title>elsewhere</title>');
    });
    const sandbox = cleanup.sandbox();
    await detached(
      sandbox,
      { steps: [{ parts: [{ text: `See [the docs](${elsewhere}/docs) and ![a chart](${elsewhere}/chart.png).` }] }] },
      'links and images',
    );
    const running = await web(sandbox);
    const page = await openPage(running);
    await row(page, 'links and images').locator('.state.idle').waitFor(patience);
    await row(page, 'links and images').click();
    const link = page.locator('.block.assistant a', { hasText: 'the docs' });
    await link.waitFor(patience);
    // The image is not fetched: it is shown as a link to where it points.
    assert.equal(await page.locator('img').count(), 0);
    assert.equal(
      await page.locator('#blocks .block.assistant a', { hasText: 'image: a chart' }).getAttribute('href'),
      `${elsewhere}/chart.png`,
    );
    await link.click();
    await eventually('the link to be followed', () => seen.some((request) => request.url === '/docs'), 60_000);
    for (const request of seen) assert.ok(!JSON.stringify(request).includes(running.token), JSON.stringify(request));
    assert.ok(!seen.some((request) => request.url === '/chart.png'));
    // The page itself stayed where it was.
    assert.equal(new URL(page.url()).origin, running.origin);
  });
  it('the Content-Security-Policy stops what a hole in the sanitiser would let through: inline script, a foreign image', async () => {
    const beacon = await otherServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'image/gif' });
      response.end(pixel);
    });
    const sandbox = cleanup.sandbox();
    const running = await web(sandbox);
    const page = await openPage(running);
    await page.locator('#empty').waitFor({ state: 'visible', ...patience });
    // What a sanitiser that let markup through would put on the page.
    const outcome = await page.evaluate(async (imageUrl) => {
      const violations: string[] = [];
      document.addEventListener('securitypolicyviolation', (event) => violations.push(event.effectiveDirective));
      const script = document.createElement('script');
      script.textContent = 'window.__jpInline = 1';
      document.body.append(script);
      const image = document.createElement('img');
      const image_ = new Promise<string>((resolve) => {
        image.onload = () => resolve('loaded');
        image.onerror = () => resolve('refused');
      });
      image.src = imageUrl;
      document.body.append(image);
      const loaded = await image_;
      // Both refusals are reported before the test reads them.
      while (violations.length < 2 && loaded === 'refused')
        await new Promise((resolve) => requestAnimationFrame(resolve));
      return {
        inline: (window as { __jpInline?: number }).__jpInline ?? null,
        image: loaded,
        violations: violations.sort(),
      };
    }, `${beacon.origin}/beacon.gif`);
    assert.deepEqual(outcome, { inline: null, image: 'refused', violations: ['img-src', 'script-src-elem'] });
    assert.deepEqual(beacon.seen, []);
  });
});

describe('jp web refuses', () => {
  it('a request without the token, with another Host, or from another origin; the token is never a cookie', async () => {
    const sandbox = cleanup.sandbox();
    const running = await web(sandbox);
    const host = `127.0.0.1:${running.port}`;
    const bearer = { authorization: `Bearer ${running.token}` };
    // The token: none, a wrong one, or given any other way than the page gives it.
    assert.equal((await request(running, '/api/runs', { host })).status, 401);
    assert.equal((await request(running, '/api/runs', { host, authorization: 'Bearer wrong' })).status, 401);
    assert.equal((await request(running, `/api/runs?token=${running.token}`, { host })).status, 401);
    assert.equal(
      (await request(running, '/api/runs', { host, cookie: `jp-web-${running.port}=${running.token}` })).status,
      401,
    );
    assert.equal((await request(running, '/api/runs', { host, authorization: running.token })).status, 401);
    assert.equal((await request(running, '/api/runs', { host, ...bearer })).status, 200);
    // The page's own files need no token, hold none, and set no cookie.
    const shell = await request(running, '/', { host });
    assert.equal(shell.status, 200);
    assert.equal(shell.headers['set-cookie'], undefined);
    assert.ok(!shell.body.includes(running.token));
    // DNS rebinding: a name that resolves to 127.0.0.1 is not this server's name, token or not.
    assert.equal((await request(running, '/', { host: `attacker.example:${running.port}` })).status, 403);
    assert.equal(
      (await request(running, '/api/runs', { host: `attacker.example:${running.port}`, ...bearer })).status,
      403,
    );
    // Another origin, or what a browser marks cross-site or same-site (another port): refused, even with the token.
    assert.equal(
      (await request(running, '/api/runs', { host, ...bearer, origin: 'http://attacker.example' })).status,
      403,
    );
    assert.equal(
      (await request(running, '/api/runs', { host, ...bearer, 'sec-fetch-site': 'cross-site' })).status,
      403,
    );
    assert.equal((await request(running, '/api/runs', { host, ...bearer, 'sec-fetch-site': 'same-site' })).status, 403);
    assert.equal((await request(running, '/', { host, 'sec-fetch-site': 'cross-site' })).status, 403);
    // A request that acts must say it comes from this origin, and send JSON.
    const kill = JSON.stringify({ source: 'local', workspace: 'w', conversation: 'jp-c1795789426750005' });
    const json = { 'content-type': 'application/json' };
    assert.equal(
      (
        await request(
          running,
          '/api/kill',
          { host, ...bearer, ...json, origin: 'http://attacker.example' },
          'POST',
          kill,
        )
      ).status,
      403,
    );
    assert.equal((await request(running, '/api/kill', { host, ...bearer, ...json }, 'POST', kill)).status, 403);
    assert.equal(
      (
        await request(
          running,
          '/api/kill',
          { host, ...bearer, origin: running.origin, 'content-type': 'text/plain' },
          'POST',
          kill,
        )
      ).status,
      400,
    );
    assert.equal(
      (await request(running, '/api/kill', { host, ...json, origin: running.origin }, 'POST', kill)).status,
      401,
    );
    // All of it right: it reaches the action (which finds no such workspace).
    const acted = await request(
      running,
      '/api/kill',
      { host, ...bearer, ...json, origin: running.origin },
      'POST',
      kill,
    );
    assert.equal(acted.status, 200);
    assert.deepEqual(JSON.parse(acted.body), { ok: false, message: 'no workspace w on this machine' });
    // A conversation is named by its id, never by a path or an option: refused before any source sees it.
    const page = { host, ...bearer, origin: running.origin };
    for (const conversation of ['../../../etc', '--all', '']) {
      const query = new URLSearchParams({ source: 'local', workspace: 'w', conversation });
      for (const reply of [
        await request(running, `/api/view?${query}`, page),
        await request(running, `/api/diff?${query}`, page),
        await request(
          running,
          '/api/kill',
          { ...page, ...json },
          'POST',
          JSON.stringify({ source: 'local', workspace: 'w', conversation }),
        ),
      ]) {
        assert.equal(reply.status, 400, reply.body);
        assert.match(JSON.parse(reply.body).message, /is not a conversation id/);
      }
    }
  });

  it('a page of another origin, in the browser that holds the page, can neither read the runs, stop one, nor frame the page', async () => {
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
    const workspace = workspaceId(sandbox);
    // The attacker's site: another origin on this machine, visited in the same browser.
    const attacker = await otherServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end('<!doctype html><title>attacker</title>');
    });
    const evil = await page.context().newPage();
    await evil.goto(attacker.origin.replace('127.0.0.1', 'localhost'));
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
    // Nor show it in a frame of its own, to have the person click through it (clickjacking).
    await evil.evaluate((url) => {
      const frame = document.createElement('iframe');
      frame.src = url;
      document.body.append(frame);
      return new Promise((resolve) => frame.addEventListener('load', resolve));
    }, running.url);
    const framed = evil.frames().find((frame) => frame !== evil.mainFrame());
    assert.ok(framed);
    // Refused, the frame shows the browser's error page instead.
    await eventually('the frame to have navigated', () => !['', 'about:blank'].includes(framed.url()), 60_000);
    assert.ok(!framed.url().startsWith(running.origin), framed.url());
    sandbox.write('release', '');
    await row(page, 'target run').locator('.state.idle').waitFor(patience);
  });
});

describe('jp web answers only what it showed', () => {
  it('takes an answer only for the very inquiry a prompting view was asked, with its payload, once', async () => {
    const sandbox = cleanup.sandbox();
    const running = await web(sandbox);
    const conversationId = await detached(
      sandbox,
      {
        steps: [
          { parts: [{ tool_call: { name: 'run_command', arguments: { command: releaseWait } } }] },
          {
            parts: [
              { tool_call: { name: 'fs_create_file', arguments: { path: 'approved.txt', content: 'approved' } } },
            ],
          },
          { parts: [{ text: 'Written.' }] },
        ],
      },
      'bind me',
      unattendedCommands,
    );
    const viewPath = `/api/view?source=local&workspace=${workspaceId(sandbox)}&conversation=${conversationId}`;
    const prompting = await openStream(running, viewPath);
    const promptingId = (await prompting.next((message) => message.type === 'view')).id;
    assert.equal((await prompting.next((message) => message.type === 'opened')).prompting, true);
    const watching = await openStream(running, viewPath);
    const watchingId = (await watching.next((message) => message.type === 'view')).id;
    assert.equal((await watching.next((message) => message.type === 'opened')).prompting, false);
    sandbox.write('release', '');
    const asked = await prompting.next((message) => message.type === 'inquiry');
    assert.equal(asked.inquiry.tool, 'fs_create_file');
    const right = { view: promptingId, inquiry_id: asked.id, inquiry: asked.inquiry, answer: 'run' };
    const refusals = [
      { ...right, view: watchingId },
      { ...right, view: 'view-999' },
      { ...right, inquiry_id: `${asked.id}-other` },
      { ...right, inquiry: { ...asked.inquiry, arguments: { path: 'approved.txt', content: 'something else' } } },
      { ...right, inquiry: { ...asked.inquiry, tool: 'run_command' } },
    ];
    for (const body of refusals) {
      const reply = await postAsPage(running, '/api/answer', body);
      assert.equal(reply.status, 409, `${JSON.stringify(body)}: ${reply.body}`);
    }
    assert.equal(sandbox.exists('approved.txt'), false);
    assert.deepEqual(
      readEvents(sandbox, conversationId).filter((event) => event.type === 'inquiry_response'),
      [],
    );
    assert.equal((await postAsPage(running, '/api/answer', right)).status, 200);
    await prompting.next((message) => message.type === 'closed');
    assert.equal(sandbox.read('approved.txt'), 'approved');
    // The same answer again: that inquiry is not waiting any more.
    assert.equal((await postAsPage(running, '/api/answer', right)).status, 409);
    assert.deepEqual(
      readEvents(sandbox, conversationId)
        .filter((event) => event.type === 'inquiry_response')
        .map((event) => [event.id, event.answer, event.by, event.client]),
      [[asked.id, 'run', 'user', 'jp web']],
    );
    watching.close();
  });

  it('continues a deferred run only for the inquiry, call and payload its log shows', async () => {
    const sandbox = cleanup.sandbox();
    const conversationId = await detached(
      sandbox,
      {
        steps: [
          { parts: [{ tool_call: { name: 'run_command', arguments: { command: 'echo continued > out.txt' } } }] },
          { parts: [{ text: 'Continued.' }] },
        ],
      },
      'deferred and bound',
    );
    await waitingForInput(sandbox);
    const pending = readEvents(sandbox, conversationId).find((event) => event.type === 'inquiry_request')!;
    const running = await web(sandbox);
    const right = {
      source: 'local',
      workspace: workspaceId(sandbox),
      conversation: conversationId,
      inquiry_id: pending.id,
      tool_call_id: pending.tool_call_id,
      inquiry: pending.inquiry,
      answer: 'run',
    };
    const refusals = [
      { ...right, inquiry_id: `${pending.id}-other` },
      { ...right, tool_call_id: `${pending.tool_call_id}-other` },
      { ...right, inquiry: { ...pending.inquiry, arguments: { command: 'echo other > out.txt' } } },
      { ...right, inquiry: undefined },
    ];
    for (const body of refusals) {
      const reply = await postAsPage(running, '/api/continue', body);
      assert.equal(reply.status, 200, reply.body);
      const result = JSON.parse(reply.body);
      assert.equal(result.ok, false, `${JSON.stringify(body)}: ${reply.body}`);
      assert.match(result.message, /no longer waits on that inquiry/);
    }
    assert.equal(sandbox.exists('out.txt'), false);
    assert.deepEqual(
      readEvents(sandbox, conversationId).filter((event) => event.type === 'inquiry_response'),
      [],
    );
    const reply = JSON.parse((await postAsPage(running, '/api/continue', right)).body);
    assert.equal(reply.ok, true, reply.message);
    await eventually('the continued run to write', () => sandbox.exists('out.txt'));
    await eventually('the continued run to end', async () => {
      const listed = await runJp(sandbox, ['conversation', 'ls', '--json']);
      return JSON.parse(listed.stdout)[0]?.state === 'idle';
    });
    assert.equal(sandbox.read('out.txt'), 'continued\n');
  });

  it('a log whose question says something else than its call: the page shows it, and its answer never runs the call', async () => {
    const sandbox = cleanup.sandbox();
    const conversationId = await detached(
      sandbox,
      {
        steps: [
          { parts: [{ tool_call: { name: 'run_command', arguments: { command: 'echo real > out.txt' } } }] },
          { parts: [{ text: 'Ran it.' }] },
        ],
      },
      'a doctored log',
    );
    await waitingForInput(sandbox);
    // Anyone who can write the log (a repository's .jp/conversations/) rewrites the question shown.
    const file = path.join(sandbox.workspace, '.jp', 'conversations', conversationId, 'events.ndjson');
    const doctored = readFileSync(file, 'utf8')
      .split('\n')
      .map((line) => {
        if (!line.includes('"inquiry_request"')) return line;
        const event = JSON.parse(line);
        event.inquiry.arguments = { command: 'echo harmless' };
        return JSON.stringify(event);
      })
      .join('\n');
    writeFileSync(file, doctored);
    const running = await web(sandbox);
    const page = await openPage(running);
    await row(page, 'a doctored log').click();
    const ask = page.locator('.ask.deferred');
    await ask.waitFor(patience);
    assert.match((await ask.textContent()) ?? '', /echo harmless/);
    await ask.getByRole('button', { name: 'Run', exact: true }).click();
    const status = ask.locator('.why').last();
    await eventually('the page to say how continuing went', async () => {
      const said = (await status.textContent()) ?? '';
      return said !== '' && said !== 'Continuing the run…';
    });
    assert.match((await status.textContent()) ?? '', /asked something else than the page showed/);
    assert.equal(sandbox.exists('out.txt'), false);
    assert.deepEqual(
      readEvents(sandbox, conversationId).filter((event) => event.type === 'inquiry_response'),
      [],
    );
    await waitingForInput(sandbox);
  });
});
