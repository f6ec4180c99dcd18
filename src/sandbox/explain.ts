/**
 * Escalation facts (pure): whether a failed command's output shows the sandbox stopped it, and
 * why the sandbox cannot start, each in words for the model and the user.
 */

export type SandboxNeed = 'write' | 'network';

const writeSigns = [/read-only file system/i, /\bEROFS\b/];
const networkSigns = [
  /network is unreachable/i,
  /\bENETUNREACH\b/,
  /could not resolve host/i,
  /temporary failure in name resolution/i,
  /name or service not known/i,
  /\bEAI_AGAIN\b/,
  /connection refused/i,
  /\bECONNREFUSED\b/,
];

/** What the sandbox denied a command whose output is `output`, if its output says so. */
export function sandboxDenial(output: string, network: boolean): SandboxNeed | undefined {
  if (writeSigns.some((sign) => sign.test(output))) return 'write';
  if (!network && networkSigns.some((sign) => sign.test(output))) return 'network';
  return undefined;
}

/** The note jp adds to a failed sandboxed command's result, offering the way out. */
export function escalationOffer(need: SandboxNeed, description: string): string {
  const what =
    need === 'write'
      ? 'it tried to write outside the writable directories'
      : 'it tried to reach the network, which is off';
  return (
    `[jp: sandbox] This command ran in the sandbox (${description}) and failed because ${what}. ` +
    'If it must, call run_command again with the same command, "escalate": true and a "justification" saying why; a ' +
    'human decides whether it runs outside the sandbox.'
  );
}

export interface SandboxProblem {
  /** What stops the sandbox from starting. */
  cause: string;
  /** How to make it start, or how to do without it. */
  fix: string;
}

const offFix = 'or, when jp already runs inside a container of your own, set sandbox.mode = "off"';

/** Reads bubblewrap's own error message (its stderr when it could not set up). */
export function bubblewrapProblem(stderr: string): SandboxProblem {
  const message =
    stderr
      .trim()
      .split('\n')
      .find((line) => line.startsWith('bwrap:')) ?? stderr.trim();
  if (/RTM_NEWADDR|loopback/i.test(message)) {
    return {
      cause:
        `bubblewrap cannot set up a network namespace (${message}): AppArmor restricts unprivileged user ` +
        `namespaces (Ubuntu 24.04 and later)`,
      fix:
        `run \`sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0\` (or add an AppArmor profile for ` +
        `bwrap), ${offFix}`,
    };
  }
  if (/make \/ slave|mount/i.test(message) && !/namespace/i.test(message)) {
    return {
      cause: `bubblewrap cannot mount inside this container (${message})`,
      fix: `run the container with --privileged (or --security-opt seccomp=unconfined --cap-add SYS_ADMIN), ${offFix}`,
    };
  }
  if (/namespace|uid map|permission denied|operation not permitted/i.test(message)) {
    return {
      cause: `user namespaces are not available (${message})`,
      fix:
        `enable them: \`sudo sysctl kernel.unprivileged_userns_clone=1\` ` +
        `(Debian), \`sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0\` (Ubuntu ` +
        `24.04), \`sudo sysctl user.max_user_namespaces=15000\`; in Docker, run with --privileged; ${offFix}`,
    };
  }
  return {
    cause: `bubblewrap could not start (${message || 'no message'})`,
    fix: `run \`jp sandbox check\` for details, ${offFix}`,
  };
}

export function noBubblewrap(candidates: readonly string[]): SandboxProblem {
  return {
    cause: `bubblewrap (bwrap) is not installed (not at ${candidates.join(', ')}; PATH is not searched)`,
    fix:
      `install it ` +
      `(\`sudo apt-get install bubblewrap\`, \`sudo dnf install bubblewrap\`, \`sudo pacman -S bubblewrap\`), or ` +
      `set sandbox.bwrap_path in your own config to where it is, ${offFix}`,
  };
}

export function configuredBubblewrapMissing(program: string): SandboxProblem {
  return {
    cause: `sandbox.bwrap_path = ${JSON.stringify(program)} is not an executable file`,
    fix: `correct sandbox.bwrap_path (or remove it: then jp looks at the system paths), ${offFix}`,
  };
}

export function writableBubblewrap(program: string, directory: string): SandboxProblem {
  return {
    cause:
      `the sandbox program ${program} lies in ${directory}, which sandboxed commands may write: a command could ` +
      `replace the sandbox`,
    fix:
      `install bubblewrap from your system's packages, or set sandbox.bwrap_path to a copy outside the workspace ` +
      `and writable_roots, ${offFix}`,
  };
}

export const noSeatbelt: SandboxProblem = {
  cause: 'sandbox-exec (Seatbelt) was not found at /usr/bin/sandbox-exec',
  fix: `it ships with macOS; check the system, ${offFix}`,
};

export function unsupportedPlatform(platform: string): SandboxProblem {
  return {
    cause: `jp has no sandbox engine for ${platform} (only Linux through bubblewrap and macOS through Seatbelt)`,
    fix: `set sandbox.mode = "off" if you accept running commands unconfined`,
  };
}
