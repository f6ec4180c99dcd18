#!/usr/bin/env node
// PermissionRequest hook: asks the approval server (approval-server.mjs) and waits for a person to
// approve or deny there, from a phone or another machine. It answers in the common hook contract;
// when the server cannot be reached it exits 1, which answers nothing (jp's next answerer decides).
// When jp withdraws the question (someone answered at the terminal first) it gets SIGTERM and
// takes the question off the page.
//
//   [[hooks.PermissionRequest]]
//   command = "node /path/to/examples/hooks/approval-hook.mjs"
//   timeout = 900          # how long a person may take (seconds)
//
// Environment: JP_APPROVAL_URL (default http://127.0.0.1:8787), JP_APPROVAL_TOKEN (printed by the server).
const base = process.env.JP_APPROVAL_URL ?? 'http://127.0.0.1:8787';
const token = process.env.JP_APPROVAL_TOKEN ?? '';
const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };

let input = '';
for await (const chunk of process.stdin) input += chunk;
const event = JSON.parse(input);

const created = await fetch(`${base}/api/requests`, { method: 'POST', headers, body: JSON.stringify(event) });
if (!created.ok) {
  console.error(`approval-hook.mjs: ${base} answered ${created.status}`);
  process.exit(1);
}
const { id } = await created.json();

const withdraw = async () => {
  await fetch(`${base}/api/requests/${id}`, { method: 'DELETE', headers }).catch(() => {});
  process.exit(0);
};
process.on('SIGTERM', withdraw);

for (;;) {
  // The server holds each poll open until a decision or for a while; then ask again.
  const response = await fetch(`${base}/api/requests/${id}/decision`, { headers });
  if (response.status === 204) continue;
  if (!response.ok) {
    console.error(`approval-hook.mjs: ${base} answered ${response.status}`);
    process.exit(1);
  }
  const { behavior, message } = await response.json();
  const decision = { behavior, ...(message ? { message } : {}) };
  process.stdout.write(`${JSON.stringify({ hookSpecificOutput: { hookEventName: 'PermissionRequest', decision } })}\n`);
  process.exit(0);
}
