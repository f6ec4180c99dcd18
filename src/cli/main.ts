#!/usr/bin/env node
/**
 * The `jp` command (dist/jp.mjs once built; `node --import tsx src/cli/main.ts` from source). It
 * imports nothing else statically: every command loads what it runs, and the hidden `__serve`
 * command (a query server, spawned by `jp query`) loads only the server. A query starts its server
 * before loading the command tree (cli/early-server.ts).
 */
import { writeSync } from 'node:fs';
import module from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// Node 22.1+ keeps the compiled code of jp's modules between runs, checked against each module's
// content (Node 20 has no such cache). Under $XDG_CACHE_HOME, like the rest of a user's caches; the
// directories Node creates for it are private whatever the umask (its files are 0600).
const enableCompileCache = (module as { enableCompileCache?: (directory: string) => unknown }).enableCompileCache;
if (enableCompileCache) {
  const cacheHome =
    process.env.XDG_CACHE_HOME && path.isAbsolute(process.env.XDG_CACHE_HOME)
      ? process.env.XDG_CACHE_HOME
      : path.join(os.homedir(), '.cache');
  const umask = process.umask(0o077);
  enableCompileCache(path.join(cacheHome, 'jp', 'compile-cache'));
  process.umask(umask);
}

const argv = process.argv.slice(2);
// This file's real location (a symlink such as npm's bin entry is resolved by Node): query servers
// are started from it.
const programFile = fileURLToPath(import.meta.url);

function flush(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => {
    if (stream.writableLength === 0) return resolve();
    stream.write('', () => resolve());
    setTimeout(resolve, 2000).unref();
  });
}

/**
 * jp's own code could not be loaded for lack of file descriptors: said as SystemError says it
 * (src/errors.ts), here, since loading that module would need one too. A query server tells its
 * client too, with the readiness message serveMain sends on failing (ReadyMessage), on `channel`.
 * Anything else is thrown on.
 */
function unloadable(error: unknown, channel?: number): number {
  const errno = error as NodeJS.ErrnoException;
  if (errno.code !== 'EMFILE' && errno.code !== 'ENFILE') throw error;
  const limit = errno.code === 'EMFILE' ? 'the per-process limit (ulimit -n)' : 'the system-wide limit';
  const message = `too many open files (opening ${errno.path ?? "jp's own code"}): ${limit} is reached`;
  const hint = 'Raise the limit (`ulimit -n 1024` or more) and run again.';
  process.stderr.write(`error: ${message}\n  ${hint}\n`);
  if (channel !== undefined) {
    try {
      writeSync(
        channel,
        JSON.stringify({
          ready: false,
          error: { code: `system_${errno.code.toLowerCase()}`, message, hint, exit_code: 1 },
        }) + '\n',
      );
    } catch {
      // the client is gone
    }
  }
  return 1;
}

let code: number;
// `jp --version` alone is answered before the command tree loads (its cost: README, Benchmarks);
// with anything else on the command line it goes through commander like the rest.
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
  const { jpVersion } = await import('../version.ts');
  process.stdout.write(`jp ${jpVersion}\n`);
  code = 0;
} else if (argv[0] === '__serve') {
  code = await import('../server/serve.ts').then(
    ({ serveMain }) => serveMain(),
    (error: unknown) => unloadable(error, 3),
  );
} else {
  // A query's server starts first, so that its start-up overlaps the client's (cli/early-server.ts).
  const early = await import('./early-server.ts').then(
    async ({ startsServer, startEarlyServer }) =>
      startsServer(argv, process.env) ? await startEarlyServer(programFile, process.env) : undefined,
    unloadable,
  );
  code =
    typeof early === 'number'
      ? early
      : await import('./program.ts').then(({ main }) => main(argv, programFile, early), unloadable);
}
await Promise.all([flush(process.stdout), flush(process.stderr)]);
process.exit(code);
