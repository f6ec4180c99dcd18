/**
 * An OpenSSH server for the tests of `jp web --host`: /usr/sbin/sshd started by the test on
 * 127.0.0.1 with throwaway host and client keys and its own configuration (no PAM, keys only, this
 * user only), and an ssh client configuration that reaches it as `Host <alias>`. Stopped and
 * removed after the test file.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after } from 'node:test';

export interface TestSshServer {
  /** The ssh client options that reach it (`-F <config>`); the host to name is `alias`. */
  sshCommand: string[];
  alias: string;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

function keygen(file: string): void {
  const made = spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', file], { encoding: 'utf8' });
  if (made.status !== 0) throw new Error(`ssh-keygen failed: ${made.stderr}`);
}

export async function startSshServer(): Promise<TestSshServer> {
  const directory = mkdtempSync(path.join(os.tmpdir(), 'jp-sshd-'));
  keygen(path.join(directory, 'host_key'));
  keygen(path.join(directory, 'client_key'));
  writeFileSync(path.join(directory, 'authorized_keys'), readFileSync(path.join(directory, 'client_key.pub')), {
    mode: 0o600,
  });
  const port = await freePort();
  const user = os.userInfo().username;
  // OpenSSH wants its privilege separation directory even for a test server.
  if (process.getuid?.() === 0) mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  writeFileSync(
    path.join(directory, 'sshd_config'),
    [
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${path.join(directory, 'host_key')}`,
      `AuthorizedKeysFile ${path.join(directory, 'authorized_keys')}`,
      `PidFile ${path.join(directory, 'sshd.pid')}`,
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'UsePAM no',
      'StrictModes no',
      'PermitRootLogin prohibit-password',
      `AllowUsers ${user}`,
      'LogLevel ERROR',
      '',
    ].join('\n'),
  );
  const hostKey = readFileSync(path.join(directory, 'host_key.pub'), 'utf8').trim();
  writeFileSync(path.join(directory, 'known_hosts'), `[127.0.0.1]:${port} ${hostKey}\n`);
  const alias = 'jp-test-host';
  writeFileSync(
    path.join(directory, 'ssh_config'),
    [
      `Host ${alias}`,
      '  HostName 127.0.0.1',
      `  Port ${port}`,
      `  User ${user}`,
      `  IdentityFile ${path.join(directory, 'client_key')}`,
      '  IdentitiesOnly yes',
      `  UserKnownHostsFile ${path.join(directory, 'known_hosts')}`,
      '  StrictHostKeyChecking yes',
      '  LogLevel ERROR',
      '',
    ].join('\n'),
  );
  const server = spawn('/usr/sbin/sshd', ['-D', '-e', '-f', path.join(directory, 'sshd_config')], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let said = '';
  server.stderr!.on('data', (chunk: Buffer) => (said += chunk.toString()));
  after(() => {
    server.kill('SIGTERM');
    rmSync(directory, { recursive: true, force: true });
  });
  // Ready when it accepts a connection (a safety limit, not a timed assertion).
  const deadline = Date.now() + 30_000;
  for (;;) {
    const accepted = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.end();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (accepted) break;
    if (server.exitCode !== null || Date.now() > deadline) throw new Error(`sshd did not start: ${said}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { sshCommand: ['ssh', '-F', path.join(directory, 'ssh_config')], alias };
}
