// `npm run demo`: runs jp offline on the built-in test provider (a scripted replay: no model, no
// network, no API key) in a demo workspace. At a terminal, jp asks before it creates a file;
// without one (CI, a pipe with no terminal), the safe default denies it and jp exits 3.
// The workspace is one directory per user in the temporary directory, emptied at each run: runs
// never pile up, and the last one stays there to look at.
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const jp = path.join(root, 'dist', 'jp.mjs');
const script = path.join(root, 'examples', 'demo-script.json');
const workspace = path.join(os.tmpdir(), `jp-demo-${os.userInfo().username}`);
rmSync(workspace, { recursive: true, force: true });
mkdirSync(workspace, { recursive: true, mode: 0o700 });

console.error('== jp demo: OFFLINE, built-in `test` provider (a scripted replay; no model, no API key) ==');
console.error(`   workspace: ${workspace} (emptied at each run of the demo)\n`);
const run = (args) => spawnSync(process.execPath, [jp, ...args], { cwd: workspace, stdio: 'inherit' });
run(['init']);
const query = run([
  'query',
  '--new',
  '-m',
  'test',
  '-c',
  `providers.test.script=${script}`,
  'Create a hello.txt with a greeting',
]);
const code = query.status ?? 1;
console.error(`\n== jp exited ${code} ==`);
if (code === 3) {
  console.error('   3 = denied: no terminal to ask, so the default detached policy ("deny") refused the file write.');
  console.error('   Run the demo in a terminal to answer the prompt, or allow it unattended with');
  console.error('   --cfg conversation.tools.fs_create_file.detached.run=auto');
}
console.error(`   Try: cd ${workspace} && node ${jp} conversation ls`);
process.exit(code === 0 || code === 3 ? 0 : code);
