/**
 * Options every command accepts, before or after the command name (DESIGN §2).
 */
import { Option, type Command } from 'commander';
import { UsageError } from '../errors.ts';
import type { RequestedFormat } from '../output/channels.ts';

export interface GlobalOptions {
  cfg: string[];
  format: RequestedFormat;
  verbosity: number;
  logFile: string | undefined;
  logFormat: 'text' | 'json';
  quiet: boolean;
}

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

function increase(_value: string, previous = 0): number {
  return previous + 1;
}

export function addGlobalOptions(command: Command): Command {
  return command
    .option('-c, --cfg <KEY=VALUE>', 'set a configuration key (repeatable; dotted keys, TOML values)', collect)
    .addOption(new Option('-F, --format <format>', 'output format').choices(['auto', 'text', 'text-pretty', 'json']))
    .option('--json', 'same as --format json')
    .option('-v, --verbose', 'tracing to the log file (repeat for more: -v … -vvvvv)', increase)
    .option('--log-file <path>', 'tracing destination (default $XDG_DATA_HOME/jp/logs/jp.log; - for stderr)')
    .addOption(new Option('--log-format <format>', 'tracing format').choices(['text', 'json']))
    .option('-q, --quiet', 'no chrome on stderr except errors');
}

interface RawGlobals {
  cfg?: string[];
  format?: RequestedFormat;
  json?: boolean;
  verbose?: number;
  logFile?: string;
  logFormat?: 'text' | 'json';
  quiet?: boolean;
}

export function readGlobalOptions(command: Command): GlobalOptions {
  const raw = command.optsWithGlobals<RawGlobals>();
  if (raw.json && raw.format && raw.format !== 'json') {
    throw new UsageError('flags_conflict', `--json conflicts with --format ${raw.format}`, {
      hint: 'Use one of them.',
    });
  }
  return {
    cfg: raw.cfg ?? [],
    format: raw.json ? 'json' : (raw.format ?? 'auto'),
    verbosity: raw.verbose ?? 0,
    logFile: raw.logFile,
    logFormat: raw.logFormat ?? 'text',
    quiet: raw.quiet ?? false,
  };
}
