/**
 * The command sandbox of one run: which engine confines commands on this machine, whether it can
 * start (probed once, then remembered), and how to wrap one command in it. A sandbox that cannot
 * start is reported with its cause and fix; a command is never run unconfined because of it (the
 * caller asks to escalate instead).
 */
import { spawnSync, execFile } from 'node:child_process';
import {
  accessSync,
  constants,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  rmdirSync,
  rmSync,
  statSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bubblewrapArguments, bubblewrapProbeArguments } from './bubblewrap.ts';
import { bubblewrapProblem, noBubblewrap, noSeatbelt, unsupportedPlatform, type SandboxProblem } from './explain.ts';
import { planSandbox, type FileSystemFacts, type PlanInput, type SandboxPlan } from './plan.ts';
import { seatbeltArguments } from './seatbelt.ts';
import { describeSandboxSettings, sandboxSettingsOf, type SandboxSettings } from './settings.ts';
import type { Config } from '../config/schema.ts';
import { userConfigFile } from '../config/paths.ts';
import { dataHome, workspaceDirectoryName } from '../workspace/workspace.ts';

export type EngineName = 'bubblewrap' | 'seatbelt';

export type Availability =
  /** `engine` is `none` for mode `off`: nothing to start. */
  | { ok: true; engine: EngineName | 'none'; program: string; version: string | undefined }
  | ({ ok: false; engine: EngineName | undefined; program: string | undefined } & SandboxProblem);

/** A command, as a program and its arguments, to run in `cwd`. */
export interface CommandLine {
  file: string;
  arguments: string[];
  cwd: string;
}

export interface PreparedCommand extends CommandLine {
  /** Variables added to the command's environment (TMPDIR). */
  environment: Record<string, string>;
  /** Removes the private temporary directory; called once the command has ended. */
  cleanup(): void;
}

export interface CommandSandbox {
  readonly settings: SandboxSettings;
  /** `workspace-write, no network`; `off`. */
  readonly description: string;
  /** Whether commands can be confined here; always ok for mode `off`. */
  availability(): Promise<Availability>;
  /** The command wrapped in the engine (as is for mode `off`). Call only when availability() is ok. */
  prepare(command: CommandLine): PreparedCommand;
}

export interface SandboxOptions {
  settings: SandboxSettings;
  toolRoot: string;
  /** Read-only even inside writable directories: `<workspace>/.jp`, jp's user-local state. */
  protectedPaths: string[];
  /** Hidden besides the built-in list (the user's jp config directory). */
  extraHiddenPaths: string[];
  /**
   * Directories made (0700) before a command runs, so that they can be hidden even when they do not
   * exist yet: else a command whose writable directory contains them could create them (the user's
   * jp config, inside a workspace that is the home directory).
   */
  createdBeforeUse?: string[];
  environment: NodeJS.ProcessEnv;
  platform?: NodeJS.Platform;
}

/** The first executable `name` on `searchPath`. */
export function findOnPath(name: string, searchPath: string | undefined): string | undefined {
  for (const directory of (searchPath ?? '').split(path.delimiter)) {
    if (!directory) continue;
    const candidate = path.join(directory, name);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

export const realFileSystem: FileSystemFacts = {
  realPath(file) {
    // Most hidden paths do not exist: lstat says so without the cost of a thrown error.
    if (!lstatSync(file, { throwIfNoEntry: false })) return undefined;
    try {
      return realpathSync.native(file);
    } catch {
      return undefined;
    }
  },
  kind(file) {
    try {
      const stats = lstatSync(file);
      return stats.isDirectory() ? 'directory' : stats.isFile() ? 'file' : 'other';
    } catch {
      return undefined;
    }
  },
};

function run(
  program: string,
  args: string[],
  environment: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(program, args, { env: environment, timeout: 10_000 }, (error, stdout, stderr) => {
      // A program that ran and failed has its exit code in error.code; one that could not start, a string.
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) || (error?.message ?? '') });
    });
  });
}

/** Finds the engine for this platform and checks it can start a command with the run's namespaces. */
export async function probeSandbox(
  environment: NodeJS.ProcessEnv,
  network: boolean,
  platform: NodeJS.Platform = process.platform,
): Promise<Availability> {
  if (platform === 'linux') {
    const program = findOnPath('bwrap', environment.PATH);
    if (!program) return { ok: false, engine: 'bubblewrap', program: undefined, ...noBubblewrap };
    const [version, probe] = await Promise.all([
      run(program, ['--version'], environment),
      run(program, bubblewrapProbeArguments(network), environment),
    ]);
    if (probe.code !== 0) return { ok: false, engine: 'bubblewrap', program, ...bubblewrapProblem(probe.stderr) };
    return {
      ok: true,
      engine: 'bubblewrap',
      program,
      version: version.stdout.trim().replace(/^bubblewrap\s+/, '') || undefined,
    };
  }
  if (platform === 'darwin') {
    const program = '/usr/bin/sandbox-exec';
    try {
      accessSync(program, constants.X_OK);
    } catch {
      return { ok: false, engine: 'seatbelt', program: undefined, ...noSeatbelt };
    }
    return { ok: true, engine: 'seatbelt', program, version: os.release() };
  }
  return { ok: false, engine: undefined, program: undefined, ...unsupportedPlatform(platform) };
}

