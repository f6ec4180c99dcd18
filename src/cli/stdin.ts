/**
 * Standard input is query content only, never an answer to a prompt (DESIGN §2). It is read only
 * when it is not a terminal. With a MESSAGE, a pipe or socket gets a bounded wait for its first
 * byte (JP_STDIN_WAIT_MS, default 250 ms): an inherited pipe that never writes cannot hang the run.
 * Once data arrives, or with no MESSAGE (stdin is the message), it is read to end of file.
 */
import { fstatSync, readFileSync } from 'node:fs';

export const defaultStdinWaitMilliseconds = 250;

export interface StdinOptions {
  hasMessage: boolean;
  stdinIsTerminal: boolean;
  waitMilliseconds: number;
}

export async function readStandardInput(options: StdinOptions): Promise<string | undefined> {
  if (options.stdinIsTerminal) return undefined;
  let stat: ReturnType<typeof fstatSync>;
  try {
    stat = fstatSync(0);
  } catch {
    return undefined;
  }
  // /dev/null and other devices carry no content (and /dev/zero would never end).
  if (stat.isCharacterDevice()) return undefined;
  if (stat.isFile()) {
    try {
      return readFileSync(0, 'utf8');
    } catch {
      return undefined;
    }
  }
  if (!stat.isFIFO() && !stat.isSocket()) return undefined;
  return readStream(options.hasMessage ? options.waitMilliseconds : undefined);
}

function readStream(firstByteWaitMilliseconds: number | undefined): Promise<string | undefined> {
  return new Promise((resolve) => {
    const stdin = process.stdin;
    const chunks: Buffer[] = [];
    let timer: NodeJS.Timeout | undefined;
    const finish = (value: string | undefined): void => {
      clearTimeout(timer);
      stdin.removeListener('data', onData);
      stdin.removeListener('end', onEnd);
      stdin.removeListener('error', onEnd);
      stdin.pause();
      if (value === undefined) stdin.destroy();
      resolve(value);
    };
    const onData = (chunk: Buffer): void => {
      clearTimeout(timer);
      chunks.push(chunk);
    };
    const onEnd = (): void => finish(Buffer.concat(chunks).toString('utf8'));
    stdin.on('data', onData);
    stdin.once('end', onEnd);
    stdin.once('error', onEnd);
    if (firstByteWaitMilliseconds !== undefined) {
      timer = setTimeout(() => {
        if (chunks.length === 0) finish(undefined);
      }, firstByteWaitMilliseconds);
    }
  });
}

/** Stdin content goes before the message, separated by a blank line. */
export function combineInput(message: string | undefined, stdin: string | undefined): string | undefined {
  const content = stdin?.replace(/\s+$/, '');
  if (!content) return message;
  if (!message) return content;
  return `${content}\n\n${message}`;
}
