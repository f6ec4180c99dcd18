/**
 * Socket fuzzing of a running query server, shared by the test suite and bench/attach.ts: many
 * concurrent connections send malformed frames (bad JSON, unknown types, wrong versions, 16 MiB
 * lines, half frames then close, garbage after a valid hello), some clients never read, some die
 * mid-stream. Only the offending connection may suffer.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import net from 'node:net';

export interface FuzzReport {
  frames: number;
  connections: number;
  /** Connections the server closed on its own (it should close every malformed one). */
  closedByServer: number;
}

/** Frames the server must survive; `capability` is the run's, which some of them show and some lack. */
const malformed: ((capability: string) => string | Buffer)[] = [
  (capability) => `{"type":"hello","version":2,"capability":"${capability}","can_prompt":true\n`,
  () => 'not json at all\n',
  () => '{"type":"no_such_message"}\n',
  () => '{"type":"inquiry_response"}\n',
  () => '[1,2,3]\n',
  () => '"just a string"\n',
  () => '{"type":"signal","kind":"nope"}\n',
  () => Buffer.from([0xff, 0xfe, 0x00, 0x0a]),
  (capability) => `{"type":"hello","version":"2","capability":"${capability}","can_prompt":true}\n`,
  (capability) =>
    `{"type":"hello","version":2,"capability":"${capability}","can_prompt":false,"read_only":true}\n{"type":"hello","version":2,"can_prompt":false}\n`,
  (capability) =>
    `{"type":"hello","version":2,"capability":"${capability}","can_prompt":false,"read_only":true}\n{"type":"interrupt_action","action":"explode"}\n`,
  (capability) =>
    `{"type":"hello","version":2,"capability":"${capability}","can_prompt":false,"read_only":true}\n\u0000\u0000\u0000\n`,
  // Without the capability, or with a wrong one: refused at once, whatever follows.
  () => '{"type":"hello","version":2,"can_prompt":true}\n{"type":"shutdown"}\n',
  (capability) =>
    `{"type":"hello","version":2,"capability":"${capability.slice(1)}x","can_prompt":true}\n{"type":"shutdown"}\n`,
];

/** Sends one frame on a fresh connection; resolves when the connection ends. */
function oneFrame(socketPath: string, frame: string | Buffer, mode: 'close-after' | 'half-frame'): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.createConnection(socketPath);
    let closedByServer = true;
    const timer = setTimeout(() => {
      closedByServer = false;
      socket.destroy();
    }, 5000);
    socket.on('error', () => {});
    socket.on('data', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(closedByServer);
    });
    socket.on('connect', () => {
      if (mode === 'half-frame') {
        socket.write(
          typeof frame === 'string' ? frame.slice(0, Math.max(1, Math.floor(frame.length / 2))) : frame.subarray(0, 1),
        );
        closedByServer = false;
        socket.end();
      } else socket.write(frame);
    });
  });
}

/** A 16 MiB line without a newline: the server must cut the connection at 1 MiB. */
function hugeLine(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.createConnection(socketPath);
    const chunk = Buffer.alloc(1024 * 1024, 'a');
    let sent = 0;
    socket.on('error', () => {});
    socket.on('data', () => {});
    socket.on('close', () => resolve(sent < 16));
    socket.on('connect', () => {
      const pump = (): void => {
        while (sent < 16) {
          sent++;
          if (!socket.write(chunk)) {
            socket.once('drain', pump);
            return;
          }
        }
        socket.end();
      };
      pump();
    });
  });
}

/** A client that says hello as a viewer and never reads: the server must not block on it. */
export function neverReadingClient(socketPath: string, capability: string): net.Socket {
  const socket = net.createConnection(socketPath);
  socket.on('error', () => {});
  socket.on('connect', () => {
    socket.write(JSON.stringify({ type: 'hello', version: 2, capability, can_prompt: false, read_only: true }) + '\n');
    socket.pause();
  });
  return socket;
}

/** A real attach client process, SIGKILLed mid-stream. */
export async function killedClient(
  jpBinary: string,
  conversationId: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<void> {
  const child = spawn(process.execPath, [jpBinary, 'conversation', 'attach', '--read-only', conversationId], {
    cwd,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await new Promise<void>((resolve) => {
    child.stdout!.once('data', () => resolve());
    setTimeout(resolve, 3000);
  });
  child.kill('SIGKILL');
  await new Promise((resolve) => child.on('close', resolve));
}

export async function fuzzServer(
  socketPath: string,
  capability: string,
  options: { frames: number; concurrency: number },
): Promise<FuzzReport> {
  let frames = 0;
  let connections = 0;
  let closedByServer = 0;
  const worker = async (index: number): Promise<void> => {
    while (frames < options.frames) {
      frames++;
      connections++;
      let closed: boolean;
      if (frames % 2000 === 1) closed = await hugeLine(socketPath);
      else if (frames % 7 === 0)
        closed =
          (await oneFrame(socketPath, malformed[(frames + index) % malformed.length]!(capability), 'half-frame')) ||
          true;
      else
        closed = await oneFrame(socketPath, malformed[(frames + index) % malformed.length]!(capability), 'close-after');
      if (closed) closedByServer++;
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, (_, index) => worker(index)));
  return { frames, connections, closedByServer };
}

export function residentMemoryKilobytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
}

export function openFileDescriptors(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length;
}
