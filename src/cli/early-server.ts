/**
 * A query's server started before anything else of the query (EarlyServer, launch/spawn.ts): from
 * main.ts before the command tree loads when the command line alone says the query will want one,
 * else from the query's action. Either way the query's action decides with everything parsed, and a
 * server it does not want is ended (EarlyServer.discard): this is only about when the server starts.
 */
import path from 'node:path';
import type { EarlyServer } from '../launch/spawn.ts';

/**
 * Whether the command line is a query that will run in a server whose tracing is not our stderr:
 * `query` (or `q`) first, and before `--` none of `--no-server`, `--help`, `-h`, `--log-file -`.
 * A word that only looks like one of these (an option's value) makes it answer no: the action then
 * starts the server itself.
 */
export function startsServer(argv: readonly string[], environment: NodeJS.ProcessEnv): boolean {
  if (argv[0] !== 'query' && argv[0] !== 'q') return false;
  const endOfOptions = argv.indexOf('--');
  const words = argv.slice(1, endOfOptions === -1 ? undefined : endOfOptions);
  const logToStderr =
    environment.JP_LOG_FILE === '-' ||
    words.some((word, index) => word === '--log-file=-' || (word === '--log-file' && words[index + 1] === '-'));
  return !logToStderr && !words.some((word) => word === '--no-server' || word === '--help' || word === '-h');
}

/**
 * Starts a query server from `programFile`, its working directory and output in jp's private
 * `starting/` directory; undefined when that cannot be done (an unusable data directory, or one
 * another user owns or can write), which the query itself then reports in its format or starts its
 * server the usual way.
 */
export async function startEarlyServer(
  programFile: string,
  environment: NodeJS.ProcessEnv,
): Promise<EarlyServer | undefined> {
  try {
    // Loaded here: every command reads startsServer, few start a server.
    const [{ EarlyServer }, { assertSafeDirectory, ensurePrivateDirectory }, { dataHome }] = await Promise.all([
      import('../launch/spawn.ts'),
      import('../workspace/files.ts'),
      import('../workspace/workspace.ts'),
    ]);
    const directory = path.join(dataHome(environment), 'jp', 'starting');
    ensurePrivateDirectory(directory);
    // The server's output goes there: never into a directory someone else owns or can write.
    assertSafeDirectory(directory);
    return EarlyServer.start(programFile, { environment, directory });
  } catch {
    return undefined;
  }
}
