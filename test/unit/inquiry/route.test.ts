import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { route } from '../../../src/inquiry/route.ts';
import type { DetachedPolicy, Inquiry, PromptAction, Question } from '../../../src/inquiry/types.ts';

function question(exclusive: boolean, withDefault: boolean): Question {
  return { id: 'q', text: 'Proceed?', answer_type: 'boolean', exclusive, ...(withDefault ? { default: true } : {}) };
}

const inquiries: Record<string, Inquiry> = {
  run: { kind: 'run_tool', tool: 't', arguments: {} },
  deliver: { kind: 'deliver_tool_result', tool: 't', result: 'r' },
  escalate: { kind: 'escalate', tool: 't', arguments: {}, needs: 'unconfined', justification: 'needs the network' },
  question: { kind: 'tool_question', tool: 't', question: question(false, false) },
  exclusiveQuestion: { kind: 'tool_question', tool: 't', question: question(true, false) },
  questionWithDefault: { kind: 'tool_question', tool: 't', question: question(false, true) },
  exclusiveQuestionWithDefault: { kind: 'tool_question', tool: 't', question: question(true, true) },
};

const policies: DetachedPolicy[] = ['auto', 'defaults', 'deny', 'defer'];
const overrides: (boolean | undefined)[] = [undefined, true, false];

/**
 * The expected action of every cell with no client, written out as the table of DESIGN §4:
 * exclusivity is the config override when set, else the question's own flag, and only matters
 * for questions under `auto`.
 */
function expected(name: string, policy: DetachedPolicy, override: boolean | undefined): PromptAction {
  if (policy === 'defer') return 'Defer';
  if (policy === 'deny') return 'Fail';
  const isQuestion = name !== 'run' && name !== 'deliver' && name !== 'escalate';
  if (policy === 'defaults') {
    if (!isQuestion) return 'Fail';
    return name === 'questionWithDefault' || name === 'exclusiveQuestionWithDefault' ? 'UseDefault' : 'Fail';
  }
  // auto
  if (name === 'run' || name === 'escalate') return 'AutoApprove';
  if (name === 'deliver') return 'AutoDeliver';
  const ownExclusive = name === 'exclusiveQuestion' || name === 'exclusiveQuestionWithDefault';
  const exclusive = override ?? ownExclusive;
  return exclusive ? 'Fail' : 'LlmInquiry';
}

describe('route(): every inquiry kind × hasClient × policy × exclusive override', () => {
  let cells = 0;
  for (const [name, inquiry] of Object.entries(inquiries)) {
    for (const policy of policies) {
      for (const override of overrides) {
        for (const hasClient of [true, false]) {
          const want = hasClient ? 'PromptClient' : expected(name, policy, override);
          cells++;
          it(`${name} · ${hasClient ? 'client' : 'no client'} · ${policy} · exclusive override ${String(override)} → ${want}`, () => {
            assert.equal(route(inquiry, { hasClient, policy, configExclusive: override }), want);
          });
        }
      }
    }
  }
  it('covers all 168 cells', () => assert.equal(cells, 7 * 4 * 3 * 2));
});

describe('route() special cases from the design', () => {
  it('auto never fails a run or a delivery, even though they are inherently exclusive', () => {
    for (const override of overrides) {
      assert.equal(
        route(inquiries.run!, { hasClient: false, policy: 'auto', configExclusive: override }),
        'AutoApprove',
      );
      assert.equal(
        route(inquiries.deliver!, { hasClient: false, policy: 'auto', configExclusive: override }),
        'AutoDeliver',
      );
    }
  });

  it('the user has the final say on exclusivity, both ways', () => {
    assert.equal(
      route(inquiries.exclusiveQuestion!, { hasClient: false, policy: 'auto', configExclusive: false }),
      'LlmInquiry',
    );
    assert.equal(route(inquiries.question!, { hasClient: false, policy: 'auto', configExclusive: true }), 'Fail');
  });

  it('a select question gets UseDefault only when it has a default', () => {
    const select: Inquiry = {
      kind: 'tool_question',
      tool: 't',
      question: { id: 's', text: 'Which?', answer_type: 'select', options: ['a', 'b'], exclusive: false },
    };
    assert.equal(route(select, { hasClient: false, policy: 'defaults', configExclusive: undefined }), 'Fail');
    const withDefault: Inquiry = { ...select, question: { ...select.question, default: 'b' } } as Inquiry;
    assert.equal(
      route(withDefault, { hasClient: false, policy: 'defaults', configExclusive: undefined }),
      'UseDefault',
    );
  });
});
