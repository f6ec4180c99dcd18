/**
 * The page of `jp web`: plain DOM, `marked` for markdown and DOMPurify for what it makes (the
 * model's and tools' text is untrusted: text goes in as text, markdown's HTML is sanitised, an
 * image is shown as a link to it, never fetched, and the server's Content-Security-Policy forbids
 * inline script and foreign images besides). Every request carries this start's token, taken from
 * the URL's fragment into session storage (kept per origin). The list of runs streams from
 * /api/runs; an opened conversation from /api/view (its history in a few batches, then live), each
 * event once by its seq, NDJSON both. A long conversation is grouped into blocks and only its last
 * blocks are drawn at first; earlier ones on demand ("Show earlier").
 */
import DOMPurify from 'dompurify';
import { marked } from 'marked';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

interface ListedRun {
  source: string;
  workspace: { id: string; root: string; name: string };
  id: string;
  title: string | null;
  updated_at: string;
  state: string;
  status: string;
  tool: string | null;
  usage: { input_tokens: number | null; output_tokens: number | null; total_tokens: number | null } | null;
  changed_turns: number[];
}

interface Inquiry {
  kind: 'run_tool' | 'deliver_tool_result' | 'tool_question' | 'escalate';
  tool: string;
  arguments?: Json;
  result?: string;
  is_error?: boolean;
  needs?: string;
  justification?: string;
  question?: { text: string; answer_type: string; options?: string[]; default?: Json };
}

interface EventRecord extends JsonObject {
  type: string;
}

/** How many blocks are drawn at first, and added by each "Show earlier". */
const pageSize = 150;

const element = <T extends HTMLElement = HTMLElement>(id: string): T => document.getElementById(id) as T;
const make = <K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className?: string,
  text?: string,
): HTMLElementTagNameMap[K] => {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
};

/** HTML in the text is the model's or a tool's: it is shown as the text it is, never as markup. */
const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
marked.use({
  gfm: true,
  breaks: false,
  renderer: {
    html: (token) => escapeHtml(token.text),
    // An image would call its server as soon as it is drawn: it is a link the reader may follow.
    image: (token) => `<a href="${escapeHtml(token.href)}">${escapeHtml(`image: ${token.text || token.href}`)}</a>`,
  },
});
// A followed link opens apart from the page, and says nothing of where it came from.
DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A' && node.hasAttribute('href')) {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer');
  }
});

/** Markdown to sanitised DOM: no script, no handler, no foreign frame survives. */
function markdown(text: string): DocumentFragment {
  const html = marked.parse(text, { async: false });
  return DOMPurify.sanitize(html, { RETURN_DOM_FRAGMENT: true, FORBID_TAGS: ['style', 'form', 'input'] });
}

// ---- theme -----------------------------------------------------------------------------------

function applyTheme(theme: string | null): void {
  if (theme === 'light' || theme === 'dark') document.documentElement.dataset.theme = theme;
  else delete document.documentElement.dataset.theme;
}
applyTheme(localStorage.getItem('jp-theme'));
function toggleTheme(): void {
  const dark =
    document.documentElement.dataset.theme === 'dark' ||
    (!document.documentElement.dataset.theme && matchMedia('(prefers-color-scheme: dark)').matches);
  const next = dark ? 'light' : 'dark';
  localStorage.setItem('jp-theme', next);
  applyTheme(next);
}

// ---- api ---------------------------------------------------------------------------------------

/** This start's token: from the URL's fragment (`#token=…`, which no request carries), then kept. */
const token = ((): string => {
  const given = new URLSearchParams(location.hash.slice(1)).get('token');
  if (given) {
    sessionStorage.setItem('jp-web-token', given);
    history.replaceState(null, '', location.pathname);
  }
  return sessionStorage.getItem('jp-web-token') ?? '';
})();
const authorization = { authorization: `Bearer ${token}` };
const tokenRefused = 'This page has no valid token for this jp web: open the URL `jp web` printed.';

