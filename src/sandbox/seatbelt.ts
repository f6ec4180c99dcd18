/**
 * The macOS engine: a Seatbelt profile for `sandbox-exec -p <profile>` (pure). In SBPL the last
 * matching rule wins, so the profile allows broadly first and denies the exceptions after:
 * reads everywhere but the hidden paths; writes only under the writable directories, except the
 * read-only ones inside them; network only when the plan allows it.
 *
 * Tested as text only: it has not run on a real macOS yet (README says so).
 */
import type { SandboxPlan } from './plan.ts';

/** An SBPL string literal. */
function quoted(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

export function seatbeltProfile(plan: SandboxPlan): string {
  const lines = [
    '(version 1)',
    '(deny default)',
    '(allow process-exec)',
    '(allow process-fork)',
    '(allow signal (target same-sandbox))',
    '(allow process-info* (target same-sandbox))',
    '(allow sysctl-read)',
    '(allow mach-lookup)',
    '(allow ipc-posix-shm)',
    '(allow file-read*)',
    '(allow file-write-data (literal "/dev/null") (literal "/dev/tty") (literal "/dev/zero"))',
    '(allow file-ioctl (literal "/dev/null") (literal "/dev/tty"))',
  ];
  if (plan.emptied) {
    // The home directory unreadable, then what is shown again (the last matching rule wins).
    lines.push(`(deny file-read* (subpath ${quoted(plan.emptied)}))`);
    const shown = [...plan.readable, ...plan.writable];
    if (shown.length > 0)
      lines.push(`(allow file-read* ${shown.map((directory) => `(subpath ${quoted(directory)})`).join(' ')})`);
  }
  if (plan.writable.length > 0)
    lines.push(`(allow file-write* ${plan.writable.map((directory) => `(subpath ${quoted(directory)})`).join(' ')})`);
  // A pinned directory stays writable inside, but itself cannot be renamed or removed.
  if (plan.pinned.length > 0)
    lines.push(`(deny file-write* ${plan.pinned.map((directory) => `(literal ${quoted(directory)})`).join(' ')})`);
  if (plan.readOnly.length > 0)
    lines.push(`(deny file-write* ${plan.readOnly.map((file) => `(subpath ${quoted(file)})`).join(' ')})`);
  if (plan.hidden.length > 0) {
    const rules = plan.hidden
      .map((hidden) =>
        hidden.kind === 'directory' ? `(subpath ${quoted(hidden.path)})` : `(literal ${quoted(hidden.path)})`,
      )
      .join(' ');
    lines.push(`(deny file-read* file-write* ${rules})`);
    // The command's own fresh TMPDIR stays usable even under a hidden directory ($XDG_RUNTIME_DIR).
    lines.push(`(allow file-read* file-write* (subpath ${quoted(plan.temporaryDirectory)}))`);
  }
  if (plan.network) lines.push('(allow network*)', '(allow system-socket)');
  return `${lines.join('\n')}\n`;
}

export function seatbeltArguments(plan: SandboxPlan, command: { file: string; arguments: string[] }): string[] {
  return ['-p', seatbeltProfile(plan), command.file, ...command.arguments];
}
