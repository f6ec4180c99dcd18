/**
 * Forking: a new conversation that starts with the complete turns of another one. An incomplete
 * last turn is not copied (it belongs to its conversation's resume). Reading the source needs no lock.
 */
import { readEventLog } from './reader.ts';
import { createConversation, eventsFile, readMetadata, type ConversationMetadata } from './store.ts';
import { splitTurns } from './turn-state.ts';

export function forkConversation(conversationsDirectory: string, sourceId: string): ConversationMetadata {
  const source = readEventLog(eventsFile(conversationsDirectory, sourceId));
  const kept = new Set(splitTurns(source.events).filter((turn) => turn.final === 'completed').flatMap((turn) => turn.events));
  // Complete turns, plus the conversation's recorded settings (config_delta events).
  const lines = source.events.filter((event) => kept.has(event) || event.type === 'config_delta').map((event) => JSON.stringify(event) + '\n');
  const sourceTitle = readMetadata(conversationsDirectory, sourceId).title;
  return createConversation(conversationsDirectory, { forkedFrom: sourceId, title: sourceTitle ? `${sourceTitle} (fork)` : null, log: lines.join('') });
}
