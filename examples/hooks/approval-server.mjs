#!/usr/bin/env node
// A tiny approval server for jp's PermissionRequest hook (approval-hook.mjs): a page that lists
// the calls waiting for approval, with Approve and Deny, that a phone can open. Everything needs
// the token it prints (or $JP_APPROVAL_TOKEN). It listens on 127.0.0.1 unless --host says
// otherwise: to reach it from a phone, forward the port over SSH or a private network rather than
// opening it to the internet. No dependencies.
//
//   node examples/hooks/approval-server.mjs [--port 8787] [--host 127.0.0.1]
//
// API (Authorization: Bearer <token>): POST /api/requests (the hook's event) → {id};
// GET /api/requests → the pending ones; GET /api/requests/<id>/decision → {behavior, message},
// or 204 after 25 s without one; POST /api/requests/<id> {behavior, message} decides;
// DELETE /api/requests/<id> withdraws. The page: GET /?token=<token>.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';

const option = (name, fallback) => {
  const index = process.argv.indexOf(name);
  return index === -1 ? fallback : process.argv[index + 1];
};
const host = option('--host', '127.0.0.1');
const port = Number(option('--port', '8787'));
const token = process.env.JP_APPROVAL_TOKEN || randomBytes(18).toString('base64url');

/** id → { event, received, decision?, waiters: Set<(decision) => void> } */
const requests = new Map();
let sequence = 0;

function sameToken(given) {
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

function authorized(request, url) {
  return sameToken(request.headers.authorization?.replace(/^Bearer /, '') ?? url.searchParams.get('token') ?? '');
}

function escapeHtml(text) {
  return String(text).replace(
    /[&<>"']/g,
    (character) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[character],
  );
}

async function body(request) {
  let text = '';
  for await (const chunk of request) {
    text += chunk;
    if (text.length > 1_000_000) throw new Error('too large');
  }
  return text;
}

function send(response, status, value, type = 'application/json') {
  const text = type === 'application/json' ? JSON.stringify(value) : value;
  response.writeHead(status, { 'content-type': `${type}; charset=utf-8`, 'cache-control': 'no-store' });
  response.end(text);
}

function decide(id, behavior, message) {
  const entry = requests.get(id);
  if (!entry || (behavior !== 'allow' && behavior !== 'deny')) return false;
  entry.decision = { behavior, ...(message ? { message } : {}) };
  for (const waiter of entry.waiters) waiter(entry.decision);
  entry.waiters.clear();
  return true;
}

function pending() {
  return [...requests.entries()]
    .filter(([, entry]) => !entry.decision)
    .map(([id, entry]) => ({
      id,
      received: entry.received,
      conversation: entry.event.session_id,
      cwd: entry.event.cwd,
      tool: entry.event.jp?.tool ?? entry.event.tool_name,
      kind: entry.event.jp?.inquiry_kind ?? 'run_tool',
      input: entry.event.tool_input ?? entry.event.tool_response ?? null,
    }));
}

function page() {
  const rows = pending()
    .map(
      (item) => `<section>
  <h2>${escapeHtml(item.tool)} <small>${escapeHtml(item.kind)}</small></h2>
  <p>${escapeHtml(item.conversation)} in ${escapeHtml(item.cwd)}</p>
  <pre>${escapeHtml(JSON.stringify(item.input, null, 2))}</pre>
  <form method="post" action="/decide">
    <input type="hidden" name="token" value="${escapeHtml(token)}">
    <input type="hidden" name="id" value="${escapeHtml(item.id)}">
    <button name="behavior" value="allow">Approve</button>
    <button name="behavior" value="deny">Deny</button>
  </form>
</section>`,
    )
    .join('\n');
  return `<!doctype html>
<html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="refresh" content="5"><title>jp approvals</title>
<style>body{font-family:system-ui,sans-serif;margin:1rem;max-width:40rem}pre{white-space:pre-wrap;background:#f4f4f4;padding:.5rem}button{font-size:1.2rem;margin-right:1rem}</style>
</head><body><h1>jp approvals</h1>
${rows || '<p>Nothing is waiting for you.</p>'}
</body></html>`;
}

const server = createServer(async (request, response) => {
  const url = new URL(request.url ?? '/', 'http://localhost');
  if (!authorized(request, url) && !(request.method === 'POST' && url.pathname === '/decide'))
    return send(response, 401, { error: 'a valid token is required' });
  try {
    if (request.method === 'GET' && url.pathname === '/') return send(response, 200, page(), 'text/html');
    if (request.method === 'POST' && url.pathname === '/decide') {
      const form = new URLSearchParams(await body(request));
      if (!sameToken(form.get('token') ?? '')) return send(response, 401, { error: 'a valid token is required' });
      decide(
        form.get('id') ?? '',
        form.get('behavior'),
        `${form.get('behavior') === 'allow' ? 'approved' : 'denied'} on the approval page`,
      );
      response.writeHead(303, { location: `/?token=${encodeURIComponent(token)}` });
      return response.end();
    }
    if (url.pathname === '/api/requests' && request.method === 'POST') {
      const id = `r${++sequence}`;
      requests.set(id, {
        event: JSON.parse(await body(request)),
        received: new Date().toISOString(),
        waiters: new Set(),
      });
      return send(response, 201, { id });
    }
    if (url.pathname === '/api/requests' && request.method === 'GET') return send(response, 200, pending());
    const match = /^\/api\/requests\/([^/]+)(\/decision)?$/.exec(url.pathname);
    const entry = match && requests.get(match[1]);
    if (!match || !entry) return send(response, 404, { error: 'no such request' });
    const id = match[1];
    if (match[2] && request.method === 'GET') {
      if (entry.decision) return send(response, 200, entry.decision);
      const answer = await new Promise((resolve) => {
        const timer = setTimeout(() => {
          entry.waiters.delete(resolve);
          resolve(undefined);
        }, 25_000);
        entry.waiters.add((decision) => {
          clearTimeout(timer);
          resolve(decision);
        });
      });
      if (!answer) return send(response, 204, '', 'text/plain');
      requests.delete(id);
      return send(response, 200, answer);
    }
    if (!match[2] && request.method === 'POST') {
      const { behavior, message } = JSON.parse(await body(request));
      return decide(id, behavior, message)
        ? send(response, 200, { ok: true })
        : send(response, 400, { error: 'behavior is allow or deny' });
    }
    if (!match[2] && request.method === 'DELETE') {
      requests.delete(id);
      return send(response, 200, { ok: true });
    }
    return send(response, 405, { error: 'method not allowed' });
  } catch (error) {
    return send(response, 400, { error: error.message });
  }
});

server.listen(port, host, () => {
  const address = server.address();
  console.log(`approval page: http://${host}:${address.port}/?token=${token}`);
  console.log(`for the hook: JP_APPROVAL_URL=http://${host}:${address.port} JP_APPROVAL_TOKEN=${token}`);
});
