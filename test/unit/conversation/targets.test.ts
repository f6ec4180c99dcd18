/**
 * Which conversation a query's flags mean (queryConversation), as a table over the flags and the
 * session's state, and what opening each gives (openConversation): nothing is made until it opens,
 * an existing one is never re-made, a new one is titled, a fork copies its source.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, it } from 'node:test';
import { createConversation, readMetadata } from '../../../src/conversation/store.ts';
import {
  openConversation,
  queryConversation,
  type QueryConversation,
  type QueryTarget,
} from '../../../src/conversation/targets.ts';
import { JpError } from '../../../src/errors.ts';
import { activateConversation, type SessionKey } from '../../../src/workspace/session.ts';
import {
  describeWorkspace,
  prepareWorkspace,
  userSubdirectory,
  type Workspace,
} from '../../../src/workspace/workspace.ts';

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

const session: SessionKey = { key: 'env-unit', source: 'JP_SESSION' };

/** A workspace with one conversation, `existing`, made the session's active one when `active`. */
function place(active: boolean): { workspace: Workspace; existing: string; dataHome: string } {
  const root = mkdtempSync(path.join(os.tmpdir(), 'jp-targets-'));
  roots.push(root);
  const directory = path.join(root, 'w');
  mkdirSync(path.join(directory, '.jp', 'conversations'), { recursive: true });
  const environment = { HOME: path.join(root, 'home'), XDG_DATA_HOME: path.join(root, 'd') };
  const workspace = describeWorkspace(directory, false, directory, environment);
  prepareWorkspace(workspace);
  const existing = createConversation(workspace.conversationsDirectory, { title: 'first' }).id;
  if (active) activateConversation(userSubdirectory(workspace, 'sessions'), session, existing);
  return { workspace, existing, dataHome: path.join(root, 'd') };
}

/** The outcome as a row of the table: the kind (with `existing` for the id of the one there is), or the error code. */
function outcome(chosen: () => QueryConversation, existing: string): string {
  try {
    const conversation = chosen();
    if (conversation.kind === 'existing') return conversation.id === existing ? 'existing' : conversation.id;
    if (conversation.kind === 'fork')
      return conversation.source === existing ? 'fork of existing' : conversation.source;
    return 'new';
  } catch (error) {
    if (JpError.isInstance(error)) return error.code;
    throw error;
  }
}

describe('queryConversation', () => {
  const rows: { flags: QueryTarget; session: boolean; active: boolean; expected: string }[] = [
    { flags: {}, session: true, active: true, expected: 'existing' },
    { flags: {}, session: true, active: false, expected: 'new' },
    { flags: {}, session: false, active: true, expected: 'new' },
    { flags: { new: true }, session: true, active: true, expected: 'new' },
    { flags: { continue: true }, session: true, active: true, expected: 'existing' },
    { flags: { continue: true }, session: true, active: false, expected: 'no_active_conversation' },
    { flags: { continue: true }, session: false, active: true, expected: 'no_active_conversation' },
    { flags: { id: 'EXISTING' }, session: false, active: false, expected: 'existing' },
    { flags: { id: 'jp-c1764000000000999' }, session: true, active: true, expected: 'conversation_not_found' },
    { flags: { id: 'not-an-id' }, session: true, active: true, expected: 'conversation_id_invalid' },
    { flags: { fork: '' }, session: true, active: true, expected: 'fork of existing' },
    { flags: { fork: true }, session: true, active: true, expected: 'fork of existing' },
    { flags: { fork: '' }, session: true, active: false, expected: 'no_active_conversation' },
    { flags: { fork: '' }, session: false, active: true, expected: 'no_active_conversation' },
    { flags: { fork: 'EXISTING' }, session: false, active: false, expected: 'fork of existing' },
    { flags: { fork: 'jp-c1764000000000999' }, session: true, active: true, expected: 'conversation_not_found' },
  ];
  for (const row of rows) {
    const name = `${JSON.stringify(row.flags)}, ${row.session ? 'a session' : 'no session'}, ${row.active ? 'an active conversation' : 'none active'}`;
    it(`${name}: ${row.expected}`, () => {
      const { workspace, existing } = place(row.active);
      const flags = Object.fromEntries(
        Object.entries(row.flags).map(([key, value]) => [key, value === 'EXISTING' ? existing : value]),
      );
      const before = readdirSync(workspace.conversationsDirectory).sort();
      assert.equal(
        outcome(() => queryConversation(workspace, row.session ? session : undefined, flags), existing),
        row.expected,
      );
      assert.deepEqual(readdirSync(workspace.conversationsDirectory).sort(), before, 'choosing makes nothing');
    });
  }
});

describe('openConversation', () => {
  it('an existing conversation is opened as it is: not made for this run', () => {
    const { workspace, existing, dataHome } = place(true);
    const opened = openConversation(workspace, { kind: 'existing', id: existing }, { title: 'unused', dataHome });
    assert.deepEqual(opened, { id: existing, created: false, foreignSettings: [] });
    assert.deepEqual(readdirSync(workspace.conversationsDirectory), [existing]);
  });

  it('a new conversation is made with the title given', () => {
    const { workspace, existing, dataHome } = place(false);
    const opened = openConversation(workspace, { kind: 'new' }, { title: 'explain this', dataHome });
    assert.equal(opened.created, true);
    assert.notEqual(opened.id, existing);
    assert.equal(readMetadata(workspace.conversationsDirectory, opened.id).title, 'explain this');
  });

  it('a fork is a new conversation made from its source, with nothing foreign to carry', () => {
    const { workspace, existing, dataHome } = place(true);
    const opened = openConversation(workspace, { kind: 'fork', source: existing }, { title: null, dataHome });
    assert.equal(opened.created, true);
    assert.notEqual(opened.id, existing);
    assert.deepEqual(opened.foreignSettings, []);
    assert.deepEqual(readdirSync(workspace.conversationsDirectory).sort(), [existing, opened.id].sort());
  });
});
