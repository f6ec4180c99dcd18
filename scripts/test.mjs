// Runs every test file (test/**/*.test.ts) with node's test runner through tsx; `node scripts/test.mjs
// test/e2e/attach.test.ts` runs one file.
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
// CI reads node's TAP; a person gets a progress line and each failure in full (scripts/test-reporter.mjs).
const ci = ['1', 'true'].includes(String(process.env.CI).toLowerCase());
const reporter = options.some((option) => option.startsWith('--test-reporter'))
  ? []
  : [
      '--test-reporter',
      ci ? 'tap' : path.join(root, 'scripts', 'test-reporter.mjs'),
      '--test-reporter-destination',
      'stdout',
    ];
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=2', ...reporter, ...options, ...targets],
  { cwd: root, stdio: 'inherit', env: { ...process.env, JP_TEST_FILE_COUNT: String(targets.length) } },
);
process.exit(result.status ?? 1);
