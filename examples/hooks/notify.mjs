#!/usr/bin/env node
// Notification hook: a push notification when jp needs you (a prompt opened: `permission_prompt`;
// a run with nobody there is waiting: `waiting_for_input`). It POSTs the message to $JP_NOTIFY_URL
// (an ntfy.sh topic such as https://ntfy.sh/my-secret-topic, or any webhook that takes a text body)
// with a Title header; without $JP_NOTIFY_URL it shows a desktop notification (notify-send).
//
//   [[hooks.Notification]]
//   command = "node /path/to/examples/hooks/notify.mjs"
import { spawnSync } from 'node:child_process';

let input = '';
for await (const chunk of process.stdin) input += chunk;
const event = JSON.parse(input);
const title = event.notification_type === 'waiting_for_input' ? 'jp is waiting for you' : 'jp needs you';
const body = `${event.message}\n(${event.session_id} in ${event.cwd})`;
const url = process.env.JP_NOTIFY_URL;
if (url) {
  const response = await fetch(url, { method: 'POST', headers: { Title: title }, body });
  if (!response.ok) {
    console.error(`notify.mjs: ${url} answered ${response.status}`);
    process.exit(1);
  }
} else {
  spawnSync('notify-send', [title, body], { stdio: 'inherit' });
}
