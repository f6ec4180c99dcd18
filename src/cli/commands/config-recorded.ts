/**
 * `jp config show --id <cid>`: the settings a conversation recorded (its sealed config_delta
 * events), each with the query that recorded it and when, and those it holds but jp ignores (not
 * recorded by this user's jp; connection settings an older jp recorded). They are the
 * `conversation` layer of the configuration shown with them.
 */
import {
  recordedKeyNote,
  recordedKeys,
  recordedSettings,
  shortened,
  type RecordedKey,
} from '../../conversation/config-delta.ts';
import { readEventLog } from '../../conversation/reader.ts';
import { LogSeal } from '../../conversation/seal.ts';
import { eventsFile } from '../../conversation/store.ts';
import { requireExisting } from '../../conversation/targets.ts';
import type { LoadedConfig } from '../../config/load.ts';
import { dataHome } from '../../workspace/workspace.ts';
import type { CommandContext } from '../context.ts';

export interface ConversationSettings {
  conversationId: string;
  /** The conversation layer, as a run loads it. */
  delta: Record<string, unknown>;
  keys: RecordedKey[];
  ignored: { key: string; reason: string }[];
}

export function readConversationSettings(context: CommandContext, id: string): ConversationSettings {
  const workspace = context.workspace();
  const conversationId = requireExisting(workspace, id);
  const { events } = readEventLog(eventsFile(workspace.conversationsDirectory, conversationId));
  const seal = LogSeal.forUser(dataHome(context.facts.environment)).at({ conversationId, workspaceId: workspace.id });
  const settings = recordedSettings(events, seal);
  return {
    conversationId,
    delta: settings.delta,
    keys: recordedKeys(events, seal),
    ignored: [
      ...settings.connectionKeys.map((key) => ({
        key,
        reason: 'recorded by an older jp: where and how to reach a provider is never taken from a conversation',
      })),
      ...settings.foreignKeys.map((key) => ({
        key,
        reason: 'not recorded by your jp (a copied, committed or edited conversation configures nothing)',
      })),
    ],
  };
}

/** Whether the recorded value is the one in force (no later layer, --cfg or a flag, overrides it). */
function inForce(loaded: LoadedConfig, key: string): boolean {
  return loaded.sources.get(key)?.kind === 'conversation';
}

export function conversationSettingsLines(settings: ConversationSettings, loaded: LoadedConfig): string[] {
  const { conversationId } = settings;
  const lines =
    settings.keys.length === 0
      ? [`# conversation ${conversationId} recorded no settings`]
      : [
          `# settings recorded in conversation ${conversationId}: every query on it starts from them (a flag or -c ` +
            `KEY=VALUE on a query records a new value)`,
          ...settings.keys.map((recorded) => {
            const query = recorded.query === null ? '' : `, by the query ${JSON.stringify(shortened(recorded.query))}`;
            const overridden = inForce(loaded, recorded.key) ? '' : ' (overridden here by the command line)';
            return (
              `#   ${recorded.key} = ${JSON.stringify(recorded.value)}  ` +
              `(recorded ${recorded.recordedAt}${query})${overridden}`
            );
          }),
        ];
  for (const ignored of settings.ignored) lines.push(`#   IGNORED: ${ignored.key} (${ignored.reason})`);
  return lines;
}

export function conversationSettingsJson(
  settings: ConversationSettings,
  loaded: LoadedConfig,
): Record<string, unknown> {
  return {
    id: settings.conversationId,
    recorded: settings.keys.map((recorded) => ({
      key: recorded.key,
      value: recorded.value,
      recorded_at: recorded.recordedAt,
      query: recorded.query,
      in_force: inForce(loaded, recorded.key),
      note: recordedKeyNote(settings.conversationId, recorded),
    })),
    ignored: settings.ignored,
  };
}
