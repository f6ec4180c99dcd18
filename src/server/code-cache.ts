/**
 * Running the query server's bundle (dist/server-bundle.cjs, built from entry.ts) through V8 with a
 * code cache kept under $XDG_CACHE_HOME/jp/code-cache/. Used by the launcher for `jp __serve`.
 * Node 20 has no compile cache of its own (22.1+ does, and jp turns it on there), and compiling the
 * server and a provider SDK from source is most of a server's start-up, which every query waits for.
 *
 * Contract: the cache only ever saves time. Its file name carries the bundle's content hash (set at
 * build time), the Node version and the architecture; V8 itself rejects data made by another V8 or
 * with other flags. A missing, unreadable or rejected cache means compiling from source, and the
 * cache is (re)written, atomically, when the process exits; a cache that cannot be written is
 * ignored.
 */
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import Module from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { Script } from 'node:vm';

declare const JP_SERVER_BUNDLE_HASH: string;

function cacheDirectory(environment: NodeJS.ProcessEnv): string {
  const base = environment.XDG_CACHE_HOME && path.isAbsolute(environment.XDG_CACHE_HOME) ? environment.XDG_CACHE_HOME : path.join(os.homedir(), '.cache');
  return path.join(base, 'jp', 'code-cache');
}

function readOrUndefined(file: string): Buffer | undefined {
  try {
    return readFileSync(file);
  } catch {
    return undefined;
  }
}

export function runServerBundle(bundleFile: string): void {
  const cacheFile = path.join(cacheDirectory(process.env), `server-${JP_SERVER_BUNDLE_HASH}-${process.version}-${process.arch}.bin`);
  const cachedData = readOrUndefined(cacheFile);
  const script = new Script(Module.wrap(readFileSync(bundleFile, 'utf8')), { filename: bundleFile, ...(cachedData ? { cachedData } : {}) });

  if (!cachedData || script.cachedDataRejected) {
    // Written at exit, so that it holds the functions this run compiled (the SDK's among them).
    process.once('exit', () => {
      const temporary = `${cacheFile}.${process.pid}.tmp`;
      try {
        mkdirSync(path.dirname(cacheFile), { recursive: true, mode: 0o700 });
        writeFileSync(temporary, script.createCachedData(), { mode: 0o600 });
        renameSync(temporary, cacheFile);
      } catch {
        // a read-only home, a full disk: the next server compiles from source again
        rmSync(temporary, { force: true });
      }
    });
  }

  const bundle = { exports: {} as { startServer?: () => Promise<void> } };
  (script.runInThisContext() as (...parameters: unknown[]) => void)(bundle.exports, Module.createRequire(bundleFile), bundle, bundleFile, path.dirname(bundleFile));
  void bundle.exports.startServer!();
}
