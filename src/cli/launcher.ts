/**
 * The installed `jp` command (dist/jp.cjs). It is CommonJS so that `jp --version` answers without
 * starting Node's ES module loader, a quarter of a bare Node start-up. `jp __serve` (a query server,
 * spawned by `jp query`) runs the server's bundle with a code cache (server/code-cache.ts); every
 * other command line loads the program, the ES module dist/jp.mjs built from main.ts, which is also
 * runnable directly.
 */
import path from 'node:path';
import { jpVersion } from './version.ts';

const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
  process.stdout.write(`jp ${jpVersion}\n`);
} else if (argv[0] === '__serve') {
  // Required here rather than imported, so that --version never loads node:vm and the rest.
  const { runServerBundle } = require('../server/code-cache.ts') as typeof import('../server/code-cache.ts');
  runServerBundle(path.join(path.dirname(process.argv[1]!), 'server-bundle.cjs'));
} else {
  // A path the bundler leaves alone: the program is a separate, code-split build.
  const program = './jp.mjs';
  import(program).catch((error: unknown) => {
    process.stderr.write(`jp: cannot load ${program}: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  });
}
