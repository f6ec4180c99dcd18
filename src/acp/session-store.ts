/**
 * What an editor set in a session and a later connection finds again (`session/load`,
 * `session/resume`, from this editor or another): its mode and its model choice. Kept in the
 * workspace's user-local state (`acp/<cid>.json`, private to the user), never in the workspace: a
 * repository cannot plant a mode that lets tools run without asking. A file that cannot be read
 * is the defaults (mode `ask`), which ask more, never less.
 */
import path from 'node:path';
import { readFileSync } from 'node:fs';
import { writeFileAtomic } from '../workspace/files.ts';
import { userSubdirectory, type Workspace } from '../workspace/workspace.ts';
import { isModeId, type ModeId } from './session-settings.ts';

export interface StoredSession {
  mode?: ModeId;
  model?: string;
}

function fileOf(workspace: Workspace, conversationId: string): string {
  return path.join(userSubdirectory(workspace, 'acp'), `${conversationId}.json`);
}

export function readStoredSession(workspace: Workspace, conversationId: string): StoredSession {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(fileOf(workspace, conversationId), 'utf8'));
  } catch {
    return {};
  }
  const record = typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
  return {
    ...(typeof record.mode === 'string' && isModeId(record.mode) ? { mode: record.mode } : {}),
    ...(typeof record.model === 'string' && record.model !== '' ? { model: record.model } : {}),
  };
}

export function storeSession(workspace: Workspace, conversationId: string, stored: StoredSession): void {
  writeFileAtomic(fileOf(workspace, conversationId), `${JSON.stringify(stored)}\n`);
}