async function post(path: string, body: unknown): Promise<{ ok: boolean; message: string }> {
  const response = await fetch(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...authorization },
    body: JSON.stringify(body),
  });
  if (response.status === 401) return { ok: false, message: tokenRefused };
  try {
    return (await response.json()) as { ok: boolean; message: string };
  } catch {
    return { ok: false, message: `${response.status} ${response.statusText}` };
  }
}

async function getJson<T>(path: string): Promise<T | { ok: false; text: string }> {
  const response = await fetch(path, { headers: authorization });
  if (response.status === 401) return { ok: false, text: tokenRefused };
  return (await response.json()) as T;
}

interface Stream {
  close(): void;
}

/**
 * Reads an NDJSON stream: `onMessage` for each line, `onEnd` once when it ends (`status` is the
 * HTTP status when it was refused, 0 when the connection ended); never after `close()`.
 */
function openStream(path: string, onMessage: (value: JsonObject) => void, onEnd: (status: number) => void): Stream {
  const abort = new AbortController();
  let ended = false;
  const end = (status: number): void => {
    if (ended || abort.signal.aborted) return;
    ended = true;
    onEnd(status);
  };
  void (async () => {
    const response = await fetch(path, { headers: authorization, signal: abort.signal });
    if (!response.ok || !response.body) return end(response.status);
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      let start = buffer.length;
      buffer += value;
      let newline = buffer.indexOf('\n', start);
      start = 0;
      while (newline !== -1) {
        const line = buffer.slice(start, newline);
        start = newline + 1;
        if (line !== '' && !abort.signal.aborted) onMessage(JSON.parse(line) as JsonObject);
        newline = buffer.indexOf('\n', start);
      }
      buffer = buffer.slice(start);
    }
    end(0);
  })().catch(() => end(0));
  return { close: () => abort.abort() };
}

// ---- the list ----------------------------------------------------------------------------------

const stateOrder: Record<string, number> = { 'waiting-for-input': 0, running: 1, interrupted: 2, damaged: 3, idle: 4 };
let runs: ListedRun[] = [];
let selectedKey: string | undefined;
const keyOf = (run: { source: string; workspace: { id: string }; id: string }): string =>
  `${run.source}\u0000${run.workspace.id}\u0000${run.id}`;

