import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { httpFetch } from '../../src/llm/http-fetch.ts';

describe('httpFetch (the fetch given to the provider SDKs)', () => {
  let server: http.Server;
  let base: string;
  before(async () => {
    server = http.createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => {
        if (request.url === '/echo') {
          response.writeHead(201, { 'content-type': 'application/json', 'x-request-id': 'abc', 'set-cookie': ['a=1', 'b=2'] });
          response.end(JSON.stringify({ method: request.method, body, authorization: request.headers.authorization }));
        } else if (request.url === '/stream') {
          response.writeHead(200, { 'content-type': 'text/event-stream' });
          let sent = 0;
          const timer = setInterval(() => {
            response.write(`data: ${sent++}\n\n`);
            if (sent === 1000) {
              clearInterval(timer);
              response.end();
            }
          }, 5);
          response.on('close', () => clearInterval(timer));
        } else {
          response.writeHead(429, { 'retry-after': '3' });
          response.end('slow down');
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('posts a body with headers, and reads status, headers and body', async () => {
    const response = await httpFetch(`${base}/echo`, { method: 'POST', headers: { Authorization: 'Bearer k', 'Content-Type': 'application/json' }, body: '{"a":1}' });
    assert.equal(response.ok, true);
    assert.equal(response.status, 201);
    assert.equal(response.headers.get('X-Request-Id'), 'abc');
    assert.equal(response.headers.get('set-cookie'), 'a=1, b=2');
    assert.equal(Object.fromEntries([...response.headers])['x-request-id'], 'abc');
    assert.deepEqual(await response.json(), { method: 'POST', body: '{"a":1}', authorization: 'Bearer k' });
  });

  it('reports an HTTP error status without throwing', async () => {
    const response = await httpFetch(`${base}/nope`, { method: 'POST', body: '' });
    assert.equal(response.ok, false);
    assert.equal(response.status, 429);
    assert.equal(response.headers.get('retry-after'), '3');
    assert.equal(await response.text(), 'slow down');
  });

  it('streams the body as a web ReadableStream, and an abort ends it with an AbortError', async () => {
    const controller = new AbortController();
    const response = await httpFetch(`${base}/stream`, { method: 'GET', signal: controller.signal });
    const reader = response.body.getReader();
    const first = await reader.read();
    assert.match(Buffer.from(first.value!).toString(), /^data: 0/);
    controller.abort();
    await assert.rejects(
      (async () => {
        for (;;) if ((await reader.read()).done) return;
      })(),
      (error: Error) => error.name === 'AbortError',
    );
  });

  it('a refused connection is fetch’s TypeError("fetch failed") with the cause, as the SDKs expect', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await assert.rejects(httpFetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: 'x' }), (error: Error) => {
      assert.ok(error instanceof TypeError);
      assert.equal(error.message, 'fetch failed');
      assert.equal((error.cause as NodeJS.ErrnoException).code, 'ECONNREFUSED');
      return true;
    });
  });

  it('an already aborted signal rejects at once', async () => {
    const controller = new AbortController();
    controller.abort();
    await assert.rejects(httpFetch(`${base}/echo`, { signal: controller.signal }), (error: Error) => error.name === 'AbortError');
  });
});

describe('FetchHeaders behaves like the Fetch API Headers', () => {
  it('matches the real Headers on case, order, repeated values and conversions', async () => {
    const { FetchHeaders } = await import('../../src/llm/http-fetch.ts');
    const init = { 'X-B': '2', 'content-type': 'application/json', 'x-a': '1' };
    const ours = new FetchHeaders(init);
    const real = new Headers(init);
    for (const headers of [ours, real]) {
      headers.append('X-A', 'again');
      headers.set('user-agent', 'jp');
      headers.delete('x-b');
    }
    assert.deepEqual([...ours], [...real]);
    assert.deepEqual(Object.fromEntries(ours.entries()), Object.fromEntries(real.entries()));
    assert.equal(ours.get('X-A'), real.get('x-a'));
    assert.equal(ours.get('missing'), null);
    assert.equal(ours.has('CONTENT-TYPE'), true);
    assert.deepEqual([...new FetchHeaders(ours)], [...ours], 'copies another Headers');
    assert.deepEqual([...new FetchHeaders([['B', '1'], ['a', '2']])], [['a', '2'], ['b', '1']], 'accepts pairs');
  });
});
