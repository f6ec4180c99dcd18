/**
 * `jp web` started as a user starts it, for the tests: the URL it prints (with its token), and a
 * stop that interrupts it as Ctrl+C does.
 */
import type { ChildProcess } from 'node:child_process';
import { collect, type RunResult, type Sandbox, startJp } from './jp.ts';

export interface RunningWeb {
  url: string;
  origin: string;
  port: number;
  token: string;
  process: ChildProcess;
  stop(): Promise<RunResult>;
}

export async function startWeb(
  sandbox: Sandbox,
  args: string[] = [],
  options: { env?: NodeJS.ProcessEnv; cwd?: string } = {},
): Promise<RunningWeb> {
  const child = startJp(sandbox, ['web', ...args], { ...options, stdin: 'null' });
  const result = collect(child, ['web', ...args], 600_000);
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const line = /^(http:\/\/\S+)\n/m.exec(output);
      if (line) resolve(line[1]!);
    });
    void result.then((ended) => reject(new Error(`jp web ended before it printed its URL: ${ended.stderr}`)));
  });
  const parsed = new URL(url);
  let stopped: Promise<RunResult> | undefined;
  return {
    url,
    origin: parsed.origin,
    port: Number(parsed.port),
    token: parsed.searchParams.get('token')!,
    process: child,
    stop() {
      if (!stopped) {
        child.kill('SIGINT');
        stopped = result;
      }
      return stopped;
    },
  };
}
