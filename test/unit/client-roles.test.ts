/**
 * The two tables of src/server/client-roles.ts, every cell written out from DESIGN §8: who is let
 * in with which role, and what each role may do.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  admit,
  clientActions,
  clientRoles,
  may,
  type AdmissionState,
  type ClientAction,
  type ClientRole,
  type RoleRequest,
} from '../../src/server/client-roles.ts';

/**
 * DESIGN §8, cell by cell: everyone let in watches; the prompting client (the foreground owner at a
 * terminal or in an editor, or `attach`) answers and gets the interrupt menu; an owner with nobody
 * to prompt is stopped by its interrupt; only the owner and the prompting client steer, detach the
 * run and hold a foreground run until they said hello; `kill` may stop it too; a viewer only watches.
 */
function expectedPermission(role: ClientRole, action: ClientAction): boolean {
  const owner = role === 'owner' || role === 'owner-prompting';
  const prompting = role === 'owner-prompting' || role === 'prompting';
  switch (action) {
    case 'watch':
      return true;
    case 'answer':
    case 'interrupt-menu':
      return prompting;
    case 'interrupt-stop':
      return role === 'owner';
    case 'steer':
    case 'detach-run':
    case 'hold-run':
      return owner || prompting;
    case 'stop':
      return owner || prompting || role === 'killer';
  }
}

describe('client roles: every role × action', () => {
  let cells = 0;
  for (const role of clientRoles) {
    for (const action of clientActions) {
      cells++;
      const want = expectedPermission(role, action);
      it(`${role} ${want ? 'may' : 'may not'} ${action}`, () => assert.equal(may(role, action), want));
    }
  }
  it('covers all 40 cells', () => assert.equal(cells, 5 * 8));
});

/**
 * Admission, written out: no capability, no entry, whatever the hello asks; `kill` is a killer; a
 * hello that can prompt (and is not read-only) is refused while another client prompts; the owner
 * flag counts only while the run, started in the foreground, has no owner yet and the hello is not
 * read-only; everyone else watches.
 */
function expectedAdmission(request: RoleRequest, state: AdmissionState): ClientRole | string {
  if (!state.holdsCapability) return 'refused: capability_required';
  if (request.kill === true) return 'killer';
  const prompting = request.can_prompt && request.read_only !== true;
  if (prompting && state.promptingTaken) return 'refused: prompting_client_attached';
  if (request.owner === true && request.read_only !== true && state.ownerOpen)
    return prompting ? 'owner-prompting' : 'owner';
  return prompting ? 'prompting' : 'viewer';
}

describe('admission: every hello × run state', () => {
  const flags = [undefined, false, true];
  let cells = 0;
  for (const canPrompt of [false, true])
    for (const readOnly of flags)
      for (const owner of flags)
        for (const kill of flags)
          for (const holdsCapability of [false, true])
            for (const promptingTaken of [false, true])
              for (const ownerOpen of [false, true]) {
                cells++;
                const request: RoleRequest = { can_prompt: canPrompt, read_only: readOnly, owner, kill };
                const state: AdmissionState = { holdsCapability, promptingTaken, ownerOpen };
                const want = expectedAdmission(request, state);
                it(`${JSON.stringify(request)} · ${JSON.stringify(state)} → ${want}`, () => {
                  const admission = admit(request, state);
                  assert.equal(admission.admitted ? admission.role : `refused: ${admission.code}`, want);
                });
              }
  it('covers all 432 cells', () => assert.equal(cells, 2 * 3 * 3 * 3 * 2 * 2 * 2));
});
