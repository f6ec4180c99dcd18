/**
 * Configuration inputs for tests that load the configuration in the test's own process: the config
 * files given as texts (a snapshot, as a client would send it), so no file is read or written; or
 * read from files the test wrote, as a client reads them.
 */
import os from 'node:os';
import path from 'node:path';
import type { ConfigInputs } from '../../src/config/layers.ts';
import { ConfigFile, ConfigSnapshot, readConfigFileAt, readConfigSnapshot } from '../../src/config/snapshot.ts';
import { configContentHash } from '../../src/config/trust.ts';

/** Where the files of a test snapshot say they are (nothing is there). */
export const testUserConfig = '/home/tester/.config/jp/config.toml';
export const testWorkspaceConfig = '/home/tester/project/.jp/config.toml';

/** A snapshot of these texts; the workspace config's trust hash is that of its text (it names no script). */
export function testSnapshot(files: { user?: string; workspace?: string } = {}): ConfigSnapshot {
  return new ConfigSnapshot(
    new ConfigFile(testUserConfig, files.user),
    files.workspace === undefined
      ? undefined
      : { file: new ConfigFile(testWorkspaceConfig, files.workspace), trustSha256: configContentHash(files.workspace) },
  );
}

/** loadConfig's inputs: no files unless given, an empty environment, no --cfg, no flags. */
export function testConfigInputs(
  overrides: Partial<ConfigInputs> & { user?: string; workspace?: string } = {},
): ConfigInputs {
  const { user, workspace, ...rest } = overrides;
  return {
    snapshot: testSnapshot({
      ...(user !== undefined ? { user } : {}),
      ...(workspace !== undefined ? { workspace } : {}),
    }),
    environment: {},
    cfgArguments: [],
    flags: [],
    ...rest,
  };
}

/**
 * loadConfig's inputs with the config files read from these paths as a client reads them
 * (readConfigSnapshot): the workspace's root is the directory above its `.jp/`.
 */
export function configInputsOfFiles(
  overrides: Partial<ConfigInputs> & { userFile?: string | undefined; workspaceFile?: string | undefined } = {},
): ConfigInputs {
  const { userFile, workspaceFile, ...rest } = overrides;
  const snapshot = readConfigSnapshot(
    readConfigFileAt(userFile ?? path.join(os.tmpdir(), 'jp-no-such-directory', 'config.toml')),
    workspaceFile ? { file: workspaceFile, root: path.dirname(path.dirname(workspaceFile)) } : undefined,
  );
  return { snapshot, environment: {}, cfgArguments: [], flags: [], ...rest };
}
