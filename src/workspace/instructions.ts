/**
 * Instruction files (DESIGN §9): `AGENTS.md` (and the names in `assistant.instruction_files`) in
 * the user's jp config directory, then in every directory from the workspace root down to the
 * working directory, nearer ones later. Only regular files are read, without blocking (a FIFO or a
 * device is named and skipped), and a workspace file that is a symlink to something outside the
 * workspace (or into `.jp/`) is not read: a repository cannot send the user's other files to the
 * model. Each file is capped, and so is their total; the nearest files keep their text first.
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { describeFileType, readAtMost } from './files.ts';

/** Bytes of one instruction file that reach the model at most. */
export const instructionFileLimit = 32 * 1024;
/** Bytes of all instruction files together that reach the model at most. */
export const instructionTotalLimit = 64 * 1024;

export const defaultInstructionFileName = 'AGENTS.md';

export interface InstructionFile {
  /** Absolute path. */
  file: string;
  /** How the model and `jp config show` see it: relative to the workspace root, or absolute for the user's own. */
  shown: string;
  origin: 'user' | 'workspace';
  /** The file's size. */
  bytes: number;
  /** Bytes of it that reach the model (less than `bytes` when it was cut). */
  included: number;
  /** The text sent, with a mark where it was cut. */
  text: string;
}

export interface InstructionFiles {
  files: InstructionFile[];
  /** What was cut or skipped, and why, naming the file. */
  warnings: string[];
}

export interface InstructionSearch {
  workspaceRoot: string;
  workingDirectory: string;
  /** The user's jp config directory (`$XDG_CONFIG_HOME/jp`). */
  userDirectory: string;
  /** `assistant.instruction_files`: names looked for besides AGENTS.md. */
  extraNames: readonly string[];
}

function isInside(child: string, parent: string): boolean {
  const relative = path.relative(parent, child);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

function realpathOrSelf(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    return path.resolve(file);
  }
}

/** The directories from the workspace root down to the working directory, outside any `.jp/`. */
function directoryChain(root: string, cwd: string): string[] {
  const chain = [root];
  if (!isInside(cwd, root)) return chain;
  let current = root;
  for (const part of path.relative(root, cwd).split(path.sep).filter(Boolean)) {
    if (part.toLowerCase() === '.jp') break;
    current = path.join(current, part);
    chain.push(current);
  }
  return chain;
}

function uniqueNames(extra: readonly string[]): string[] {
  return [...new Set([defaultInstructionFileName, ...extra])];
}

interface ReadFile {
  file: string;
  shown: string;
  origin: 'user' | 'workspace';
  bytes: number;
  /** At most instructionFileLimit bytes of it. */
  head: Buffer;
}

/** Reads one candidate; undefined when it does not exist, a warning when it is skipped. */
function readCandidate(
  file: string,
  shown: string,
  origin: 'user' | 'workspace',
  realRoot: string,
  warnings: string[],
): ReadFile | undefined {
  try {
    lstatSync(file);
  } catch {
    return undefined;
  }
  if (origin === 'workspace') {
    const real = realpathOrSelf(file);
    const relative = path.relative(realRoot, real);
    if (!isInside(real, realRoot) || relative.split(path.sep).some((part) => part.toLowerCase() === '.jp')) {
      warnings.push(
        `instruction file ${shown} is a symbolic link to ${real}, outside the workspace (or inside .jp/); it was not ` +
          `read`,
      );
      return undefined;
    }
  }
  let fd: number;
  try {
    // Non-blocking: a FIFO is refused below instead of waiting for a writer.
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    warnings.push(`instruction file ${shown} could not be read: ${(error as Error).message}`);
    return undefined;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) {
      warnings.push(`instruction file ${shown} is ${describeFileType(stat)}, not a regular file; it was not read`);
      return undefined;
    }
    return { file, shown, origin, bytes: stat.size, head: readAtMost(fd, instructionFileLimit) };
  } catch (error) {
    warnings.push(`instruction file ${shown} could not be read: ${(error as Error).message}`);
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** The first `length` bytes as text, without a partial UTF-8 sequence at the end. */
function utf8Prefix(bytes: Buffer, length: number): string {
  let end = Math.min(length, bytes.length);
  if (end < bytes.length) {
    let back = end;
    while (back > 0 && (bytes[back]! & 0xc0) === 0x80) back--;
    end = back;
  }
  return bytes.subarray(0, end).toString('utf8');
}

export function loadInstructionFiles(search: InstructionSearch): InstructionFiles {
  const warnings: string[] = [];
  const names = uniqueNames(search.extraNames);
  const realRoot = realpathOrSelf(search.workspaceRoot);
  const found: ReadFile[] = [];
  for (const name of names) {
    const file = path.join(search.userDirectory, name);
    const read = readCandidate(file, file, 'user', realRoot, warnings);
    if (read) found.push(read);
  }
  for (const directory of directoryChain(path.resolve(search.workspaceRoot), path.resolve(search.workingDirectory))) {
    for (const name of names) {
      const file = path.join(directory, name);
      const read = readCandidate(file, path.relative(search.workspaceRoot, file), 'workspace', realRoot, warnings);
      if (read) found.push(read);
    }
  }
  // The total is shared out from the nearest file back: nearer files take precedence.
  const included = new Array<number>(found.length);
  let remaining = instructionTotalLimit;
  for (let index = found.length - 1; index >= 0; index--) {
    included[index] = Math.min(found[index]!.head.length, remaining);
    remaining -= included[index]!;
  }
  const files: InstructionFile[] = [];
  found.forEach((read, index) => {
    const keep = included[index]!;
    if (keep === 0) {
      warnings.push(
        `instruction file ${read.shown} (${read.bytes} bytes) was left out: instruction files are limited ` +
          `to ${instructionTotalLimit} bytes in total, and nearer files come first`,
      );
      return;
    }
    let text = utf8Prefix(read.head, keep);
    if (keep < read.bytes) {
      const why =
        keep < read.head.length
          ? `${instructionTotalLimit} bytes for all instruction files together, nearer files first`
          : `${instructionFileLimit} bytes per file`;
      warnings.push(
        `instruction file ${read.shown} was cut to its first ${keep} of ${read.bytes} bytes (the limit is ${why})`,
      );
      text += `\n[… jp cut this file here: it has ${read.bytes} bytes; the limit is ${why} …]`;
    }
    files.push({ file: read.file, shown: read.shown, origin: read.origin, bytes: read.bytes, included: keep, text });
  });
  return { files, warnings };
}
