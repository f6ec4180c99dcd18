/**
 * The layout rules of DESIGN §11, checked on the import graph: the protocol imports nothing else
 * from the project, the engine never reaches a terminal, the routing function does no I/O.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { repositoryRoot } from '../support/jp.ts';

const sourceRoot = path.join(repositoryRoot, 'src');

function importsOf(folder: string): { file: string; target: string }[] {
  const directory = path.join(sourceRoot, folder);
  return readdirSync(directory)
    .filter((name) => name.endsWith('.ts'))
    .flatMap((name) => {
      const text = readFileSync(path.join(directory, name), 'utf8');
      return [...text.matchAll(/(?:^|\n)\s*(?:import|export)[^'"]*?from\s+['"]([^'"]+)['"]/g), ...text.matchAll(/import\(\s*['"]([^'"]+)['"]\s*\)/g)].map((match) => ({
        file: `${folder}/${name}`,
        target: match[1]!,
      }));
    });
}

/** The project folder an import lands in ('' for a package or a node: builtin). */
function folderOf(from: string, target: string): string {
  if (!target.startsWith('.')) return '';
  const resolved = path.relative(sourceRoot, path.resolve(sourceRoot, path.dirname(from), target));
  return resolved.includes(path.sep) ? resolved.split(path.sep)[0]! : '(top)';
}

describe('layout', () => {
  it('protocol/ imports nothing from the project outside itself', () => {
    const outside = importsOf('protocol').filter(({ file, target }) => folderOf(file, target) !== '' && folderOf(file, target) !== 'protocol');
    assert.deepEqual(outside, []);
  });

  it('turn/ (the engine) never imports the client, the output channels, the server or the CLI', () => {
    const forbidden = importsOf('turn').filter(({ file, target }) => ['client', 'output', 'server', 'cli'].includes(folderOf(file, target)));
    assert.deepEqual(forbidden, []);
    const terminal = importsOf('turn').filter(({ target }) => ['node:tty', 'node:readline', '@inquirer/prompts', '@inquirer/core'].includes(target));
    assert.deepEqual(terminal, []);
  });

  it('inquiry/ is pure: no node builtins, no packages, only its own folder', () => {
    const impure = importsOf('inquiry').filter(({ file, target }) => folderOf(file, target) !== 'inquiry');
    assert.deepEqual(impure, []);
  });

  it('the checker sees imports at all (it can fail)', () => {
    assert.ok(importsOf('turn').some(({ file, target }) => folderOf(file, target) === 'conversation'));
  });
});
