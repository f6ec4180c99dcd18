/**
 * The installed `jp` command (dist/jp.cjs). It is CommonJS so that `jp --version` answers without
 * starting Node's ES module loader, a quarter of a bare Node start-up; every other command line
 * loads the program, the ES module dist/jp.mjs built from main.ts, which is also runnable directly.
 */
import { jpVersion } from './version.ts';

const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
  process.stdout.write(`jp ${jpVersion}\n`);
} else {
  // A path the bundler leaves alone: the program is a separate, code-split build.
  const program = './jp.mjs';
  import(program).catch((error: unknown) => {
    process.stderr.write(`jp: cannot load ${program}: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  });
}
