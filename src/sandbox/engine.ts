/**
 * The command sandbox of one run: which engine confines commands on this machine, whether it can
 * start (probed once, then remembered), and how to wrap one command in it. A sandbox that cannot
 * start is reported with its cause and fix; a command is never run unconfined because of it (the
 * caller asks to escalate instead).
 */
import { spawnSync, execFile } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bubblewrapArguments, bubblewrapProbeArguments } from './bubblewrap.ts';
import {
  bubblewrapProblem,
  configuredBubblewrapMissing,
  noBubblewrap,
  noSeatbelt,
  unsupportedPlatform,
  writableBubblewrap,
  type SandboxProblem,
} from './explain.ts';
import { isInside, planSandbox, type PlanInput, type SandboxPlan } from './plan.ts';
import { seatbeltArguments } from './seatbelt.ts';
import { describeSandboxSettings, sandboxSettingsOf, type SandboxSettings } from './settings.ts';
import type { Config } from '../config/schema.ts';
import { jpDirectories } from '../config/paths.ts';
import { workspaceDirectoryName } from '../workspace/workspace.ts';
import { createBeforeUse, realFileSystem, userAgentPaths, writableDirectoriesOf } from './hidden.ts';

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
  /** Read-only even inside writable directories: `<workspace>/.jp`. */
  protectedPaths: string[];
  /**
   * jp's own directories (config/paths.ts jpDirectories), listed afresh for each command (a socket
   * directory made since counts): hidden, and made (0700) first when a command could make them
   * (inside a writable directory; a workspace that is the home directory), so that it cannot plant
   * a config, a seal key or a registry there for jp to trust later.
   */
  jpDirectories: () => string[];
  /**
   * Hidden besides the built-in credentials and jp's directories, listed afresh for each command: the sockets that act
   * for the user, histories.
   */
  extraHiddenPaths: () => string[];
  environment: NodeJS.ProcessEnv;
  platform?: NodeJS.Platform;
}

/** Where a system's package manager puts bubblewrap; PATH is never searched (a workspace directory may be on it). */
export const systemBubblewrapPaths: readonly string[] = [
  '/usr/bin/bwrap',
  '/bin/bwrap',
  '/usr/local/bin/bwrap',
  '/run/current-system/sw/bin/bwrap',
];

function isExecutableFile(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/**
 * The bubblewrap program: `sandbox.bwrap_path` when the user set it, else the first of the system
 * paths. One that lies in a directory sandboxed commands may write is refused: a command could
 * replace the sandbox of the next one.
 */
export function findBubblewrap(
  configured: string | undefined,
  writableDirectories: readonly string[],
  candidates: readonly string[] = systemBubblewrapPaths,
): { program: string } | { problem: SandboxProblem } {
  const program = configured ?? candidates.find(isExecutableFile);
  if (program === undefined) return { problem: noBubblewrap(candidates) };
  if (configured !== undefined && !isExecutableFile(configured))
    return { problem: configuredBubblewrapMissing(configured) };
  const real = realFileSystem.realPath(program) ?? program;
  const writable = writableDirectories.find((directory) => {
    const realDirectory = realFileSystem.realPath(directory);
    return realDirectory !== undefined && isInside(real, realDirectory);
  });
  if (writable !== undefined) return { problem: writableBubblewrap(program, writable) };
  return { program };
}

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

/**
 * Finds the engine for this platform and checks it can start a command with the run's namespaces.
 * `writableDirectories`: where sandboxed commands may write, which the engine must not come from.
 * `version`: also ask the engine its version (`jp sandbox check`; a run does not need it).
 */
export async function probeSandbox(
  environment: NodeJS.ProcessEnv,
  settings: Pick<SandboxSettings, 'network' | 'bwrapPath'>,
  writableDirectories: readonly string[],
  options: { platform?: NodeJS.Platform; version?: boolean } = {},
): Promise<Availability> {
  const { network } = settings;
  const platform = options.platform ?? process.platform;
  if (platform === 'linux') {
    const found = findBubblewrap(settings.bwrapPath, writableDirectories);
    if ('problem' in found) return { ok: false, engine: 'bubblewrap', program: settings.bwrapPath, ...found.problem };
    const { program } = found;
    const [version, probe] = await Promise.all([
      options.version ? run(program, ['--version'], environment) : { stdout: '' },
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
    probed ??= probeSandbox(
      options.environment,
      settings,
      writableDirectoriesOf(settings, options.toolRoot, options.environment.HOME || os.homedir()),
      { ...(options.platform ? { platform: options.platform } : {}) },
    );
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
      const home = options.environment.HOME || os.homedir();
      const ownDirectories = options.jpDirectories();
      const extraHiddenPaths = [...ownDirectories, ...options.extraHiddenPaths()];
      createBeforeUse(writableDirectoriesOf(settings, options.toolRoot, home), ownDirectories);
      const temporaryDirectory = mkdtempSync(path.join(os.tmpdir(), 'jp-sandbox-'));
      const cleanup = (): void => {
        try {
          rmdirSync(temporaryDirectory);
        } catch {
          rmSync(temporaryDirectory, { recursive: true, force: true });
        }
      };
      const input: PlanInput = {
        settings,
        toolRoot: options.toolRoot,
        protectedPaths: options.protectedPaths,
        home,
        extraHiddenPaths,
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
 * approved escalation. Read-only inside writable directories: the workspace's `.jp/` (and what git
 * runs, plan.ts); hidden: the user's credentials, jp's own directories and the sockets that act for
 * the user (hidden.ts).
 */
export function runSandboxes(options: {
  config: Config;
  workspaceRoot: string;
  toolRoot: string;
  environment: NodeJS.ProcessEnv;
}): { confined: CommandSandbox; unconfined: CommandSandbox } {
  const { environment } = options;
  const common = {
    toolRoot: options.toolRoot,
    protectedPaths: [path.join(options.workspaceRoot, workspaceDirectoryName)],
    jpDirectories: () => jpDirectories(environment),
    extraHiddenPaths: () => userAgentPaths(environment),
    environment,
  };
  const settings = sandboxSettingsOf(options.config);
  return {
    confined: createCommandSandbox({ ...common, settings }),
    unconfined: createCommandSandbox({ ...common, settings: { ...settings, mode: 'off' } }),
  };
}
