/** The line a replay or a live run draws for a batch that changed files, or an undo (none for other checkpoints). */
import type { EventOf } from '../conversation/events.ts';
import { oneLine } from './chrome-text.ts';

export function fileChangesLine(event: EventOf<'checkpoint'> | EventOf<'undo'>): string | undefined {
  const files = event.type === 'undo' ? event.files : (event.files ?? []);
  const count = event.type === 'undo' ? event.files.length : (event.changed ?? 0);
  if (event.type === 'checkpoint' && (event.when !== 'after' || count === 0)) return undefined;
  const named = files.slice(0, 3).map((file) => oneLine(file));
  const list = `${named.join(', ')}${count > named.length ? ` and ${count - named.length} more` : ''}`;
  const turn = event.type === 'checkpoint' && event.turn !== undefined ? ` --turn ${event.turn}` : '';
  return event.type === 'undo'
    ? `[undo of ${event.undone.join(', ')}: restored ${list}]`
    : `[changed ${count === 1 ? '1 file' : `${count} files`}: ${list} (jp conversation diff${turn}; undo)]`;
}