function age(iso: string): string {
  const seconds = Math.max(0, (Date.now() - Date.parse(iso)) / 1000);
  if (seconds < 60) return 'just now';
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)} h ago`;
  return `${Math.floor(seconds / 86400)} d ago`;
}

function tokens(run: ListedRun): string | undefined {
  const usage = run.usage;
  if (!usage) return undefined;
  const total = usage.total_tokens ?? (usage.input_tokens ?? 0) + (usage.output_tokens ?? 0);
  return total > 0 ? `${total.toLocaleString()} tokens` : undefined;
}

function stateLabel(run: ListedRun): string {
  if (run.state === 'waiting-for-input') return run.tool ? `waiting: ${run.tool}` : 'waiting for input';
  return run.state;
}

function drawList(): void {
  const filter = element<HTMLInputElement>('filter').value.trim().toLowerCase();
  const list = element('run-list');
  const shown = runs
    .filter((run) =>
      filter === ''
        ? true
        : `${run.title ?? ''} ${run.id} ${run.workspace.name} ${run.source} ${run.state}`
            .toLowerCase()
            .includes(filter),
    )
    .sort(
      (a, b) =>
        (stateOrder[a.state] ?? 5) - (stateOrder[b.state] ?? 5) || Date.parse(b.updated_at) - Date.parse(a.updated_at),
    );
  const items = shown.map((run) => {
    const item = make('li');
    const button = make('button', 'run');
    button.type = 'button';
    button.dataset.key = keyOf(run);
    if (keyOf(run) === selectedKey) button.setAttribute('aria-current', 'true');
    button.append(make('span', 'title', run.title ?? run.id));
    const meta = make('span', 'meta');
    meta.append(make('span', `state ${run.state}`, stateLabel(run)));
    meta.append(make('span', '', run.source === 'local' ? run.workspace.name : `${run.source}: ${run.workspace.name}`));
    meta.append(make('span', '', age(run.updated_at)));
    const used = tokens(run);
    if (used) meta.append(make('span', '', used));
    button.append(meta);
    button.title = `${run.id} — ${run.status} — ${run.workspace.root}`;
    button.addEventListener('click', () => openRun(run));
    item.append(button);
    return item;
  });
  list.replaceChildren(...items);
  element('empty').hidden = runs.length > 0;
  if (current) {
    const run = runs.find((candidate) => keyOf(candidate) === current!.key);
    if (run) updateHeading(run);
  }
}

/** Follows the list; reconnects while jp web may come back, not once the token is refused. */
function watchRuns(): void {
  openStream(
    '/api/runs',
    (message) => {
      const data = message as unknown as { runs: ListedRun[]; sources: { name: string; problem: string | null }[] };
      runs = data.runs;
      element('sources').textContent = data.sources
        .filter((source) => source.problem)
        .map((source) => `${source.name}: ${source.problem}`)
        .join(' · ');
      drawList();
    },
    (status) => {
      if (status === 401) {
        element('sources').textContent = tokenRefused;
        return;
      }
      element('sources').textContent = 'jp web is not answering; trying again…';
      setTimeout(watchRuns, 3000);
    },
  );
}

// ---- a conversation ----------------------------------------------------------------------------

interface Block {
  kind: string;
  node?: HTMLElement;
  /** Assistant text gathered from consecutive chat_response events. */
  text?: string;
  draw(): HTMLElement;
}

interface ViewState {
  key: string;
  run: ListedRun;
  stream: Stream | undefined;
  viewId: string | undefined;
  /** The next seq expected: every event below it is shown. */
  next: number;
  historyEnd: number;
  historyDrawn: boolean;
  blocks: Block[];
  firstDrawn: number;
  calls: Map<string, { name: string; sandbox?: string; block: Block; output?: HTMLElement }>;
  liveText: { message: string; reasoning: string };
  running: boolean;
  prompting: boolean;
  turn: number;
}

let current: ViewState | undefined;

function updateHeading(run: ListedRun): void {
  if (!current) return;
  current.run = run;
  element('title').textContent = run.title ?? run.id;
  element('subtitle').textContent =
    `${run.id} · ${stateLabel(run)} · ${run.source === 'local' ? '' : `${run.source}: `}${run.workspace.root}`;
  element('stop').hidden = run.state !== 'running';
  element('detach').hidden = !current.running;
  element('changes').hidden = run.changed_turns.length === 0;
  // A run that started while its log was shown: attach to it, from where the log ended.
  if (run.state === 'running' && !current.running && !current.stream) connectView();
}

function openRun(run: ListedRun): void {
  closeView();
  selectedKey = keyOf(run);
  current = {
    key: keyOf(run),
    run,
    stream: undefined,
    viewId: undefined,
    next: 0,
    historyEnd: 0,
    historyDrawn: false,
    blocks: [],
    firstDrawn: 0,
    calls: new Map(),
    liveText: { message: '', reasoning: '' },
    running: false,
    prompting: false,
    turn: 0,
  };
  element('blocks').replaceChildren();
  element('asks').replaceChildren();
  element('live').hidden = true;
  element('earlier').hidden = true;
  setNotice(undefined);
  element('main').className = 'conversation-shown';
  updateHeading(run);
  drawList();
  connectView();
  history.replaceState(
    null,
    '',
    `#${encodeURIComponent(run.source)}/${encodeURIComponent(run.workspace.id)}/${encodeURIComponent(run.id)}`,
  );
}

function closeView(): void {
  current?.stream?.close();
  if (current) current.stream = undefined;
}

function setNotice(text: string | undefined): void {
  const notice = element('notice');
  notice.hidden = text === undefined;
  notice.textContent = text ?? '';
}

