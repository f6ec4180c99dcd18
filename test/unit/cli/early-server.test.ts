/**
 * Which command lines start their query server before the command tree loads (startsServer): a
 * query that will run in a server whose tracing is not this process's stderr. Anything else, and
 * anything that only may be, is left to the query's action.
 */
import assert from 'node:assert/strict';
import { chownSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { startEarlyServer, startsServer } from '../../../src/cli/early-server.ts';

describe('startsServer', () => {
  const cases: [string[], NodeJS.ProcessEnv, boolean][] = [
    [['query', 'hello'], {}, true],
    [['q', 'hello'], {}, true],
    [['query', '--new', '-m', 'test', 'hello'], {}, true],
    [['query', '--detach', 'hello'], {}, true],
    [['query', '--log-file', '/tmp/x.log', 'hello'], {}, true],
    // A message that merely contains one of the words is a message.
    [['query', 'what does --no-server do?'], {}, true],
    // After `--` every word is the message's.
    [['query', '--', '--no-server'], {}, true],
    [['query', '--', '--help'], {}, true],
    [['query', '--no-server', 'hello'], {}, false],
    [['query', 'hello', '--no-server'], {}, false],
    [['query', '--help'], {}, false],
    [['query', '-h'], {}, false],
    [['query', '--log-file=-', 'hello'], {}, false],
    [['query', '--log-file', '-', 'hello'], {}, false],
    [['query', 'hello'], { JP_LOG_FILE: '-' }, false],
    // Not a query, or global options before it: the action decides.
    [['--json', 'query', 'hello'], {}, false],
    [['conversation', 'ls'], {}, false],
    [['web'], {}, false],
    [[], {}, false],
  ];
  for (const [argv, environment, expected] of cases) {
    it(`${expected ? 'starts' : 'does not start'} for jp ${argv.join(' ')}${environment.JP_LOG_FILE ? ' (JP_LOG_FILE=-)' : ''}`, () => {
      assert.equal(startsServer(argv, environment), expected);
    });
  }
});

describe('startEarlyServer', () => {
  // Only root can give a directory to another user; elsewhere the reason is printed.
  const skip = process.getuid?.() === 0 ? false : 'not root: cannot make a directory another user owns';
  if (skip) console.log(`# ${skip}`);
  it('starts nothing in a starting/ directory another user owns (they could read or plant its output)', {
    skip,
  }, async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'jp-early-'));
    try {
      const directory = path.join(root, 'jp', 'starting');
      mkdirSync(directory, { recursive: true, mode: 0o755 });
      chownSync(directory, 65534, 65534);
      const server = await startEarlyServer(path.join(root, 'no-such-program.mjs'), { XDG_DATA_HOME: root });
      assert.equal(server, undefined);
      assert.deepEqual(readdirSync(directory), []);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
