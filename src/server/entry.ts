/**
 * The query server's own bundle (dist/server-bundle.cjs): everything a server runs, the provider
 * SDKs included, in one CommonJS file so that code-cache.ts can give V8 a code cache for it. Run by
 * `jp __serve` (src/cli/launcher.ts), never directly.
 */
import { jpVersion } from '../cli/version.ts';
import { serveMain } from './serve.ts';

function flush(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => {
    if (stream.writableLength === 0) return resolve();
    stream.write('', () => resolve());
    setTimeout(resolve, 2000).unref();
  });
}

/** Runs the server to its end; serveMain exits the process itself on every path it knows of. */
export async function startServer(): Promise<void> {
  await serveMain(jpVersion);
  await Promise.all([flush(process.stdout), flush(process.stderr)]);
  process.exit(process.exitCode === undefined ? 0 : Number(process.exitCode));
}