function connectView(): void {
  const view = current;
  if (!view || view.stream) return;
  const parameters = new URLSearchParams({
    source: view.run.source,
    workspace: view.run.workspace.id,
    conversation: view.run.id,
    from: String(view.next),
  });
  const stream = openStream(
    `/api/view?${parameters}`,
    (message) => {
      if (current === view) receive(view, message);
    },
    (status) => {
      // The view ended (the run finished, the server went away): never reconnect by itself.
      if (view.stream === stream) view.stream = undefined;
      if (status === 401 && current === view) setNotice(tokenRefused);
    },
  );
  view.stream = stream;
}

function receive(view: ViewState, message: JsonObject): void {
  switch (message.type) {
    case 'view':
      view.viewId = String(message.id);
      return;
    case 'opened':
      view.running = message.running === true;
      view.prompting = message.prompting === true;
      view.historyEnd = Number(message.event_count);
      element('detach').hidden = !view.running;
      if (view.running && !view.prompting) setNotice('Another client answers this run’s questions; this page watches.');
      if (view.next >= view.historyEnd) drawHistory(view);
      return;
    case 'events':
    case 'event': {
      const batch = message.type === 'events' ? (message.events as EventRecord[]) : [message.event as EventRecord];
      const from = Number(message.type === 'events' ? message.from : message.seq);
      for (let index = Math.max(0, view.next - from); index < batch.length; index++) {
        view.next = from + index + 1;
        addEvent(view, batch[index]!);
      }
      if (!view.historyDrawn && view.next >= view.historyEnd) drawHistory(view);
      return;
    }
    case 'delta': {
      const kind = message.kind === 'reasoning' ? 'reasoning' : 'message';
      view.liveText[kind] += String(message.text);
      drawLive(view);
      return;
    }
    case 'inquiry':
      showAsk(view, String(message.id), message.inquiry as unknown as Inquiry, 'live');
      return;
    case 'inquiry_resolved':
      document.getElementById(`ask-${message.id}`)?.remove();
      return;
    case 'pending':
      for (const pending of message.inquiries as JsonObject[])
        showAsk(
          view,
          String(pending.id),
          pending.inquiry as unknown as Inquiry,
          'deferred',
          String(pending.tool_call_id),
        );
      return;
    case 'notice':
      setNotice(String(message.message));
      return;
    case 'turn_complete':
      return;
    case 'closed': {
      if (!view.historyDrawn) drawHistory(view);
      view.running = false;
      view.stream?.close();
      view.stream = undefined;
      element('detach').hidden = true;
      for (const ask of element('asks').querySelectorAll('.ask.live')) ask.remove();
      const error = message.error as JsonObject | undefined;
      if (error) setNotice(String(error.message));
      return;
    }
  }
}

function drawHistory(view: ViewState): void {
  view.historyDrawn = true;
  view.firstDrawn = Math.max(0, view.blocks.length - pageSize);
  const nodes = view.blocks.slice(view.firstDrawn).map((block) => nodeOf(block));
  element('blocks').replaceChildren(...nodes);
  element('earlier').hidden = view.firstDrawn === 0;
  scrollToEnd();
}

function drawEarlier(): void {
  const view = current;
  if (!view || view.firstDrawn === 0) return;
  const transcript = element('transcript');
  const before = transcript.scrollHeight;
  const from = Math.max(0, view.firstDrawn - pageSize);
  const nodes = view.blocks.slice(from, view.firstDrawn).map((block) => nodeOf(block));
  element('blocks').prepend(...nodes);
  view.firstDrawn = from;
  element('earlier').hidden = from === 0;
  transcript.scrollTop += transcript.scrollHeight - before;
}

function nodeOf(block: Block): HTMLElement {
  block.node ??= block.draw();
  return block.node;
}

function atEnd(): boolean {
  const transcript = element('transcript');
  return transcript.scrollHeight - transcript.scrollTop - transcript.clientHeight < 80;
}

function scrollToEnd(): void {
  const transcript = element('transcript');
  transcript.scrollTop = transcript.scrollHeight;
}

