/**
 * Sessions (DESIGN §7): each terminal remembers its active conversation, so two terminals work on
 * two conversations without stepping on each other.
 *
 * The session key is, in order: `$JP_SESSION`; the controlling terminal's session (the session
 * leader's pid and start time, so a reused pid is a new session); a terminal multiplexer pane id
 * (TMUX_PANE, WEZTERM_PANE, TERM_SESSION_ID, ITERM_SESSION_ID). With none of them (cron, CI,
 * setsid) there is no session: nothing is remembered, so each headless query starts a new
 * conversation unless it names one, and `JP_SESSION` chains such runs on purpose.
 */
import { rmSync } from 'node:fs';
import path from 'node:path';
import { readRegularFile, writeFileAtomic } from './files.ts';
import { processStartTime, readProcStat } from './process-identity.ts';

export interface SessionKey {
  key: string;
  source: 'JP_SESSION' | 'terminal' | 'pane';
}

/** This process's session; undefined with no terminal and no `JP_SESSION` (no session at all). */
export function sessionKey(environment: NodeJS.ProcessEnv): SessionKey | undefined {
  const explicit = environment.JP_SESSION;
  if (explicit) return { key: `env-${sanitize(explicit)}`, source: 'JP_SESSION' };
  const stat = readProcStat('self');
  if (stat && stat.ttyNumber !== 0 && stat.sessionId > 0) {
    const leaderStart = processStartTime(stat.sessionId)?.split(':').pop() ?? '0';
    return { key: `tty-${stat.sessionId}-${leaderStart}`, source: 'terminal' };
  }
  for (const name of ['TMUX_PANE', 'WEZTERM_PANE', 'TERM_SESSION_ID', 'ITERM_SESSION_ID']) {
    const value = environment[name];
    if (value) return { key: `pane-${sanitize(`${name}-${value}`)}`, source: 'pane' };
  }
  return undefined;
}

/** What to tell a user who needs a session and has none, for a hint. */
export const noSessionHint =
  'Without a terminal and JP_SESSION there is no session, so nothing is active: each headless `jp query` starts a ' +
  'new conversation (its `--json` result carries the id). Name the conversation (<cid> or ' +
  '--id=<cid>; `jp conversation ls` lists them), or set JP_SESSION=<name> to chain runs.';

function sanitize(value: string): string {
  return value.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 100);
}

interface SessionFile {
  active: string | null;
  history: { id: string; activated_at: string }[];
  source: string;
}

function sessionFile(sessionsDirectory: string, key: SessionKey): string {
  return path.join(sessionsDirectory, `${key.key}.json`);
}

function readSession(sessionsDirectory: string, key: SessionKey): SessionFile | undefined {
  try {
    const parsed = JSON.parse(
      readRegularFile(sessionFile(sessionsDirectory, key))?.toString('utf8') ?? '',
    ) as SessionFile;
    if (parsed && Array.isArray(parsed.history)) return parsed;
  } catch {
    // no session yet, or a damaged file that the next activation replaces
  }
  return undefined;
}

export function activeConversation(sessionsDirectory: string, key: SessionKey | undefined): string | undefined {
  if (!key) return undefined;
  return readSession(sessionsDirectory, key)?.active ?? undefined;
}

/**
 * Makes a conversation the session's active one. Returns how to take that back (for a run that then
 * failed to start): the session file is put back as it was, unless something else changed it since.
 * With no session there is nothing to remember it in: nothing is written.
 */
export function activateConversation(
  sessionsDirectory: string,
  key: SessionKey | undefined,
  conversationId: string,
): () => void {
  if (!key) return () => {};
  const current = readSession(sessionsDirectory, key);
  if (current?.active === conversationId) return () => {};
  const history = [{ id: conversationId, activated_at: new Date().toISOString() }, ...(current?.history ?? [])]
    .filter((entry, index, all) => all.findIndex((other) => other.id === entry.id) === index)
    .slice(0, 50);
  const next: SessionFile = { active: conversationId, history, source: key.source };
  const file = sessionFile(sessionsDirectory, key);
  const written = JSON.stringify(next, null, 2) + '\n';
  writeFileAtomic(file, written);
  return () => {
    let now: string;
    try {
      now = readRegularFile(file)?.toString('utf8') ?? '';
    } catch {
      return;
    }
    if (now !== written) return;
    if (current) writeFileAtomic(file, JSON.stringify(current, null, 2) + '\n');
    else rmSync(file, { force: true });
  };
}

/** Forgets a removed conversation in this session. */
export function deactivateConversation(
  sessionsDirectory: string,
  key: SessionKey | undefined,
  conversationId: string,
): void {
  if (!key) return;
  const current = readSession(sessionsDirectory, key);
  if (!current) return;
  const history = current.history.filter((entry) => entry.id !== conversationId);
  const next: SessionFile = {
    active: current.active === conversationId ? (history[0]?.id ?? null) : current.active,
    history,
    source: current.source,
  };
  writeFileAtomic(sessionFile(sessionsDirectory, key), JSON.stringify(next, null, 2) + '\n');
}
