/**
 * No global monkey-patching anywhere in src/: nothing replaces a method of process's streams,
 * writes to the global object, changes a built-in prototype, or switches V8's flags or calls its
 * collector at run time. Such a patch changes code that never
 * asked for it (a library, a test, the next engineer's module); each need has a direct way.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { repositoryRoot } from '../support/jp.ts';

const patches: { what: string; pattern: RegExp }[] = [
  {
    what: 'a method or property of process.stdout/stderr/stdin replaced',
    pattern: /\bprocess\.(stdout|stderr|stdin)\.\w+\s*=(?!=)/,
  },
  { what: 'a property of process replaced', pattern: /\bprocess\.(?!exitCode\b)\w+\s*=(?!=)/ },
  { what: 'the global object written to', pattern: /\b(globalThis|global)(\.\w+|\[[^\]]+\])\s*=(?!=)/ },
  { what: 'the global object taken to write into', pattern: /=\s*(globalThis|global)\s+as\b/ },
  {
    what: 'a property defined on a global',
    pattern:
      /\bObject\.(defineProperty|defineProperties|assign|setPrototypeOf)\(\s*(globalThis|global|process|console|[A-Z]\w*\.prototype)\b/,
  },
  { what: 'a built-in prototype changed', pattern: /\b[A-Z]\w*\.prototype\.\w+\s*=(?!=)/ },
  { what: 'a console method replaced', pattern: /\bconsole\.\w+\s*=(?!=)/ },
  {
    what: "V8's flags changed at run time (a process-wide switch, e.g. exposing the collector)",
    pattern: /\bsetFlagsFromString\b/,
  },
  {
    what: 'the collector called by hand',
    pattern: /\bexpose[-_]gc\b|\brunInNewContext\(\s*['"]gc['"]|\bglobalThis\.gc\b|(?<![\w.])gc\(\)/,
  },
];

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(directory, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return /\.(ts|mts|cts|js|mjs|cjs)$/.test(entry.name) ? [full] : [];
  });
}

describe('global monkey-patches', () => {
  it('none in src/', () => {
    const found: string[] = [];
    for (const file of sourceFiles(path.join(repositoryRoot, 'src'))) {
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, index) => {
          for (const { what, pattern } of patches) {
            if (pattern.test(line))
              found.push(`${path.relative(repositoryRoot, file)}:${index + 1}: ${what}: ${line.trim()}`);
          }
        });
    }
    assert.deepEqual(found, []);
  });

  it('each pattern recognises the patches it names', () => {
    const examples = [
      'process.stdout.write = write as typeof process.stdout.write;',
      'process.stderr.write = (chunk) => true;',
      'process.emitWarning = () => {};',
      'globalThis.Headers = FetchHeaders;',
      "globalThis['crypto'] = undefined;",
      'const slot = globalThis as { [key]?: number };',
      "Object.defineProperty(globalThis, 'Headers', { value: FetchHeaders });",
      'Array.prototype.last = function () {};',
      'console.log = () => {};',
      "v8.setFlagsFromString('--expose-gc');",
      "const collect = vm.runInNewContext('gc');",
      "spawn(process.execPath, ['--expose-gc', entry]);",
      'if (count % 256 === 0) gc();',
    ];
    for (const example of examples)
      assert.ok(
        patches.some(({ pattern }) => pattern.test(example)),
        example,
      );
    for (const fine of [
      'process.exitCode = 2;',
      'if (process.stdout.isTTY === true) x();',
      'const same = globalThis.fetch === fetch;',
      'this.write = write;',
    ]) {
      assert.ok(!patches.some(({ pattern }) => pattern.test(fine)), fine);
    }
  });
});