/** Adds a block, drawn at once when the history is on the page already. */
function addBlock(view: ViewState, block: Block): Block {
  view.blocks.push(block);
  if (view.historyDrawn) {
    const follow = atEnd();
    element('blocks').append(nodeOf(block));
    if (follow) scrollToEnd();
  }
  return block;
}

function textBlock(kind: string, className: string, text: string): Block {
  return { kind, draw: () => make('div', className, text) };
}

function markdownBlock(kind: string, className: string, text: string): Block {
  const block: Block = {
    kind,
    text,
    draw: () => {
      const node = make('div', className);
      node.append(markdown(block.text ?? ''));
      return node;
    },
  };
  return block;
}

function addEvent(view: ViewState, event: EventRecord): void {
  switch (event.type) {
    case 'turn_start':
      view.turn++;
      addBlock(
        view,
        textBlock('turn', 'block turn', `Turn ${view.turn} · ${new Date(String(event.timestamp)).toLocaleString()}`),
      );
      return;
    case 'chat_request':
      addBlock(view, markdownBlock('user', 'block user', String(event.content ?? '')));
      return;
    case 'chat_response': {
      if (typeof event.message === 'string') {
        view.liveText.message = view.liveText.message.slice(event.message.length);
        const last = view.blocks[view.blocks.length - 1];
        if (last?.kind === 'assistant') {
          last.text += event.message;
          if (last.node) {
            const fresh = last.draw();
            last.node.replaceWith(fresh);
            last.node = fresh;
          }
        } else addBlock(view, markdownBlock('assistant', 'block assistant', event.message));
      } else if (typeof event.reasoning === 'string') {
        view.liveText.reasoning = view.liveText.reasoning.slice(event.reasoning.length);
        const last = view.blocks[view.blocks.length - 1];
        if (last?.kind === 'reasoning' && !last.node) last.text += event.reasoning;
        else {
          const block: Block = {
            kind: 'reasoning',
            text: event.reasoning,
            draw: () => {
              const details = make('details', 'block reasoning');
              details.append(make('summary', '', 'Reasoning'), make('div', '', block.text ?? ''));
              return details;
            },
          };
          addBlock(view, block);
        }
      }
      drawLive(view);
      return;
    }
    case 'tool_call_request':
      addToolCall(view, event);
      return;
    case 'tool_call_response': {
      const call = view.calls.get(String(event.id));
      const text = String(event.content ?? '');
      if (call) {
        call.output = make('div', `output mono${event.is_error ? ' error' : ''}`, text);
        if (call.block.node) call.block.node.append(call.output);
      } else addBlock(view, textBlock('note', 'block note mono', text));
      return;
    }
    case 'inquiry_response': {
      const by = String(event.by);
      const client = typeof event.client === 'string' ? ` in ${event.client}` : '';
      const answer = JSON.stringify(event.answer);
      addBlock(
        view,
        textBlock(
          'note',
          'block note',
          `Answered ${answer} by ${by}${client}${event.reason ? ` — ${event.reason}` : ''}`,
        ),
      );
      document.getElementById(`ask-${event.id}`)?.remove();
      return;
    }
    case 'turn_end': {
      const status = String(event.status);
      const error = event.error as JsonObject | undefined;
      if (status !== 'completed')
        addBlock(
          view,
          textBlock('end', `block end note ${status}`, `Turn ${status}${error ? `: ${error.message}` : ''}`),
        );
      return;
    }
    case 'compaction':
      addBlock(view, textBlock('note', 'block note', 'Earlier turns were summarised for the model (compaction).'));
      return;
    case 'checkpoint':
      if (event.when === 'after' && typeof event.changed === 'number' && event.changed > 0)
        addBlock(
          view,
          textBlock('note', 'block note', `Changed ${event.changed} file(s) in turn ${event.turn ?? view.turn}`),
        );
      return;
    default:
      return;
  }
}

