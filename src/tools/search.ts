/**
 * Builtin `fs_search {pattern, path?, glob?, case_sensitive?, max_results?}` (DESIGN §9): the lines
 * of the workspace's files that match a JavaScript regular expression, as `path:line: text`.
 *
 * Which files are searched is decided the same way with or without ripgrep: regular files under
 * `path`, symlinks never followed (so a symlink loop is no loop), `.git`, `.jp` and `node_modules`
 * skipped, and `.gitignore` files honoured from the workspace root down (not those above it, nor
 * git's global or info/exclude files). When `rg` is on PATH it lists them (`rg --files`, which
 * implements .gitignore completely); otherwise a walker here does, with the `ignore` package. The
 * matching is always done here, with one regular-expression dialect, so both give the same output.
 * Files are searched in path order (component by component, as `rg --sort path`), and the search
 * stops once `max_results` matches are found: the first ones in that order are shown.
 */
import { spawn } from 'node:child_process';
import {
  type Dirent,
  accessSync,
  closeSync,
  constants,
  fstatSync,
  openSync,
  readdirSync,
  readSync,
  statSync,
} from 'node:fs';
import path from 'node:path';
import * as z from 'zod/mini';
import { counted } from '../plural.ts';
import { displayPath, PathOutsideRootError, ProtectedPathError, resolveForFileTool } from './paths.ts';
import { defineTool, type Tool, type ToolResult } from './tool.ts';
import type { FileToolScope } from './file-tool-common.ts';
import { searchInWorker, type SearchFindings } from './search-worker.ts';

/** Files larger than this are not searched (they are named in the result). */
export const maxSearchedFileBytes = 16 * 1024 * 1024;
export const defaultMaxResults = 100;
const maxMaxResults = 2000;
/** The tool's own time limit (`conversation.tools.fs_search.timeout_secs` overrides it). */
const defaultTimeoutSeconds = 30;
/** A matching line longer than this is shown as a window around its first match. */
const maxShownLineCharacters = 240;
/** Bytes looked at to tell a binary file (a NUL byte among them), as git does. */
const binaryProbeBytes = 8000;
/** Directories never searched, whatever .gitignore says (fs_list_files skips the same). */
const skippedNames = ['.git', '.jp', 'node_modules'];

type IgnoreMatcher = { ignores(path: string): boolean; test(path: string): { ignored: boolean; unignored: boolean } };
type IgnoreFactory = () => IgnoreMatcher & { add(patterns: string | readonly string[]): IgnoreMatcher };

/** Matchers of gitignore rules, case-sensitive as git and ripgrep are on Linux (the package's default is not). */
async function ignoreFactory(): Promise<IgnoreFactory> {
  const { default: ignore } = await import('ignore');
  return () => ignore({ ignorecase: false });
}

/** Orders paths component by component, by code point: `a/b` before `a-c`, as ripgrep's path sort. */
export function comparePaths(a: string, b: string): number {
  const left = a.split('/');
  const right = b.split('/');
  for (let index = 0; index < Math.min(left.length, right.length); index++) {
    if (left[index] !== right[index]) return left[index]! < right[index]! ? -1 : 1;
  }
  return left.length - right.length;
}

