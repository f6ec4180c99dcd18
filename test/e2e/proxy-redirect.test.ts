/**
 * Provider requests go where fetch would send them: through the proxy the environment names
 * (`HTTPS_PROXY`/`HTTP_PROXY`, minus `NO_PROXY`), and along a redirect. The proxy is a local one on
 * 127.0.0.1 that tunnels CONNECT requests and forwards absolute-form ones, and records both.
 */
import assert from 'node:assert/strict';
import { createServer, request as httpRequest, type Server } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { startFakeProvider, textStep } from '../support/fake-provider.ts';
import { fakeModelArguments, runJp, useCleanup } from '../support/jp.ts';

interface LocalProxy {
  url: string;
  /** `CONNECT host:port` or `GET http://...` for each request the proxy saw. */
  seen: string[];
  close(): Promise<void>;
}

async function startProxy(): Promise<LocalProxy> {
  const seen: string[] = [];
  const sockets = new Set<net.Socket>();
  const server = createServer((request, response) => {
    seen.push(`${request.method} ${request.url}`);
    const target = new URL(request.url ?? '');
    const upstream = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname + target.search,
        method: request.method,
        headers: request.headers,
      },
      (reply) => {
        response.writeHead(reply.statusCode ?? 502, reply.headers);
        reply.pipe(response);
      },
    );
    upstream.on('error', () => response.destroy());
    request.pipe(upstream);
  });
  server.on('connect', (request, client: net.Socket, head: Buffer) => {
    seen.push(`CONNECT ${request.url}`);
    const [host, port] = (request.url ?? '').split(':');
    const upstream = net.connect(Number(port), host!, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => sockets.delete(socket));
    }
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => closeServer(server, sockets),
  };
}

function closeServer(server: Server, sockets: Set<net.Socket>): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    for (const socket of sockets) socket.destroy();
  });
}

describe('provider requests through a proxy and a redirect', () => {
  const cleanup = useCleanup();

  it('HTTP_PROXY: the request goes through the proxy, and NO_PROXY exempts the host', async () => {
    const provider = await startFakeProvider({ wire: 'openai-chat', steps: [textStep('Answer through the proxy.')] });
    const proxy = await startProxy();
    cleanup.add(() => provider.close());
    cleanup.add(() => proxy.close());
    const sandbox = cleanup.sandbox();
    const model = fakeModelArguments('openai-chat', provider.baseUrl);

    const proxied = await runJp(sandbox, ['query', '--new', ...model.args, 'hello'], {
      env: { ...model.env, HTTP_PROXY: proxy.url },
    });
    assert.equal(proxied.code, 0, proxied.stderr);
    assert.equal(proxied.stdout, 'Answer through the proxy.\n');
    assert.equal(provider.requests.length, 1);
    assert.ok(
      proxy.seen.some(
        (line) => line === `CONNECT 127.0.0.1:${provider.port}` || line === `POST ${provider.baseUrl}/chat/completions`,
      ),
      `the proxy saw: ${JSON.stringify(proxy.seen)}`,
    );

    const before = proxy.seen.length;
    const exempt = await runJp(sandbox, ['query', '--new', '--no-server', ...model.args, 'hello'], {
      env: { ...model.env, http_proxy: proxy.url, NO_PROXY: '127.0.0.1' },
    });
    assert.equal(exempt.code, 0, exempt.stderr);
    assert.equal(exempt.stdout, 'Answer through the proxy.\n');
    assert.equal(provider.requests.length, 2);
    assert.equal(proxy.seen.length, before, 'NO_PROXY kept the request away from the proxy');
  });

  it('a proxy that cannot be reached: a retryable network error (exit 6), nothing sent around it', async () => {
    const provider = await startFakeProvider({ wire: 'openai-chat', steps: [textStep('never')] });
    cleanup.add(() => provider.close());
    const sandbox = cleanup.sandbox();
    const model = fakeModelArguments('openai-chat', provider.baseUrl);
    // A port nobody listens on: take one and close it.
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const result = await runJp(
      sandbox,
      ['query', '--new', ...model.args, '-c', 'assistant.request.max_retries=0', 'hello'],
      {
        env: { ...model.env, HTTP_PROXY: `http://127.0.0.1:${port}` },
      },
    );
    assert.equal(result.code, 6, result.stderr);
    assert.equal(provider.requests.length, 0, 'nothing bypassed the proxy');
    assert.equal(result.stdout, '');
  });

  it('a redirect (307) is followed to the provider, with the request body', async () => {
    const provider = await startFakeProvider({ wire: 'openai-chat', steps: [textStep('Answer after a redirect.')] });
    cleanup.add(() => provider.close());
    const sockets = new Set<net.Socket>();
    const redirector = createServer((request, response) => {
      request.resume();
      response.writeHead(307, {
        location: `${provider.baseUrl}${(request.url ?? '').replace(/^\/old/, '')}`,
        'content-length': '0',
      });
      response.end();
    });
    redirector.on('connection', (socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => redirector.listen(0, '127.0.0.1', resolve));
    cleanup.add(() => closeServer(redirector, sockets));
    const sandbox = cleanup.sandbox();
    const model = fakeModelArguments(
      'openai-chat',
      `http://127.0.0.1:${(redirector.address() as AddressInfo).port}/old`,
    );
    const result = await runJp(sandbox, ['query', '--new', ...model.args, 'hello there'], { env: model.env });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, 'Answer after a redirect.\n');
    assert.equal(provider.requests.length, 1);
    assert.equal(provider.requests[0]!.messages.find((message) => message.role === 'user')?.text, 'hello there');
  });
});