function addToolCall(view: ViewState, event: EventRecord): void {
  const name = String(event.name);
  const call: { name: string; sandbox?: string; block: Block; output?: HTMLElement } = {
    name,
    block: { kind: 'tool', draw: () => drawCall() },
  };
  if (typeof event.sandbox === 'string') call.sandbox = event.sandbox;
  const drawCall = (): HTMLElement => {
    const details = make('details', 'block tool');
    const summary = make('summary');
    summary.append(
      make('span', 'name', name),
      document.createTextNode(` ${oneLine(summaryOf(name, event.arguments))}`),
    );
    details.append(summary, payloadOf(name, event.arguments));
    if (call.output) details.append(call.output);
    return details;
  };
  view.calls.set(String(event.id), call);
  addBlock(view, call.block);
}

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 120 ? `${line.slice(0, 119)}…` : line;
}

function summaryOf(_name: string, argumentsValue: Json | undefined): string {
  if (argumentsValue && typeof argumentsValue === 'object' && !Array.isArray(argumentsValue)) {
    const args = argumentsValue as JsonObject;
    for (const key of ['command', 'path', 'pattern', 'question'])
      if (typeof args[key] === 'string') return String(args[key]);
  }
  return '';
}

/** The whole payload of a call: the command, a file's content, an edit as a diff, or the arguments. */
function payloadOf(name: string, argumentsValue: Json | undefined): HTMLElement {
  const box = make('div', 'payload');
  const args = (
    argumentsValue && typeof argumentsValue === 'object' && !Array.isArray(argumentsValue) ? argumentsValue : {}
  ) as JsonObject;
  if (typeof args.command === 'string') {
    box.append(make('pre', 'mono', args.command));
    const rest = { ...args };
    delete rest.command;
    if (Object.keys(rest).length > 0) box.append(make('pre', 'mono', JSON.stringify(rest, null, 2)));
    return box;
  }
  if (name === 'fs_modify_file' || Array.isArray(args.edits) || typeof args.old_string === 'string') {
    const edits = Array.isArray(args.edits) ? (args.edits as JsonObject[]) : [args];
    box.append(make('div', 'mono', String(args.path ?? '')));
    for (const edit of edits) {
      const pre = make('pre', 'diff');
      for (const line of String(edit.old_string ?? '').split('\n')) pre.append(make('span', 'del', `- ${line}`));
      for (const line of String(edit.new_string ?? '').split('\n')) pre.append(make('span', 'add', `+ ${line}`));
      box.append(pre);
    }
    return box;
  }
  if (typeof args.content === 'string') {
    box.append(make('div', 'mono', String(args.path ?? '')));
    const pre = make('pre', 'diff');
    for (const line of args.content.split('\n')) pre.append(make('span', 'add', `+ ${line}`));
    box.append(pre);
    return box;
  }
  box.append(make('pre', 'mono', JSON.stringify(argumentsValue ?? null, null, 2)));
  return box;
}

let liveFrame = 0;
function drawLive(view: ViewState): void {
  if (liveFrame) return;
  liveFrame = requestAnimationFrame(() => {
    liveFrame = 0;
    if (current !== view) return;
    const live = element('live');
    const text = view.liveText.message || view.liveText.reasoning;
    live.hidden = text === '';
    live.classList.toggle('reasoning', view.liveText.message === '' && view.liveText.reasoning !== '');
    const follow = atEnd();
    live.textContent = text;
    if (follow) scrollToEnd();
  });
}

// ---- answering ---------------------------------------------------------------------------------

interface Choice {
  label: string;
  answer: Json;
  primary?: boolean;
}

