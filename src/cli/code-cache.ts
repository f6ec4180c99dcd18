/**
 * Running one of jp's CommonJS bundles (dist/client-bundle.cjs, dist/server-bundle.cjs) through V8
 * with a code cache kept under $XDG_CACHE_HOME/jp/code-cache/. Used by the launcher (launcher.ts).
 * Node 20 has no compile cache of its own (22.1+ has one, which does not cover code run this way),
 * and compiling jp and a provider SDK from source is most of a short command's time.
 *
 * Contract: the cache only ever saves time. A cache file's name carries the bundle's content hash
 * (set at build time), what it was made for (a command, or the server), the Node version and the
 * architecture; V8 itself rejects data made by another V8 or with other flags. A missing, unreadable
 * or rejected cache means compiling from source, and the cache is (re)written, atomically, when the
 * process exits, replacing those other builds or Node versions made for the same purpose; a cache
 * that cannot be written is ignored.
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import Module from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { Script } from 'node:vm';

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

/** Caches for the same purpose made by other builds or Node versions: nothing will read them again. */
function removeOutdated(directory: string, cacheName: string, current: string): void {
  const pattern = new RegExp(`^${cacheName}-[0-9a-f]{16}-v[0-9.]+-[a-z0-9]+\\.bin$`);
  for (const name of readdirSync(directory)) {
    if (name !== current && pattern.test(name)) rmSync(path.join(directory, name), { force: true });
  }
}

/**
 * Runs a CommonJS bundle and returns its exports. `cacheName` says what the cache is for: each
 * command compiles different functions, and a cache holds those its first run compiled.
 */
export function runBundle<Exports>(bundleFile: string, bundleHash: string, cacheName: string): Exports {
  const cacheFile = path.join(cacheDirectory(process.env), `${cacheName}-${bundleHash}-${process.version}-${process.arch}.bin`);
  const cachedData = readOrUndefined(cacheFile);
  const script = new Script(Module.wrap(readFileSync(bundleFile, 'utf8')), { filename: bundleFile, ...(cachedData ? { cachedData } : {}) });

  if (!cachedData || script.cachedDataRejected) {
    // Written at exit, so that it holds every function this run compiled (a provider SDK's too).
    process.once('exit', () => {
      const temporary = `${cacheFile}.${process.pid}.tmp`;
      try {
        mkdirSync(path.dirname(cacheFile), { recursive: true, mode: 0o700 });
        writeFileSync(temporary, script.createCachedData(), { mode: 0o600 });
        renameSync(temporary, cacheFile);
        removeOutdated(path.dirname(cacheFile), cacheName, path.basename(cacheFile));
      } catch {
        // a read-only home, a full disk: the next run compiles from source again
        rmSync(temporary, { force: true });
      }
    });
  }

  const bundle = { exports: {} as Exports };
  (script.runInThisContext() as (...parameters: unknown[]) => void)(bundle.exports, Module.createRequire(bundleFile), bundle, bundleFile, path.dirname(bundleFile));
  return bundle.exports;
}
