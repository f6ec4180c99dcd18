/**
 * `jp sandbox check`: what the command sandbox can do on this machine (DESIGN §10): the engine and
 * its version, which namespaces can be made, whether the network is isolated, the configured mode.
 * Exits 1 when the sandbox cannot run here, with the cause and the fix.
 */
import os from 'node:os';
import { namespaceSupport, probeSandbox } from '../../sandbox/engine.ts';
import { writableDirectoriesOf } from '../../sandbox/hidden.ts';
import { describeSandboxSettings, sandboxSettingsOf } from '../../sandbox/settings.ts';
import type { CommandContext } from '../context.ts';

export async function sandboxCheckCommand(context: CommandContext): Promise<number> {
  const loaded = await context.config();
  const settings = sandboxSettingsOf(loaded.value);
  const environment = context.facts.environment;
  const availability = await probeSandbox(
    environment,
    { ...settings, network: false },
    writableDirectoriesOf(settings, context.workspace().toolRoot, environment.HOME || os.homedir()),
    { version: true },
  );
  const namespaces =
    availability.engine === 'bubblewrap' && availability.program
      ? namespaceSupport(availability.program, environment)
      : undefined;
  const modeSource = loaded.sources.get('sandbox.mode')?.label ?? 'built-in default';
  if (context.format === 'json') {
    context.jsonLine(context.stdout, 'sandbox_check', {
      usable: availability.ok,
      engine: availability.engine ?? null,
      program: availability.program ?? null,
      version: availability.ok ? (availability.version ?? null) : null,
      namespaces: namespaces ?? null,
      network_isolation: availability.ok,
      mode: settings.mode,
      mode_source: modeSource,
      network: settings.network,
      ...(availability.ok ? {} : { cause: availability.cause, fix: availability.fix }),
    });
    return availability.ok ? 0 : 1;
  }
  const yes = (value: boolean): string => (value ? 'yes' : 'no');
  const version = availability.ok && availability.version ? ` ${availability.version}` : '';
  const program = availability.program ? ` (${availability.program})` : '';
  const lines = [`engine      ${availability.engine ?? 'none'}${version}${program}`];
  if (namespaces)
    lines.push(
      `namespaces  user: ${yes(namespaces.user)}, pid: ${yes(namespaces.pid)}, network: ${yes(namespaces.network)}`,
    );
  lines.push(`network     ${availability.ok ? 'isolated unless sandbox.network = true' : 'cannot be isolated'}`);
  lines.push(`mode        ${describeSandboxSettings(settings)} (sandbox.mode set by ${modeSource})`);
  if (availability.ok) {
    lines.push(
      settings.mode === 'off'
        ? 'status      usable, but sandbox.mode = "off": commands run unconfined'
        : 'status      usable: commands run confined',
    );
    context.stdout.write(lines.join('\n') + '\n');
    return 0;
  }
  lines.push(`status      UNUSABLE: ${availability.cause}`, `fix         ${availability.fix}`);
  context.stdout.write(lines.join('\n') + '\n');
  return 1;
}
