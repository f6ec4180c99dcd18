/**
 * The program's bundle (dist/client-bundle.cjs): every command but `--version` and `__serve`, in one
 * CommonJS file so that the launcher can give V8 a code cache for it (code-cache.ts). A query's
 * server has already been prespawned by the launcher when this runs.
 */
import { discardPrespawnedServer } from '../server/prespawn.ts';
import { main } from './program.ts';

function flush(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => {
    if (stream.writableLength === 0) return resolve();
    stream.write('', () => resolve());
    setTimeout(resolve, 2000).unref();
  });
}

/** Runs one command line to its end and exits with its code. */
export async function startProgram(argv: string[]): Promise<void> {
  let code: number;
  try {
    code = await main(argv);
  } finally {
    await discardPrespawnedServer();
  }
  await Promise.all([flush(process.stdout), flush(process.stderr)]);
  process.exit(code);
}
