/**
 * The Linux engine: the bubblewrap (`bwrap`) command line for a plan (pure). New user, pid, ipc
 * and uts namespaces always, a network namespace unless the plan allows the network; the root
 * file system bound read-only, a fresh /dev and /proc (only the sandbox's own processes are in
 * it, so `/proc/<pid>/root` of a process outside cannot be reached), then the writable binds
 * (the pinned ones, bound onto themselves, cannot be renamed or removed), the read-only ones inside
 * them, the hidden paths, so that nothing but the command's fresh private TMPDIR (bound last: a
 * hidden $XDG_RUNTIME_DIR may hold it) uncovers them. bwrap's
 * own init is pid 1: when the command ends, every process it left behind in the namespace dies.
 * The command has no capabilities, even when jp runs as root.
 */
import type { SandboxPlan } from './plan.ts';

export function bubblewrapArguments(plan: SandboxPlan, command: { file: string; arguments: string[] }): string[] {
  const args = [
    '--die-with-parent',
    '--new-session',
    // bwrap keeps a root user's capabilities inside by default, with which a command could unmount
    // what hides a secret or bind what it likes: none, whoever runs jp.
    '--cap-drop',
    'ALL',
    '--unshare-user',
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
  ];
  if (!plan.network) args.push('--unshare-net');
  args.push('--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc');
  if (plan.emptied) args.push('--tmpfs', plan.emptied);
  for (const directory of plan.readable) args.push('--ro-bind', directory, directory);
  const roots = plan.writable.filter((directory) => directory !== plan.temporaryDirectory);
  for (const directory of [...roots, ...plan.pinned]) args.push('--bind', directory, directory);
  for (const file of plan.readOnly) args.push('--ro-bind', file, file);
  for (const hidden of plan.hidden) {
    if (hidden.kind === 'directory') args.push('--tmpfs', hidden.path, '--remount-ro', hidden.path);
    else args.push('--ro-bind', '/dev/null', hidden.path);
  }
  // Last, so that a hidden directory that holds it (a TMPDIR under $XDG_RUNTIME_DIR) does not cover it.
  args.push('--bind', plan.temporaryDirectory, plan.temporaryDirectory);
  // Read-only only now: the binds above made their mount points in it.
  if (plan.emptied) args.push('--remount-ro', plan.emptied);
  args.push('--chdir', plan.cwd, '--', command.file, ...command.arguments);
  return args;
}

/** The arguments of the start-up probe: the namespaces a command gets, around `true`. */
export function bubblewrapProbeArguments(network: boolean): string[] {
  return [
    '--die-with-parent',
    '--unshare-user',
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    ...(network ? [] : ['--unshare-net']),
    '--ro-bind',
    '/',
    '/',
    '--dev',
    '/dev',
    '--proc',
    '/proc',
    '--',
    'true',
  ];
}