function choicesOf(inquiry: Inquiry): Choice[] {
  switch (inquiry.kind) {
    case 'run_tool':
      return [
        { label: 'Run', answer: 'run', primary: true },
        { label: `Run ${inquiry.tool} for this turn`, answer: 'run_always' },
        { label: 'Skip', answer: 'skip' },
        { label: `Skip ${inquiry.tool} for this turn`, answer: 'skip_always' },
      ];
    case 'escalate':
      return [
        { label: 'Run outside the sandbox', answer: 'run', primary: true },
        { label: 'Skip', answer: 'skip' },
      ];
    case 'deliver_tool_result':
      return [
        { label: 'Send to the model', answer: 'deliver', primary: true },
        { label: 'Withhold', answer: 'skip' },
      ];
    case 'tool_question': {
      const question = inquiry.question;
      if (question?.answer_type === 'boolean')
        return [
          { label: 'Yes', answer: true, primary: true },
          { label: 'No', answer: false },
        ];
      if (question?.answer_type === 'select')
        return (question.options ?? []).map((option) => ({ label: option, answer: option }));
      if (question?.answer_type === 'form')
        return [
          { label: 'Decline', answer: { action: 'decline' } },
          { label: 'Cancel', answer: { action: 'cancel' } },
        ];
      return [];
    }
  }
}

function headlineOf(inquiry: Inquiry): string {
  switch (inquiry.kind) {
    case 'run_tool':
      return `Run ${inquiry.tool}?`;
    case 'escalate':
      return `Run ${inquiry.tool} outside the sandbox?`;
    case 'deliver_tool_result':
      return `Send the result of ${inquiry.tool} to the model?`;
    case 'tool_question':
      return inquiry.question?.text ?? `${inquiry.tool} asks`;
  }
}

function showAsk(view: ViewState, id: string, inquiry: Inquiry, mode: 'live' | 'deferred', toolCallId?: string): void {
  if (document.getElementById(`ask-${id}`)) return;
  const box = make('div', `ask ${mode}`);
  box.id = `ask-${id}`;
  box.append(make('h3', '', headlineOf(inquiry)));
  if (mode === 'deferred')
    box.append(
      make('p', 'why', 'This run stopped to ask while nobody was there. Answering continues it in the background.'),
    );
  if (inquiry.kind === 'escalate')
    box.append(make('p', 'why', `It needs: ${inquiry.needs}. Why: ${inquiry.justification ?? ''}`));
  const call = [...view.calls.entries()].find(([callId]) => callId === toolCallId)?.[1];
  const sandbox =
    call?.sandbox ?? [...view.calls.values()].reverse().find((entry) => entry.name === inquiry.tool)?.sandbox;
  if (sandbox && (inquiry.kind === 'run_tool' || inquiry.kind === 'escalate'))
    box.append(make('p', 'why', `Sandbox: ${sandbox}`));
  if (inquiry.kind === 'run_tool' || inquiry.kind === 'escalate')
    box.append(payloadOf(inquiry.tool, inquiry.arguments));
  if (inquiry.kind === 'deliver_tool_result') box.append(make('pre', 'mono', inquiry.result ?? ''));
  const buttons = make('div', 'buttons');
  const status = make('p', 'why');
  const send = async (answer: Json): Promise<void> => {
    for (const button of buttons.querySelectorAll('button')) button.disabled = true;
    status.textContent = mode === 'deferred' ? 'Continuing the run…' : 'Sending…';
    const result =
      mode === 'live'
        ? await post('/api/answer', { view: view.viewId, inquiry_id: id, inquiry, answer })
        : await post('/api/continue', {
            source: view.run.source,
            workspace: view.run.workspace.id,
            conversation: view.run.id,
            inquiry_id: id,
            tool_call_id: toolCallId,
            inquiry,
            answer,
          });
    if (result.ok) {
      box.remove();
      if (mode === 'deferred') setNotice(result.message);
    } else {
      status.textContent = result.message;
      for (const button of buttons.querySelectorAll('button')) button.disabled = false;
    }
  };
  for (const choice of choicesOf(inquiry)) {
    const button = make('button', choice.primary ? 'primary' : '', choice.label);
    button.type = 'button';
    button.addEventListener('click', () => void send(choice.answer));
    buttons.append(button);
  }
  if (inquiry.kind === 'tool_question' && inquiry.question?.answer_type === 'text') {
    const input = make('input');
    input.type = 'text';
    input.setAttribute('aria-label', 'Your answer');
    const button = make('button', 'primary', 'Answer');
    button.type = 'button';
    button.addEventListener('click', () => void send(input.value));
    input.addEventListener('keydown', (key) => key.key === 'Enter' && void send(input.value));
    buttons.append(input, button);
  }
  box.append(buttons, status);
  element('asks').append(box);
  box.querySelector<HTMLButtonElement>('button.primary')?.focus();
}

