/**
 * Forking: a new conversation that starts with the turns of another one that are over (completed,
 * or closed unfinished; not discarded ones). An incomplete last turn is not copied (it belongs to its conversation's
 * resume). Reading the source needs no lock.
 * Of the source's recorded settings, only those this user's jp recorded (config-delta.ts) are
 * carried, sealed anew for the fork: a fork of a copied or edited conversation carries none.
 */
import { recordedSettings } from './config-delta.ts';
import type { ConversationEvent } from './events.ts';
import { now } from './events.ts';
import { readEventLog } from './reader.ts';
import type { LogSeal } from './seal.ts';
import { createConversation, eventsFile, readMetadata, type ConversationMetadata } from './store.ts';
import { splitTurns } from './turn-state.ts';

export interface Fork {
  metadata: ConversationMetadata;
  /** Keys of the source's settings that were not carried: not recorded by this user's jp. */
  foreignSettings: string[];
}

/** `workspaceId`: the workspace of both conversations (Workspace.id), part of every seal's place. */
export function forkConversation(
  conversationsDirectory: string,
  sourceId: string,
  seal: LogSeal,
  workspaceId: string,
): Fork {
  const source = readEventLog(eventsFile(conversationsDirectory, sourceId));
  const turns = splitTurns(source.events);
  // Turns that are over and sent to the model: completed, and closed unfinished (not discarded).
  const kept = new Set(
    turns.filter((turn) => turn.final === 'completed' || turn.final === 'interrupted').flatMap((turn) => turn.events),
  );
  const inTurns = new Set(turns.flatMap((turn) => turn.events));
  // Complete turns, plus compactions made between turns (jp conversation compact); the settings
  // this user's jp recorded follow, as one config_delta sealed for the fork.
  const copied: ConversationEvent[] = [];
  /** For each position in the source, the position in the fork of the last copied event up to it. */
  const copiedUpTo: number[] = [];
  for (const event of source.events) {
    const between = event.type === 'compaction' && !inTurns.has(event);
    if (kept.has(event) || between) {
      // A compaction's range names positions in the log: they are the fork's positions now.
      if (event.type === 'compaction') {
        const last = copiedUpTo[event.replaces[1]] ?? -1;
        if (last < 0) continue;
        copied.push({ ...event, replaces: [0, last] });
      } else copied.push(event);
    }
    copiedUpTo.push(copied.length - 1);
  }
  const { delta, foreignKeys } = recordedSettings(source.events, seal.at({ conversationId: sourceId, workspaceId }));
  const sourceTitle = readMetadata(conversationsDirectory, sourceId).title;
  const log = (id: string): string => {
    const settings: ConversationEvent[] =
      Object.keys(delta).length > 0
        ? [seal.at({ conversationId: id, workspaceId }).seal({ type: 'config_delta', timestamp: now(), delta }, copied)]
        : [];
    return [...copied, ...settings].map((event) => JSON.stringify(event) + '\n').join('');
  };
  const metadata = createConversation(conversationsDirectory, {
    forkedFrom: sourceId,
    title: sourceTitle ? `${sourceTitle} (fork)` : null,
    log,
  });
  return { metadata, foreignSettings: foreignKeys };
}