export function createCommandSandbox(options: SandboxOptions): CommandSandbox {
  const { settings } = options;
  let probed: Promise<Availability> | undefined;
  const availability = (): Promise<Availability> => {
    if (settings.mode === 'off') return Promise.resolve({ ok: true, engine: 'none', program: '', version: undefined });
    probed ??= probeSandbox(options.environment, settings.network, options.platform);
    return probed;
  };
  let known: Availability | undefined;
  return {
    settings,
    description: describeSandboxSettings(settings),
    async availability() {
      known = await availability();
      return known;
    },
    prepare(command): PreparedCommand {
      if (settings.mode === 'off') return { ...command, environment: {}, cleanup: () => {} };
      if (!known?.ok) throw new Error('the sandbox was not checked before a command was prepared');
      for (const directory of options.createdBeforeUse ?? []) mkdirSync(directory, { recursive: true, mode: 0o700 });
      const temporaryDirectory = mkdtempSync(path.join(os.tmpdir(), 'jp-sandbox-'));
      const cleanup = (): void => {
        try {
          rmdirSync(temporaryDirectory);
        } catch {
          rmSync(temporaryDirectory, { recursive: true, force: true });
        }
      };
      const home = options.environment.HOME || os.homedir();
      const input: PlanInput = {
        settings,
        toolRoot: options.toolRoot,
        protectedPaths: options.protectedPaths,
        home,
        extraHiddenPaths: options.extraHiddenPaths,
        temporaryDirectory,
        cwd: command.cwd,
      };
      let plan: SandboxPlan;
      try {
        plan = planSandbox(input, realFileSystem);
      } catch (error) {
        cleanup();
        throw error;
      }
      const args = known.engine === 'seatbelt' ? seatbeltArguments(plan, command) : bubblewrapArguments(plan, command);
      return {
        file: known.program,
        arguments: args,
        cwd: command.cwd,
        environment: { TMPDIR: plan.temporaryDirectory },
        cleanup,
      };
    },
  };
}

/** Hidden besides the built-in list: the user's jp config, and the sockets that would act for the user. */
export function defaultExtraHiddenPaths(environment: NodeJS.ProcessEnv, userConfigDirectory: string): string[] {
  const extra = [userConfigDirectory, '/var/run/docker.sock', '/run/docker.sock'];
  if (environment.SSH_AUTH_SOCK) extra.push(environment.SSH_AUTH_SOCK);
  if (environment.XDG_RUNTIME_DIR) extra.push(environment.XDG_RUNTIME_DIR);
  return extra;
}

/** For `jp sandbox check`: whether each namespace can be created on its own. */
export function namespaceSupport(
  program: string,
  environment: NodeJS.ProcessEnv,
): Record<'user' | 'pid' | 'network', boolean> {
  const works = (flags: string[], mounts: string[] = []): boolean =>
    spawnSync(program, [...flags, '--ro-bind', '/', '/', '--dev', '/dev', ...mounts, '--', 'true'], {
      env: environment,
      stdio: 'ignore',
      timeout: 10_000,
    }).status === 0;
  return {
    user: works(['--unshare-user']),
    pid: works(['--unshare-user', '--unshare-pid'], ['--proc', '/proc']),
    network: works(['--unshare-user', '--unshare-net']),
  };
}

/**
 * The sandboxes of one run: `confined` under the config's `[sandbox]`, `unconfined` for an
 * approved escalation. Read-only inside writable directories: the workspace's `.jp/` and all of
 * jp's user-local state; hidden: the user's jp config directory besides the built-in list.
 */
export function runSandboxes(options: {
  config: Config;
  workspaceRoot: string;
  toolRoot: string;
  environment: NodeJS.ProcessEnv;
}): { confined: CommandSandbox; unconfined: CommandSandbox } {
  const { environment } = options;
  const userConfigDirectory = path.dirname(userConfigFile(environment));
  const common = {
    toolRoot: options.toolRoot,
    protectedPaths: [path.join(options.workspaceRoot, workspaceDirectoryName), path.join(dataHome(environment), 'jp')],
    extraHiddenPaths: defaultExtraHiddenPaths(environment, userConfigDirectory),
    createdBeforeUse: [userConfigDirectory],
    environment,
  };
  const settings = sandboxSettingsOf(options.config);
  return {
    confined: createCommandSandbox({ ...common, settings }),
    unconfined: createCommandSandbox({ ...common, settings: { ...settings, mode: 'off' } }),
  };
}
