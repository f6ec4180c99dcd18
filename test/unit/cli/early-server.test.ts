/**
 * Which command lines start their query server before the command tree loads (startsServer): a
 * query that will run in a server whose tracing is not this process's stderr. Anything else, and
 * anything that only may be, is left to the query's action.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startsServer } from '../../../src/cli/early-server.ts';

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
