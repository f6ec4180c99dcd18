/**
 * The installed `jp` command (dist/jp.cjs), CommonJS and tiny:
 * - `jp --version` answers at once;
 * - `jp __serve` (a query server, spawned by `jp query`) runs the server's bundle;
 * - any other command line first prespawns a query server when it will want one (so that the
 *   server's start-up overlaps everything else), then runs the program's bundle.
 * Both bundles run through V8 with a code cache (code-cache.ts). src/cli/main.ts is the same program
 * as an ES module, for running from source.
 */
import path from 'node:path';
import { jpVersion } from './version.ts';

declare const JP_CLIENT_BUNDLE_HASH: string;
declare const JP_SERVER_BUNDLE_HASH: string;

/** What a command's code cache is for: commands compile different functions. */
function commandCacheName(argv: readonly string[]): string {
  const known = /^[a-z][a-z-]{0,20}$/;
  const [first = '', second = ''] = argv;
  if (!known.test(first)) return 'client-other';
  if ((first === 'conversation' || first === 'c') && known.test(second)) return `client-${first}-${second}`;
  if ((first === 'query' || first === 'q') && argv.includes('--no-server')) return `client-${first}-no-server`;
  return `client-${first}`;
}

/**
 * Writes straight to fd 2: creating process.stderr would load Node's stream modules (and, for a
 * pipe, node:net) for one short message. A non-blocking descriptor that is full falls back to it.
 */
function writeToStderr(text: string): void {
  const { writeSync } = require('node:fs') as typeof import('node:fs');
  const bytes = Buffer.from(text);
  let written = 0;
  try {
    while (written < bytes.length) written += writeSync(2, bytes, written);
  } catch {
    process.stderr.write(bytes.subarray(written));
  }
}

const argv = process.argv.slice(2);
const directory = path.dirname(process.argv[1]!);
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
  process.stdout.write(`jp ${jpVersion}\n`);
} else if (argv[0] === '__serve') {
  // Required here rather than imported, so that --version never loads node:vm and the rest.
  const { runBundle } = require('./code-cache.ts') as typeof import('./code-cache.ts');
  runBundle<{ startServer(): Promise<void> }>(path.join(directory, 'server-bundle.cjs'), JP_SERVER_BUNDLE_HASH, 'server').startServer();
} else {
  // The server first: its start-up is what a detached query waits for.
  const { prespawnServer, wantsServer } = require('../server/prespawn.ts') as typeof import('../server/prespawn.ts');
  let refused = false;
  if (wantsServer(argv) && argv.some((argument) => argument === '--id' || argument.startsWith('--id='))) {
    const { checkExplicitTarget } = require('./early-lock-check.ts') as typeof import('./early-lock-check.ts');
    const check = checkExplicitTarget(argv, process.cwd(), process.env);
    if (check.refusal) {
      // Exactly what the program would print and exit with, without loading it (see early-lock-check.ts).
      const { formatErrorForHumans } = require('../errors.ts') as typeof import('../errors.ts');
      writeToStderr(formatErrorForHumans(check.refusal) + '\n');
      process.exitCode = check.refusal.exitCode;
      refused = true;
    } else if (!check.held) prespawnServer(process.argv[1]!);
  } else if (wantsServer(argv)) {
    prespawnServer(process.argv[1]!);
  }
  if (!refused) {
    const { runBundle } = require('./code-cache.ts') as typeof import('./code-cache.ts');
    runBundle<{ startProgram(argv: string[]): Promise<void> }>(path.join(directory, 'client-bundle.cjs'), JP_CLIENT_BUNDLE_HASH, commandCacheName(argv)).startProgram(argv);
  }
}