// ---- actions -------------------------------------------------------------------------------------

async function stopRun(): Promise<void> {
  if (!current) return;
  const run = current.run;
  if (!confirm(`Stop ${run.title ?? run.id}? It is saved and can be resumed.`)) return;
  const result = await post('/api/kill', { source: run.source, workspace: run.workspace.id, conversation: run.id });
  setNotice(result.message);
}

function detach(): void {
  if (!current) return;
  closeView();
  current.running = false;
  element('detach').hidden = true;
  for (const ask of element('asks').querySelectorAll('.ask.live')) ask.remove();
  setNotice('Detached: the run goes on. Open it again to watch.');
}

async function showChanges(): Promise<void> {
  if (!current) return;
  const run = current.run;
  const turn = run.changed_turns[run.changed_turns.length - 1];
  const parameters = new URLSearchParams({ source: run.source, workspace: run.workspace.id, conversation: run.id });
  if (turn !== undefined) parameters.set('turn', String(turn));
  const result = await getJson<{ ok: boolean; text: string }>(`/api/diff?${parameters}`);
  element('diff-title').textContent = turn === undefined ? 'Changes' : `Changes of turn ${turn}`;
  const pre = element('diff-text');
  pre.replaceChildren(
    ...result.text
      .split('\n')
      .map((line) =>
        make(
          'span',
          line.startsWith('+') && !line.startsWith('+++')
            ? 'add'
            : line.startsWith('-') && !line.startsWith('---')
              ? 'del'
              : '',
          `${line}\n`,
        ),
      ),
  );
  element<HTMLDialogElement>('diff-dialog').showModal();
}

function back(): void {
  element('main').className = 'list-shown';
  document.querySelector<HTMLElement>('.run[aria-current="true"]')?.focus();
}

// ---- keys ----------------------------------------------------------------------------------------

function moveSelection(step: number): void {
  const buttons = [...document.querySelectorAll<HTMLButtonElement>('.run')];
  if (buttons.length === 0) return;
  const index = buttons.indexOf(document.activeElement as HTMLButtonElement);
  const next = buttons[Math.min(buttons.length - 1, Math.max(0, index === -1 ? 0 : index + step))]!;
  next.focus();
}

document.addEventListener('keydown', (key) => {
  const typing = key.target instanceof HTMLInputElement;
  if (key.key === 'Escape') {
    if (typing) (key.target as HTMLInputElement).blur();
    else back();
    return;
  }
  if (typing || key.ctrlKey || key.metaKey || key.altKey) return;
  if (key.key === 'j' || key.key === 'ArrowDown') {
    if (document.activeElement?.classList.contains('run') || key.key === 'j') {
      moveSelection(1);
      key.preventDefault();
    }
  } else if (key.key === 'k' || key.key === 'ArrowUp') {
    if (document.activeElement?.classList.contains('run') || key.key === 'k') {
      moveSelection(-1);
      key.preventDefault();
    }
  } else if (key.key === '/') {
    element('filter').focus();
    key.preventDefault();
  } else if (key.key === 't') toggleTheme();
  else if (key.key === 'd') detach();
});

element('filter').addEventListener('input', drawList);
element('theme').addEventListener('click', toggleTheme);
element('back').addEventListener('click', back);
element('stop').addEventListener('click', () => void stopRun());
element('detach').addEventListener('click', detach);
element('changes').addEventListener('click', () => void showChanges());
element('earlier').addEventListener('click', drawEarlier);
element('diff-close').addEventListener('click', () => element<HTMLDialogElement>('diff-dialog').close());
setInterval(drawList, 60_000);
watchRuns();
