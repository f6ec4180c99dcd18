// Runs every test file (test/**/*.test.ts) with node's test runner through tsx.
// Node 20 does not expand globs itself. Extra arguments are passed to the runner;
// file arguments (ending in .test.ts) replace the default set.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));

function findTests(directory) {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(directory, entry.name);
    if (entry.isDirectory()) return findTests(full);
    return entry.name.endsWith('.test.ts') ? [path.relative(root, full)] : [];
  });
}

const passed = process.argv.slice(2);
const files = passed.filter((argument) => argument.endsWith('.test.ts'));
const options = passed.filter((argument) => !argument.endsWith('.test.ts'));
const targets = files.length > 0 ? files : findTests(path.join(root, 'test')).sort();
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=2', ...options, ...targets],
  { cwd: root, stdio: 'inherit' },
);
process.exit(result.status ?? 1);
