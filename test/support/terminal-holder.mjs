/**
 * The first process in a test's pseudo-terminal: runs the program under test as its child, in its
 * own process group (the terminal's foreground group, so typed Ctrl+C and Ctrl+Z reach the program
 * as they would from a shell), and keeps the terminal open after the program exits until the
 * harness has read everything the program wrote. Without it the harness's pty library stops
 * reading a short while after the program exits, and output still in flight is lost.
 *
 *   node terminal-holder.mjs <pid file> <program> [args...]
 *
 * It writes the program's pid to <pid file>, then, once the program has exited, an OSC sequence
 * that terminals ignore, `ESC ] 7770 ; exit ; <code> ; <signal> BEL`, and waits to be killed.
 * Keyboard signals are the program's: this process ignores them. A hang-up (SIGHUP) is passed on.
 */
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { writeFileSync } from 'node:fs';

const [pidFile, file, ...args] = process.argv.slice(2);
for (const signal of ['SIGINT', 'SIGQUIT', 'SIGTSTP', 'SIGTERM']) process.on(signal, () => {});
const child = spawn(file, args, { stdio: 'inherit' });
writeFileSync(pidFile, String(child.pid));
process.on('SIGHUP', () => child.kill('SIGHUP'));
child.on('error', (error) => {
  process.stdout.write(`${error.message}\r\n\u001b]7770;exit;127;0\u0007`);
  setInterval(() => {}, 60_000);
});
child.on('exit', (code, signal) => {
  const number = signal ? constants.signals[signal] : 0;
  process.stdout.write(`\u001b]7770;exit;${code ?? 0};${number}\u0007`);
  setInterval(() => {}, 60_000);
});
