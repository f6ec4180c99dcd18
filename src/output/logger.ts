/**
 * Tracing (DESIGN §5): the fourth channel. It goes to a log file (default
 * `$XDG_DATA_HOME/jp/logs/jp.log`), never to stdout or stderr unless `--log-file=-`. Nothing is
 * logged without `-v`; pino is loaded only then. Every line passes through secret redaction.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { redact } from '../redact.ts';

export type LogFields = Record<string, unknown>;

export interface Logger {
  error(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  debug(message: string, fields?: LogFields): void;
  trace(message: string, fields?: LogFields): void;
}

export interface LogSettings {
  /** Number of -v flags: 0 off, 1 error, 2 warn, 3 info, 4 debug, 5 trace. */
  verbosity: number;
  /** A path, or `-` for stderr. */
  file: string;
  format: 'text' | 'json';
}

const levels = ['silent', 'error', 'warn', 'info', 'debug', 'trace'] as const;

export const silentLogger: Logger = { error() {}, warn() {}, info() {}, debug() {}, trace() {} };

export function defaultLogFile(dataHome: string): string {
  return path.join(dataHome, 'jp', 'logs', 'jp.log');
}

const levelNames: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };

/** Turns one pino JSON line into `time LEVEL message key=value ...`. */
export function jsonLineToText(line: string): string {
  try {
    const record = JSON.parse(line) as Record<string, unknown>;
    const { time, level, msg, pid, hostname, ...rest } = record;
    void hostname;
    const fields = Object.entries(rest)
      .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`)
      .join(' ');
    const stamp = typeof time === 'number' ? new Date(time).toISOString() : String(time);
    return `${stamp} ${(levelNames[level as number] ?? String(level)).padEnd(5)} [${pid}] ${String(msg ?? '')}${fields ? ' ' + fields : ''}\n`;
  } catch {
    return line;
  }
}

export async function createLogger(settings: LogSettings, bindings: LogFields = {}): Promise<Logger> {
  const level = levels[Math.min(Math.max(settings.verbosity, 0), levels.length - 1)]!;
  if (level === 'silent') return silentLogger;
  const { default: pino } = await import('pino');
  let destination: { write(text: string): void };
  if (settings.file === '-') {
    destination = { write: (text) => process.stderr.write(redact(settings.format === 'text' ? jsonLineToText(text) : text)) };
  } else {
    mkdirSync(path.dirname(settings.file), { recursive: true, mode: 0o700 });
    const stream = pino.destination({ dest: settings.file, sync: true, append: true, mkdir: true });
    destination = { write: (text) => stream.write(redact(settings.format === 'text' ? jsonLineToText(text) : text)) };
  }
  const logger = pino(
    {
      level,
      base: { pid: process.pid, ...bindings },
      redact: { paths: ['headers.authorization', 'headers["x-api-key"]', 'apiKey', 'api_key'], censor: '[REDACTED]' },
    },
    destination,
  );
  const wrap = (method: 'error' | 'warn' | 'info' | 'debug' | 'trace') => (message: string, fields?: LogFields) =>
    fields ? logger[method](fields, message) : logger[method](message);
  return { error: wrap('error'), warn: wrap('warn'), info: wrap('info'), debug: wrap('debug'), trace: wrap('trace') };
}
