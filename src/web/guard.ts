/**
 * Who may talk to `jp web` (DESIGN §10): a request must name this server in `Host` (a
 * DNS-rebinding page names its own), come from this server's own origin when it says where it comes
 * from (`Origin`, `Sec-Fetch-Site`), and, to read or act on runs, carry the per-start token in
 * `Authorization: Bearer`. The token travels in the printed URL's fragment (never sent to a server)
 * and lives in the page's session storage, which is kept per origin, port included. Never in a
 * cookie: a browser sends the cookies of 127.0.0.1 to every port of it, so another local user's
 * server would be handed it. The page's own files (the shell) are the package's, the same for every
 * user, and are served without it. Pure: it decides from the request's head only.
 */
import { timingSafeEqual } from 'node:crypto';

export interface GuardSettings {
  token: string;
  port: number;
  /** The host names and addresses this server answers to (loopback names, and a --bind address). */
  hosts: readonly string[];
}

export interface RequestHead {
  method: string;
  url: URL;
  headers: { [name: string]: string | string[] | undefined };
}

export type GuardDecision = { ok: true; origin: string } | { ok: false; status: 400 | 401 | 403; reason: string };

/** The page's own files: they hold no data of any run, and need no token. */
export function isShell(method: string, pathname: string): boolean {
  return (
    (method === 'GET' || method === 'HEAD') &&
    (pathname === '/' || pathname === '/index.html' || pathname.startsWith('/assets/'))
  );
}

function header(head: RequestHead, name: string): string | undefined {
  const value = head.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function sameSecret(given: string, token: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Formats a host and port as a Host header says them (`[::1]:8080`). */
export function hostWithPort(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}

export function guard(head: RequestHead, settings: GuardSettings): GuardDecision {
  const host = header(head, 'host')?.toLowerCase();
  const allowed = settings.hosts.map((name) => hostWithPort(name.toLowerCase(), settings.port));
  if (!host || !allowed.includes(host))
    return { ok: false, status: 403, reason: `Host ${JSON.stringify(host ?? '')} is not this server` };
  const origin = `http://${host}`;
  const claimed = header(head, 'origin');
  if (claimed !== undefined && claimed !== origin)
    return { ok: false, status: 403, reason: `a request from another origin (${claimed}) is refused` };
  const site = header(head, 'sec-fetch-site');
  if (site !== undefined && site !== 'same-origin' && site !== 'none')
    return { ok: false, status: 403, reason: `a ${site} request is refused` };
  if (head.method !== 'GET' && head.method !== 'HEAD') {
    // A page of another origin cannot send JSON without asking first (CORS), and is never answered.
    if (claimed === undefined) return { ok: false, status: 403, reason: 'a request that acts must say its origin' };
    if (!(header(head, 'content-type') ?? '').startsWith('application/json'))
      return { ok: false, status: 400, reason: 'a request that acts sends JSON' };
  }
  if (isShell(head.method, head.url.pathname)) return { ok: true, origin };
  const authorization = /^Bearer (\S+)$/.exec(header(head, 'authorization') ?? '');
  if (authorization && sameSecret(authorization[1]!, settings.token)) return { ok: true, origin };
  return { ok: false, status: 401, reason: 'no valid token: open the URL `jp web` printed' };
}
