/**
 * The program as an ES module, for running from source (`node --import tsx src/cli/main.ts ...`).
 * The shipped command is the launcher (launcher.ts → dist/jp.cjs), which runs the same program from
 * its bundle (entry.ts). It stays tiny: `--version` answers before anything is imported, the hidden
 * `__serve` command starts a query server, everything else loads the CLI program.
 */
import module from 'node:module';
import { fileURLToPath } from 'node:url';
import { discardPrespawnedServer, prespawnServer, wantsServer } from '../server/prespawn.ts';
import { recordProgramFile, serverEntryFile } from './program-file.ts';
import { jpVersion } from './version.ts';

// Node 22.1+ keeps compiled code between runs (a large share of jp's start-up); Node 20 has no such cache.
(module as { enableCompileCache?: () => unknown }).enableCompileCache?.();

recordProgramFile(fileURLToPath(import.meta.url));

async function run(argv: string[]): Promise<number> {
  if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
    process.stdout.write(`jp ${jpVersion}\n`);
    return 0;
  }
  if (wantsServer(argv) && !(await explicitTargetIsLocked(argv))) prespawnServer(serverEntryFile());
  if (argv[0] === '__serve') {
    const { serveMain } = await import('../server/serve.ts');
    await serveMain(jpVersion);
    return process.exitCode === undefined ? 0 : Number(process.exitCode);
  }
  const { main } = await import('./program.ts');
  try {
    return await main(argv);
  } finally {
    await discardPrespawnedServer();
  }
}

/** Whether `--id=<cid>` names a conversation a live process holds (the query will be refused). */
async function explicitTargetIsLocked(argv: string[]): Promise<boolean> {
  if (!argv.some((argument) => argument === '--id' || argument.startsWith('--id='))) return false;
  const check = await import('./early-lock-check.ts');
  return check.checkExplicitTarget(argv, process.cwd(), process.env).held;
}

function flush(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => {
    if (stream.writableLength === 0) return resolve();
    stream.write('', () => resolve());
    setTimeout(resolve, 2000).unref();
  });
}

const code = await run(process.argv.slice(2));
await Promise.all([flush(process.stdout), flush(process.stderr)]);
process.exit(code);
