/**
 * Who a connection to a run is, and what it may do (DESIGN §8 "Capability", "Who owns a run"). Pure:
 * no I/O, no state; the hub (client-hub.ts) asks `admit()` once per hello and `may()` for each
 * message, and test/unit/client-roles.test.ts checks every cell of both tables.
 *
 * Admission first asks for the run's capability: a secret made by the run, given to the client
 * that started it and readable by `attach` from a 0600 file in jp's private state (registry.ts). A
 * connection without it is refused whatever it asks for, watching included: a run's stream carries
 * file contents, command output (of commands run outside the sandbox too) and the model's text,
 * which a process that cannot read jp's state has no business reading either.
 */

/**
 * - `owner`: the foreground `jp query` (or `jp acp`) that started the run, until it detaches; with
 *   nobody to prompt (a script's pipe), its Ctrl+C stops the run at once.
 * - `owner-prompting`: the same, answering the run's inquiries at a terminal or in an editor.
 * - `prompting`: `jp conversation attach`: answers the inquiries, never owns the run.
 * - `viewer`: `attach --read-only`, `jp conversation wait`: watches only.
 * - `killer`: `jp conversation kill`: connects only to stop the run.
 */
export type ClientRole = 'owner' | 'owner-prompting' | 'prompting' | 'viewer' | 'killer';

export const clientRoles: readonly ClientRole[] = ['owner', 'owner-prompting', 'prompting', 'viewer', 'killer'];

/**
 * - `watch`: receive the run's events, inquiries as they are asked, and its end.
 * - `answer`: answer or decline an inquiry forwarded to it, answer a file request of its editor.
 * - `interrupt-menu`: an interrupt (`signal`) opens the interrupt menu on this client.
 * - `interrupt-stop`: an interrupt stops the run at once (saved, resumable).
 * - `steer`: choose from the interrupt menu (`interrupt_action`: stop, abort, continue, reply, detach).
 * - `stop`: `shutdown`.
 * - `detach-run`: say its user detached (`disconnect {detach}`): from then on the run defers what it asks.
 * - `hold-run`: a foreground run waits for this client's hello before its first step.
 */
export type ClientAction =
  | 'watch'
  | 'answer'
  | 'interrupt-menu'
  | 'interrupt-stop'
  | 'steer'
  | 'stop'
  | 'detach-run'
  | 'hold-run';

export const clientActions: readonly ClientAction[] = [
  'watch',
  'answer',
  'interrupt-menu',
  'interrupt-stop',
  'steer',
  'stop',
  'detach-run',
  'hold-run',
];

/** The permission table: what each role may do. Anything not listed is refused (and logged). */
const permissions: Record<ClientRole, readonly ClientAction[]> = {
  owner: ['watch', 'interrupt-stop', 'steer', 'stop', 'detach-run', 'hold-run'],
  'owner-prompting': ['watch', 'answer', 'interrupt-menu', 'steer', 'stop', 'detach-run', 'hold-run'],
  prompting: ['watch', 'answer', 'interrupt-menu', 'steer', 'stop', 'detach-run', 'hold-run'],
  viewer: ['watch'],
  killer: ['watch', 'stop'],
};

export function may(role: ClientRole, action: ClientAction): boolean {
  return permissions[role].includes(action);
}

/** Whether the role answers the run's inquiries (there is at most one such connection). */
export function prompts(role: ClientRole): boolean {
  return may(role, 'answer');
}

/** What a hello asks for (the wire's ClientHello, less its version and payload). */
export interface RoleRequest {
  can_prompt: boolean;
  read_only?: boolean | undefined;
  owner?: boolean | undefined;
  kill?: boolean | undefined;
}

/** What the run is when the hello arrives. */
export interface AdmissionState {
  /** The hello carried this run's capability. */
  holdsCapability: boolean;
  /** Another connection answers the inquiries now. */
  promptingTaken: boolean;
  /** A connection may still become the owner: the run started in the foreground and nobody claimed it yet. */
  ownerOpen: boolean;
}

export type Admission =
  | { admitted: true; role: ClientRole }
  | { admitted: false; code: 'capability_required' | 'prompting_client_attached' };

/** The role a hello gets, or why it is refused. */
export function admit(request: RoleRequest, state: AdmissionState): Admission {
  if (!state.holdsCapability) return { admitted: false, code: 'capability_required' };
  if (request.kill === true) return { admitted: true, role: 'killer' };
  const wantsToPrompt = request.can_prompt && request.read_only !== true;
  if (wantsToPrompt && state.promptingTaken) return { admitted: false, code: 'prompting_client_attached' };
  const owns = request.owner === true && request.read_only !== true && state.ownerOpen;
  if (owns) return { admitted: true, role: wantsToPrompt ? 'owner-prompting' : 'owner' };
  return { admitted: true, role: wantsToPrompt ? 'prompting' : 'viewer' };
}