/** The path of the `rg` program on `PATH`, if there is one. */
export function findRipgrep(environment: NodeJS.ProcessEnv): string | undefined {
  for (const directory of (environment.PATH ?? '').split(path.delimiter)) {
    if (directory === '') continue;
    const candidate = path.join(directory, 'rg');
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

function isUnder(relative: string, below: string): boolean {
  return below === '' || relative === below || relative.startsWith(`${below}/`);
}

/** The files under `below` (relative to the root, '' for all) that ripgrep would search. */
function listWithRipgrep(rg: string, realRoot: string, below: string, signal: AbortSignal): Promise<string[]> {
  const args = [
    '--files',
    '--hidden',
    '--no-config',
    '--no-require-git',
    '--no-ignore-parent',
    '--no-ignore-global',
    '--no-ignore-exclude',
    '--no-ignore-dot',
    '--null',
  ];
  for (const name of skippedNames) args.push('--glob', `!${name}`);
  return new Promise((resolve, reject) => {
    const child = spawn(rg, args, { cwd: realRoot, stdio: ['ignore', 'pipe', 'pipe'], signal });
    const output: Buffer[] = [];
    const errors: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => output.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => errors.push(chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      // 1: nothing listed; 2: some directory could not be read (what could be read is listed).
      if (code !== 0 && code !== 1 && code !== 2) {
        reject(new Error(`rg --files failed (exit code ${code}): ${Buffer.concat(errors).toString('utf8').trim()}`));
        return;
      }
      const files = Buffer.concat(output)
        .toString('utf8')
        .split('\0')
        .filter((file) => file !== '')
        .map((file) => file.replace(/^\.\//, ''));
      resolve(files.filter((file) => isUnder(file, below)));
    });
  });
}

/** The same list as listWithRipgrep, without ripgrep. */
async function listWithWalker(realRoot: string, below: string, signal: AbortSignal): Promise<string[]> {
  const ignore = await ignoreFactory();
  const files: string[] = [];
  const walk = (relativeDirectory: string, rules: { base: string; matcher: IgnoreMatcher }[]): void => {
    if (signal.aborted) throw signal.reason;
    const directory = path.join(realRoot, relativeDirectory);
    let entries: Dirent[];
    try {
      entries = readdirSync(directory, { withFileTypes: true });
    } catch {
      return;
    }
    const own = entries.find((entry) => entry.name === '.gitignore' && entry.isFile());
    const stack = own
      ? [...rules, { base: relativeDirectory, matcher: readIgnoreFile(ignore, path.join(directory, '.gitignore')) }]
      : rules;
    for (const entry of entries) {
      if (skippedNames.includes(entry.name)) continue;
      const relative = relativeDirectory === '' ? entry.name : `${relativeDirectory}/${entry.name}`;
      if (entry.isDirectory()) {
        const relevant = isUnder(relative, below) || below.startsWith(`${relative}/`);
        if (relevant && !ignored(stack, `${relative}/`)) walk(relative, stack);
      } else if (entry.isFile() && isUnder(relative, below) && !ignored(stack, relative)) {
        files.push(relative);
      }
    }
  };
  walk('', []);
  return files;
}

function readIgnoreFile(ignore: IgnoreFactory, file: string): IgnoreMatcher {
  const matcher = ignore();
  const text = readSmallFile(file);
  if (text !== undefined) matcher.add(text);
  return matcher;
}

function readSmallFile(file: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile() || stat.size > 1024 * 1024) return undefined;
    return readWhole(fd, stat.size).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** Deeper .gitignore files decide first; within one, the last matching pattern (git's rules). */
function ignored(stack: readonly { base: string; matcher: IgnoreMatcher }[], relative: string): boolean {
  for (let index = stack.length - 1; index >= 0; index--) {
    const { base, matcher } = stack[index]!;
    const result = matcher.test(base === '' ? relative : relative.slice(base.length + 1));
    if (result.ignored) return true;
    if (result.unignored) return false;
  }
  return false;
}

function readWhole(fd: number, size: number): Buffer {
  const buffer = Buffer.alloc(size);
  let filled = 0;
  while (filled < size) {
    const count = readSync(fd, buffer, filled, size - filled, filled);
    if (count === 0) break;
    filled += count;
  }
  return buffer.subarray(0, filled);
}

/** `{a,b}` alternatives expanded, for the gitignore-style matcher (which has none). */
export function expandBraces(glob: string): string[] {
  const open = glob.indexOf('{');
  if (open === -1) return [glob];
  let depth = 0;
  const commas: number[] = [];
  for (let index = open; index < glob.length; index++) {
    const character = glob[index];
    if (character === '{') depth++;
    else if (character === '}' && --depth === 0) {
      const inner = glob.slice(open + 1, index);
      const pieces: string[] = [];
      let start = 0;
      for (const comma of commas) {
        pieces.push(inner.slice(start, comma - open - 1));
        start = comma - open;
      }
      pieces.push(inner.slice(start));
      const rest = expandBraces(glob.slice(index + 1));
      return pieces.flatMap((piece) =>
        expandBraces(glob.slice(0, open) + piece).flatMap((head) => rest.map((tail) => head + tail)),
      );
    } else if (character === ',' && depth === 1) commas.push(index);
  }
  return [glob];
}

export function createSearchTool(scope: FileToolScope): Tool {
  return defineTool({
    name: 'fs_search',
    description:
      "Search the contents of the workspace's files with a regular expression (JavaScript syntax), " +
      'honouring .gitignore (.git, node_modules and .jp are skipped). ' +
      'Returns matching lines as path:line: text, in path order, with a count; ' +
      'binary files and files over 16 MB are not searched.',
    schema: z.strictObject({
      pattern: z
        .string()
        .check(z.minLength(1), z.describe('Regular expression (JavaScript syntax), matched against each line')),
      path: z.optional(
        z.string().check(z.describe('File or directory to search, relative to the workspace root; default: the root')),
      ),
      glob: z.optional(
        z
          .string()
          .check(
            z.describe(
              'Only files whose path (relative to `path`) matches, e.g. "*.ts", "src/**/*.{ts,tsx}"; ' +
                'without a / it matches the file name at any depth',
            ),
          ),
      ),
      case_sensitive: z.optional(z.boolean().check(z.describe('Default true'))),
      max_results: z.optional(
        z
          .int()
          .check(
            z.positive(),
            z.lte(maxMaxResults),
            z.describe(`Matching lines returned at most; default ${defaultMaxResults}`),
          ),
      ),
    }),
    sideEffects: false,
    readOnly: true,
    // The matching runs under this limit (search-worker.ts): a pattern that backtracks without end is
    // stopped and the model told so, never left spinning.
    timeoutSeconds: defaultTimeoutSeconds,
    execute: async (
      { pattern, path: requested, glob, case_sensitive: caseSensitive, max_results: maxResults },
      context,
    ) => {
      let regex: RegExp;
      try {
        regex = new RegExp(pattern, caseSensitive === false ? 'i' : '');
      } catch (error) {
        return {
          kind: 'error',
          message:
            `invalid regular expression ${JSON.stringify(pattern)}: ${(error as Error).message}. ` +
            'The pattern is a JavaScript regular expression: ' +
            'escape ( ) [ ] { } . * + ? ^ $ | \\ to match them literally.',
        };
      }
      let target: string;
      try {
        target = resolveForFileTool(context.toolRoot, requested ?? '.', scope.protectedDirectories);
      } catch (error) {
        if (error instanceof PathOutsideRootError || error instanceof ProtectedPathError)
          return { kind: 'error', message: error.message };
        throw error;
      }
      const realRoot = resolveForFileTool(context.toolRoot, '.', []);
      let targetStat: ReturnType<typeof statSync>;
      try {
        targetStat = statSync(target);
      } catch {
        return { kind: 'error', message: `${requested ?? '.'}: no such file or directory` };
      }
      const below = displayPath(context.toolRoot, target) === '.' ? '' : displayPath(context.toolRoot, target);
      let files: string[];
      if (targetStat.isFile()) files = [below];
      else if (!targetStat.isDirectory())
        return { kind: 'error', message: `${requested} is neither a file nor a directory` };
      else {
        const rg = findRipgrep(context.environment);
        // An rg that cannot run (a broken install) is no reason to fail: the walker lists the same files.
        files = rg
          ? await listWithRipgrep(rg, realRoot, below, context.signal).catch((error: unknown) => {
              if (context.signal.aborted) throw error;
              return listWithWalker(realRoot, below, context.signal);
            })
          : await listWithWalker(realRoot, below, context.signal);
      }
      if (glob !== undefined) {
        const matcher = (await ignoreFactory())().add(expandBraces(glob.replace(/^\.\//, '')));
        files = files.filter((file) => {
          const relative =
            below === '' ? file : file === below ? path.posix.basename(file) : file.slice(below.length + 1);
          return matcher.ignores(relative);
        });
      }
      files.sort(comparePaths);
      const outcome = await searchInWorker(
        {
          root: realRoot,
          files,
          pattern,
          flags: regex.flags,
          maxResults: maxResults ?? defaultMaxResults,
          maxFileBytes: maxSearchedFileBytes,
          binaryProbeBytes,
          maxShownLineCharacters,
        },
        context.timeoutMilliseconds,
        context.signal,
      );
      if (outcome.kind === 'too_slow') {
        return {
          kind: 'error',
          message:
            `fs_search stopped after ${Math.round(context.timeoutMilliseconds / 1000)} s: ` +
            `matching /${pattern}/ over ${counted(files.length, 'file')} took too long. ` +
            'The pattern is probably too slow: nested repetition such as (a+)+ or (.*)*, ' +
            'or alternatives that overlap, can take exponential time on some lines. ' +
            'Simplify it (one quantifier per group, anchors, literal text), or narrow path or glob.',
        };
      }
      return report(outcome.findings, files.length, maxResults ?? defaultMaxResults, {
        pattern,
        where: requested ?? '.',
        glob,
      });
    },
  });
}

function report(
  findings: SearchFindings,
  searched: number,
  maxResults: number,
  asked: { pattern: string; where: string; glob: string | undefined },
): ToolResult {
  const { matches, matchedFiles, binary, large, cut } = findings;
  const scope =
    `${asked.where === '.' ? 'the workspace' : asked.where}` +
    `${asked.glob !== undefined ? ` (files matching ${JSON.stringify(asked.glob)})` : ''}`;
  const header =
    matches.length === 0
      ? `No matches for /${asked.pattern}/ in ${counted(searched, 'file')} of ${scope}.`
      : cut
        ? `The first ${counted(matches.length, 'match', 'matches')} in ${counted(matchedFiles, 'file')} ` +
          `(results cut at max_results = ${maxResults}; ` +
          'there are more: narrow the pattern, path or glob, or raise max_results):'
        : `${counted(matches.length, 'match', 'matches')} in ${counted(matchedFiles, 'file')}:`;
  const lines = [header, ...matches.map((match) => `${match.file}:${match.line}: ${match.text}`)];
  const skipped: string[] = [];
  if (binary.length > 0) skipped.push(counted(binary.length, 'binary file'));
  if (large.length > 0)
    skipped.push(
      `${counted(large.length, 'file')} larger than ${maxSearchedFileBytes / 1024 / 1024} MB ` +
        `(${large.slice(0, 5).join(', ')}${large.length > 5 ? ', …' : ''})`,
    );
  if (skipped.length > 0) lines.push(`[jp: not searched: ${skipped.join('; ')}]`);
  return { kind: 'success', content: lines.join('\n') };
}
