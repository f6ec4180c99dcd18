import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { commandWords, ruleCovers, rulesFor } from '../../src/approvals/rules.ts';
import { type ApprovalRule, parseApprovalRule } from '../../src/inquiry/approval-rule.ts';
import { parseRunToolAnswer } from '../../src/inquiry/answer.ts';

const prefix: ApprovalRule = { kind: 'prefix', tool: 'run_command', words: ['npm', 'test'] };
const run = (command: string, more: Record<string, unknown> = {}): unknown => ({ command, ...more });

describe('lasting approval rules', () => {
  it('a command is the words the shell runs, only for a simple command', () => {
    assert.deepEqual(commandWords('npm test'), ['npm', 'test']);
    assert.deepEqual(commandWords(`npm  "te st" 'a;b'`), ['npm', 'te st', 'a;b']);
    for (const compound of [
      'npm test; rm -rf ~',
      'npm test && rm -rf ~',
      'npm test || x',
      'npm test | sh',
      'npm test > out',
      'npm test $(rm x)',
      'npm test `rm x`',
      'npm test $HOME',
      'npm test\nrm -rf ~',
      'npm test &',
      'npm test *.js',
      'npm test ~',
      'npm test {a,b}',
      'npm test "unterminated',
      'npm test \\; x',
      'npm test # comment',
    ])
      assert.equal(commandWords(compound), undefined, compound);
  });

  it('a prefix covers the commands that start with its words, never a compound one nor an escalation', () => {
    assert.ok(ruleCovers(prefix, 'run_command', run('npm test')));
    assert.ok(ruleCovers(prefix, 'run_command', run('npm test -- --watch')));
    assert.ok(!ruleCovers(prefix, 'run_command', run('npm testing')));
    assert.ok(!ruleCovers(prefix, 'run_command', run('npm test; rm -rf ~')));
    assert.ok(!ruleCovers(prefix, 'run_command', run('npm test && rm -rf ~')));
    assert.ok(!ruleCovers(prefix, 'run_command', run('npm test', { escalate: true, justification: 'x' })));
    assert.ok(!ruleCovers(prefix, 'fs_create_file', run('npm test')));
    const exact: ApprovalRule = { kind: 'command', tool: 'run_command', words: ['npm', 'test'] };
    assert.ok(ruleCovers(exact, 'run_command', run('npm  test')));
    assert.ok(!ruleCovers(exact, 'run_command', run('npm test x')));
  });

  it('a path rule covers writes under its directory of the workspace, and cannot name one outside it', () => {
    const rule: ApprovalRule = { kind: 'path', tool: 'fs_create_file', path: 'src' };
    assert.ok(ruleCovers(rule, 'fs_create_file', { path: 'src/a/b.ts', content: '' }));
    assert.ok(!ruleCovers(rule, 'fs_create_file', { path: 'src/../secrets.ts', content: '' }));
    assert.ok(!ruleCovers(rule, 'fs_create_file', { path: 'srcx/a.ts', content: '' }));
    assert.ok(!ruleCovers(rule, 'fs_create_file', { path: '/etc/passwd', content: '' }));
    assert.equal(parseApprovalRule({ kind: 'path', tool: 'fs_create_file', path: '../x' }), undefined);
    assert.equal(parseApprovalRule({ kind: 'path', tool: 'fs_create_file', path: '/x' }), undefined);
    assert.deepEqual(
      rulesFor('fs_modify_file', { path: 'src/lib/a.ts' }).map((rule) =>
        rule.kind === 'path' ? rule.path : rule.kind,
      ),
      ['src/lib', 'src', '.', 'tool'],
    );
  });

  it('its answer is {"approve_always": rule}; anything else of that shape is refused', () => {
    assert.deepEqual(parseRunToolAnswer({ approve_always: prefix }, 'client'), {
      ok: true,
      answer: { decision: 'approve_always', rule: prefix },
    });
    assert.equal(parseRunToolAnswer({ approve_always: { kind: 'prefix', tool: 'run_command' } }, 'client').ok, false);
    assert.equal(parseRunToolAnswer({ approve_always: { kind: 'anything', tool: 'x' } }, 'client').ok, false);
  });
});
