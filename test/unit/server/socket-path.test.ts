/**
 * Socket paths: `processes/<cid>.sock` when it fits the Unix limit, else a short name in the
 * per-user runtime directory that stays what it always was: the first 16 hex digits of the SHA-256
 * of `<workspace id>/<conversation id>` (a server and its clients must agree on it across versions).
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { describe, it } from 'node:test';
import { socketPathFor } from '../../../src/server/socket-path.ts';

const conversationId = 'jp-c1764000000000001';

describe('socketPathFor', () => {
  it('uses the processes directory when the path fits', () => {
    assert.equal(
      socketPathFor('/tmp/p', conversationId, 'w-0123456789ab', {}),
      path.join('/tmp/p', `${conversationId}.sock`),
    );
  });

  it('falls back to a hashed name in the runtime directory when it does not', () => {
    const long = `/tmp/${'d'.repeat(120)}`;
    const expected = createHash('sha256').update(`w-0123456789ab/${conversationId}`).digest('hex').slice(0, 16);
    assert.equal(
      socketPathFor(long, conversationId, 'w-0123456789ab', { XDG_RUNTIME_DIR: '/run/user/1000' }),
      `/run/user/1000/jp/${expected}.sock`,
    );
  });
});
