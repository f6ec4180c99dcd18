/**
 * Who may talk to `jp web` (DESIGN §10): a request must carry the per-start token (in the URL the
 * command printed, then in a same-site cookie), name this server in `Host` (a DNS-rebinding page
 * names its own), and come from this server's own origin when it says where it comes from
 * (`Origin`, `Sec-Fetch-Site`): a page of another site can neither read nor act. Pure: it decides
 * from the request's head only.
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

export type GuardDecision =
  | { ok: true; origin: string; viaQuery: boolean }
  | { ok: false; status: 400 | 401 | 403; reason: string };

export function cookieName(port: number): string {
  return `jp-web-${port}`;
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

function cookieToken(head: RequestHead, port: number): string | undefined {
  const cookies = header(head, 'cookie') ?? '';
  const name = cookieName(port);
  for (const part of cookies.split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=');
  }
  return undefined;
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
  const fromCookie = cookieToken(head, settings.port);
  if (fromCookie !== undefined && sameSecret(fromCookie, settings.token)) return { ok: true, origin, viaQuery: false };
  const fromQuery = head.url.searchParams.get('token');
  if (fromQuery !== null && head.method === 'GET' && sameSecret(fromQuery, settings.token))
    return { ok: true, origin, viaQuery: true };
  return { ok: false, status: 401, reason: 'no valid token: open the URL `jp web` printed' };
}
