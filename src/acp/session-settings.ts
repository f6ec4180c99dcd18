/**
 * What an editor can set in a session (DESIGN §14), mapped onto jp's own configuration rather than
 * beside it: a session mode is a preset of policy and sandbox settings (the inquiries a mode lets
 * through are the same `run` settings a config file would), and the model is `assistant.model`.
 * Each becomes a flag layer of the session's runs: a mode is the session's and is never recorded in
 * the conversation; a model choice is the conversation's, recorded like `jp query -m`. Offered to
 * the editor both as ACP session modes and as session config options (`mode`, `model`). Pure.
 */
import type { SessionConfigOption, SessionModeState } from '@agentclientprotocol/sdk';
import type { ConfigInputs } from '../config/layers.ts';

export type Flag = ConfigInputs['flags'][number];

export type ModeId = 'ask' | 'auto' | 'read-only';

interface Mode {
  id: ModeId;
  name: string;
  description: string;
  /** The settings of the mode, above the user's configuration. */
  settings: { path: string[]; value: unknown }[];
}

const modes: readonly Mode[] = [
  {
    id: 'ask',
    name: 'Ask',
    description: 'Your configuration as it is: tools that ask (run = "ask") ask before they run.',
    settings: [],
  },
  {
    id: 'auto',
    name: 'Auto',
    description:
      'Tools run without asking (conversation.tools.defaults.run = "unattended"); a tool you set to ask still asks, ' +
      'commands stay in the sandbox and leaving it still asks.',
    settings: [{ path: ['conversation', 'tools', 'defaults', 'run'], value: 'unattended' }],
  },
  {
    id: 'read-only',
    name: 'Read only',
    description:
      'Nothing is written: fs_create_file and fs_modify_file are not run (run = "skip"), ' +
      'and commands run in a read-only sandbox (sandbox.mode = "read-only").',
    settings: [
      { path: ['sandbox', 'mode'], value: 'read-only' },
      { path: ['conversation', 'tools', 'fs_create_file', 'run'], value: 'skip' },
      { path: ['conversation', 'tools', 'fs_modify_file', 'run'], value: 'skip' },
    ],
  },
];

export const defaultModeId: ModeId = 'ask';

export function isModeId(value: string): value is ModeId {
  return modes.some((mode) => mode.id === value);
}

/** The config option ids jp offers; `mode` mirrors the session modes. */
export const configOptionIds = { mode: 'mode', model: 'model' } as const;

export class SessionSettings {
  mode: ModeId = defaultModeId;
  /** The model the editor chose in this session; undefined: the configuration's (and the conversation's). */
  model: string | undefined;

  /** The flags of the session's next run: the mode's settings (not recorded), then the chosen model. */
  flags(): Flag[] {
    const mode = modes.find((entry) => entry.id === this.mode)!;
    return [
      ...mode.settings.map(
        (setting): Flag => ({
          label: `the editor's session mode "${mode.id}"`,
          path: setting.path,
          value: setting.value,
          recorded: false,
        }),
      ),
      ...(this.model === undefined
        ? []
        : [{ label: "the editor's model choice", path: ['assistant', 'model'], value: this.model }]),
    ];
  }

  modeState(): SessionModeState {
    return {
      currentModeId: this.mode,
      availableModes: modes.map((mode) => ({ id: mode.id, name: mode.name, description: mode.description })),
    };
  }

  /** `currentModel`: the model the next prompt uses; `offered`: the others to pick from. */
  configOptions(currentModel: string, offered: readonly string[]): SessionConfigOption[] {
    const models = [...new Set([currentModel, ...offered])];
    return [
      {
        id: configOptionIds.mode,
        name: 'Mode',
        description: 'What tools may do without asking',
        category: 'mode',
        type: 'select',
        currentValue: this.mode,
        options: modes.map((mode) => ({ value: mode.id, name: mode.name, description: mode.description })),
      },
      {
        id: configOptionIds.model,
        name: 'Model',
        description: 'assistant.model of this conversation (recorded with its next prompt)',
        category: 'model',
        type: 'select',
        currentValue: currentModel,
        options: models.map((model) => ({ value: model, name: model })),
      },
    ];
  }
}
