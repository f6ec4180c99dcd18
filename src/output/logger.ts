/**
 * Tracing (DESIGN §5): the fourth channel. It goes to a log file (default
 * `$XDG_DATA_HOME/jp/logs/jp.log`), never to stdout or stderr unless `--log-file=-`. Nothing is
 * logged without `-v`; pino is loaded only then. Every line passes through secret redaction.
 *
 * Each `-v` adds a level: warnings and errors, then info (what a run did: server, model, tools,
 * decisions, outcome), debug (clients, every persisted event, locks), trace (every protocol message
 * and streamed piece), and wire (the provider's HTTP requests and raw response stream).
 *
 * A log file is created 0600 in a 0700 directory whatever the umask, the default one without
 * following a symlink. A destination that fails (a closed pipe, a full disk) ends logging, never
 * the run.
 */
import { constants, mkdirSync, openSync, writeSync } from 'node:fs';
import path from 'node:path';
import { UsageError } from '../errors.ts';
import type { LogSettings } from '../protocol/run-request.ts';
import type { Secrets } from '../redact.ts';

export type LogFields = Record<string, unknown>;

export interface Logger {
  error(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  debug(message: string, fields?: LogFields): void;
  trace(message: string, fields?: LogFields): void;
  /** -vvvvv: provider HTTP traffic. */
  wire(message: string, fields?: LogFields): void;
  /** Whether `level` is logged, for callers that would otherwise build large fields for nothing. */
  enabled(level: LogLevel): boolean;
}

export type LogLevel = 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'wire';

/** Where and how much a process logs: part of the run request a client sends its server. */
export type { LogSettings };

/** The level each number of -v flags turns on. */
export const verbosityLevels = ['silent', 'warn', 'info', 'debug', 'trace', 'wire'] as const;

/** pino's levels plus `wire`, below trace. */
const wireLevel = 5;

export const silentLogger: Logger = {
  error() {},
  warn() {},
  info() {},
  debug() {},
  trace() {},
  wire() {},
  enabled: () => false,
};

export function defaultLogFile(dataHome: string): string {
  return path.join(dataHome, 'jp', 'logs', 'jp.log');
}

const levelNames: Record<number, string> = {
  [wireLevel]: 'WIRE',
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARN',
  50: 'ERROR',
  60: 'FATAL',
};

/** Turns one pino JSON line into `time LEVEL message key=value ...`. */
export function jsonLineToText(line: string): string {
  try {
    const record = JSON.parse(line) as Record<string, unknown>;
    const { time, level, msg, pid, hostname, ...rest } = record;
    void hostname;
    const fields = Object.entries(rest)
      // One record, one line: a value with spaces, quotes or line breaks is written as a JSON string.
      .map(
        ([key, value]) => `${key}=${typeof value === 'string' && !/[\s"]/.test(value) ? value : JSON.stringify(value)}`,
      )
      .join(' ');
    const stamp = typeof time === 'number' ? new Date(time).toISOString() : String(time);
    return (
      `${stamp} ${(levelNames[level as number] ?? String(level)).padEnd(5)} ` +
      `[${pid}] ${String(msg ?? '')}${fields ? ' ' + fields : ''}\n`
    );
  } catch {
    return line;
  }
}

/** Where log lines go; `write` never throws, and after a failure it drops everything. */
function openDestination(settings: LogSettings): { write(text: string): void } {
  let open = true;
  if (settings.file === '-') {
    // stderr may be a pipe whose reader went away (`jp -v --log-file=- ... 2>&1 | head`).
    process.stderr.on('error', () => (open = false));
    return {
      write(text) {
        if (!open) return;
        try {
          process.stderr.write(text);
        } catch {
          open = false;
        }
      },
    };
  }
  let fd: number;
  try {
    mkdirSync(path.dirname(settings.file), { recursive: true, mode: 0o700 });
    const noFollow = settings.isDefaultFile ? constants.O_NOFOLLOW : 0;
    fd = openSync(settings.file, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | noFollow, 0o600);
  } catch (error) {
    throw new UsageError(
      'log_file_unusable',
      `cannot open the log file ${settings.file}: ${(error as Error).message}`,
      {
        hint: 'Pick another with --log-file <path> (or JP_LOG_FILE), --log-file=- for stderr, or drop -v.',
      },
    );
  }
  return {
    write(text) {
      if (!open) return;
      try {
        writeSync(fd, text);
      } catch {
        open = false;
      }
    },
  };
}

export async function createLogger(settings: LogSettings, secrets: Secrets, bindings: LogFields = {}): Promise<Logger> {
  const level = verbosityLevels[Math.min(Math.max(settings.verbosity, 0), verbosityLevels.length - 1)]!;
  if (level === 'silent') return silentLogger;
  const { default: pino } = await import('pino');
  const destination = openDestination(settings);
  const logger = pino<'wire'>(
    {
      level,
      customLevels: { wire: wireLevel },
      base: { pid: process.pid, ...bindings },
      redact: { paths: ['headers.authorization', 'headers["x-api-key"]', 'apiKey', 'api_key'], censor: '[REDACTED]' },
    },
    {
      write: (text: string) =>
        destination.write(secrets.redact(settings.format === 'text' ? jsonLineToText(text) : text)),
    },
  );
  const method = (name: LogLevel) => (message: string, fields?: LogFields) =>
    fields ? logger[name](fields, message) : logger[name](message);
  return {
    error: method('error'),
    warn: method('warn'),
    info: method('info'),
    debug: method('debug'),
    trace: method('trace'),
    wire: method('wire'),
    enabled: (name) => logger.isLevelEnabled(name),
  };
}
