/**
 * A recorded answer binds to what it answered (DESIGN §10): on resume it is re-used only when the
 * recorded inquiry is exactly the one jp raises now for the call and this user's jp sealed the
 * answer; anything else is asked again (here: no client, so the detached policy decides).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ConversationEvent, EventOf } from '../../../src/conversation/events.ts';
import { LogSeal } from '../../../src/conversation/seal.ts';
import { loadConfig } from '../../../src/config/load.ts';
import { testConfigInputs } from '../../support/config.ts';
import { encodeAnswer } from '../../../src/inquiry/answer.ts';
import type { Inquiry } from '../../../src/inquiry/types.ts';
import { InquiryResolver } from '../../../src/turn/inquiries.ts';
import { RecordingHost } from '../../support/recording-host.ts';

const conversationId = 'jp-c1700000000000000';
const workspaceId = 'w-000000000000';
const seal = new LogSeal(Buffer.alloc(32, 1));
const otherUsersSeal = new LogSeal(Buffer.alloc(32, 2));

function resolver(appended: ConversationEvent[], log: readonly ConversationEvent[]): InquiryResolver {
  return new InquiryResolver({
    // No prompting client: the detached policy decides whatever is asked again.
    host: new RecordingHost(),
    config: loadConfig(testConfigInputs()),
    builtinDetached: () => 'deny',
    signal: new AbortController().signal,
    conversationId,
    seal: seal.at({ conversationId, workspaceId }),
    log,
    append: (event) => void appended.push(event),
    answerWithLlm: async () => undefined,
  });
}

const approved: Inquiry = { kind: 'run_tool', tool: 'run_command', arguments: { command: 'npm test' } };

/**
 * A request and its answer as a log holds them: sealed by `signer` for `place` at the positions
 * they had when sealed (after `before`), then found at the positions `shift` more events give them.
 */
function recorded(
  inquiry: Inquiry,
  signer: LogSeal | undefined,
  place: { conversationId: string; workspaceId: string } = { conversationId, workspaceId },
  shift = 0,
) {
  const request: EventOf<'inquiry_request'> = {
    type: 'inquiry_request',
    timestamp: 't',
    id: 'inq-1',
    tool_call_id: 'call_1',
    inquiry,
  };
  const unsealed: EventOf<'inquiry_response'> = {
    type: 'inquiry_response',
    timestamp: 't',
    id: 'inq-1',
    answer: 'run',
    by: 'user',
  };
  const before: ConversationEvent[] = [{ type: 'turn_start', timestamp: 't' }];
  const response = signer ? signer.at(place).seal(unsealed, [...before, request]) : unsealed;
  const moved: ConversationEvent[] = Array.from({ length: shift }, () => ({ type: 'turn_start', timestamp: 't' }));
  return { request, response, log: [...before, ...moved, request, response] };
}

describe('a recorded approval on resume', () => {
  it('is re-used for exactly the inquiry it answered, sealed by this user', async () => {
    const record = recorded(approved, seal);
    const resolution = await resolver([], record.log).resolve('call_1', approved, record);
    assert.equal(resolution.kind, 'answered');
    if (resolution.kind !== 'answered') return;
    assert.equal(encodeAnswer(resolution.answer), 'run');
  });

  for (const [name, asked, record] of [
    ['other arguments', { ...approved, arguments: { command: 'touch PWN' } }, recorded(approved, seal)],
    ['another tool', { ...approved, tool: 'fs_create_file' }, recorded(approved, seal)],
    ['no seal', approved, recorded(approved, undefined)],
    ["another user's seal", approved, recorded(approved, otherUsersSeal)],
    [
      'a seal of another conversation',
      approved,
      recorded(approved, seal, { conversationId: 'jp-c1700000000000999', workspaceId }),
    ],
    [
      'a seal of another workspace',
      approved,
      recorded(approved, seal, { conversationId, workspaceId: 'w-111111111111' }),
    ],
    ['a seal made at another position of the log', approved, recorded(approved, seal, undefined, 1)],
  ] as const) {
    it(`is not re-used with ${name}: the call is asked about again (no human: denied)`, async () => {
      const appended: ConversationEvent[] = [];
      const resolution = await resolver(appended, record.log).resolve('call_1', asked as Inquiry, record);
      assert.equal(resolution.kind, 'answered');
      if (resolution.kind !== 'answered') return;
      assert.deepEqual([encodeAnswer(resolution.answer), resolution.by], ['skip', 'policy']);
      const requests = appended.filter((event) => event.type === 'inquiry_request');
      // The same inquiry is asked again under its id; another inquiry is a new one, recorded as asked.
      if (asked === approved) assert.equal(requests.length, 0);
      else
        assert.deepEqual(
          requests.map((event) => (event as EventOf<'inquiry_request'>).inquiry),
          [asked],
        );
    });
  }
});
