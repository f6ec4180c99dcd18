/**
 * fs_read_file: a UTF-8 text file of the workspace (or the user's editor's buffer of it) as
 * numbered lines, from `offset`, at most `limit` lines and what fits the output limit, with a note
 * saying where they sit when they are not the whole file. Memory stays bounded whatever the file's
 * size (it is read in chunks; its lines past those shown are only counted). FIFOs, devices,
 * directories and binary files are refused with what they are.
 */
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';
import * as z from 'zod/mini';
import { describeFileType } from '../workspace/files.ts';
import { counted } from '../plural.ts';
import { editorMayOpen, guard, pathDescription, type FileToolScope } from './file-tool-common.ts';
import { resolveForFileTool } from './paths.ts';
import { defineTool, type Tool, type ToolResult } from './tool.ts';

/** Lines fs_read_file returns when no `limit` is given. */
export const defaultReadLines = 2000;
/** Bytes fs_read_file scans to count a file's lines; past this the total is given as "at least". */
const maxCountedBytes = 512 * 1024 * 1024;
/** Bytes looked at to tell a binary file (a NUL byte among them), as git does. */
const binaryProbeBytes = 8000;
const readChunkBytes = 1024 * 1024;
/** Room kept in the output limit for fs_read_file's own note. */
const noteRoom = 300;

function readAt(fd: number, position: number, length: number): Buffer {
  const buffer = Buffer.alloc(length);
  let filled = 0;
  while (filled < length) {
    const count = readSync(fd, buffer, filled, length - filled, position + filled);
    if (count === 0) break;
    filled += count;
  }
  return buffer.subarray(0, filled);
}

function notRegular(requested: string, stat: Stats): ToolResult {
  const hint = stat.isDirectory() ? '; use fs_list_files to see what it contains' : '';
  return {
    kind: 'error',
    message: `${requested} is ${describeFileType(stat)}; fs_read_file reads regular files only${hint}`,
  };
}

interface LineRange {
  /** The lines shown, numbered from `first`. */
  lines: string[];
  first: number;
  /** Lines in the file (those counted, when `counted` is false). */
  total: number;
  counted: boolean;
}

/**
 * Lines `first`.. of the file, at most `count` of them and at most `budget` characters (the first
 * line is always given whole: the output limit then cuts it), read in chunks so that memory stays
 * bounded whatever the file's size; the lines after them are only counted.
 */
function readLineRange(fd: number, size: number, first: number, count: number, budget: number): LineRange {
  const lines: string[] = [];
  let pieces: Buffer[] = [];
  let pieceBytes = 0;
  // A line longer than this is kept only in part (a single-line file of gigabytes stays bounded).
  const maxLineBytes = budget * 4 + 4;
  let lineNumber = 1;
  let used = 0;
  let collecting = first === 1;
  let full = false;
  let position = 0;
  const closeLine = (): void => {
    if (collecting) {
      let text = Buffer.concat(pieces).toString('utf8');
      if (pieceBytes > maxLineBytes) text += ' [… the rest of this line was left out by jp …]';
      // As shown: the number, a tab, the text, a newline.
      const cost = String(lineNumber).length + text.length + 2;
      if (lines.length > 0 && used + cost > budget) full = true;
      else {
        lines.push(text);
        used += cost;
        if (lines.length === count) full = true;
      }
    }
    pieces = [];
    pieceBytes = 0;
    lineNumber++;
    collecting = !full && lineNumber >= first;
  };
  while (position < size && position < maxCountedBytes) {
    const chunk = readAt(fd, position, Math.min(readChunkBytes, size - position));
    if (chunk.length === 0) break;
    let start = 0;
    for (;;) {
      const newline = chunk.indexOf(10, start);
      const keep = (piece: Buffer): void => {
        if (!collecting || pieceBytes > maxLineBytes) return;
        pieces.push(piece);
        pieceBytes += piece.length;
      };
      if (newline === -1) {
        keep(chunk.subarray(start));
        break;
      }
      keep(chunk.subarray(start, newline));
      closeLine();
      start = newline + 1;
    }
    position += chunk.length;
  }
  const scannedAll = position >= size;
  // A last line without a newline is a line too.
  if (scannedAll && size > 0 && readAt(fd, size - 1, 1)[0] !== 10) closeLine();
  return { lines, first, total: lineNumber - 1, counted: scannedAll };
}

/** Lines `first`.. of a text held in memory (the editor's buffer), as readLineRange gives them of a file. */
function linesOfText(text: string, first: number, count: number, budget: number): LineRange {
  const all = text === '' ? [] : (text.endsWith('\n') ? text.slice(0, -1) : text).split('\n');
  const lines: string[] = [];
  let used = 0;
  for (const line of all.slice(first - 1, first - 1 + count)) {
    if (lines.length > 0 && used + line.length + 1 > budget) break;
    lines.push(line);
    used += line.length + 1;
  }
  return { lines, first, total: all.length, counted: true };
}

/**
 * What fs_read_file answers for `range` of a file of `size` bytes: numbered lines, and where they sit in the file when
 * they are not all of it.
 */
function readResult(requested: string, range: LineRange, size: number): ToolResult {
  const { first } = range;
  const total = `${range.counted ? '' : 'at least '}${counted(range.total, 'line')}`;
  if (range.lines.length === 0) {
    if (size === 0) return { kind: 'success', content: `[jp: ${requested} is empty]` };
    return { kind: 'error', message: `offset ${first} is past the end of ${requested}, which has ${total}` };
  }
  const last = first + range.lines.length - 1;
  const numbered = range.lines.map((line, index) => `${first + index}\t${line}`).join('\n');
  if (first === 1 && range.counted && last === range.total) return { kind: 'success', content: numbered };
  const more = last < range.total || !range.counted ? `; continue with offset=${last + 1}` : '';
  return {
    kind: 'success',
    content: `${numbered}\n[jp: lines ${first}-${last} of ${total} (${counted(size, 'byte')}) shown${more}]`,
  };
}

export function createReadFileTool(scope: FileToolScope): Tool {
  return defineTool({
    name: 'fs_read_file',
    description:
      `Read a UTF-8 text file of the workspace, each line prefixed with its number and a tab. ` +
      `Gives ${defaultReadLines} lines from \`offset\` (default 1) unless \`limit\` says otherwise, ` +
      'and says how long the file is when it returns only a part of it.',
    schema: z.strictObject({
      path: z.string().check(z.describe(pathDescription)),
      offset: z.optional(z.int().check(z.positive(), z.describe('The first line to read, counted from 1'))),
      limit: z.optional(z.int().check(z.positive(), z.describe(`How many lines to read; default ${defaultReadLines}`))),
    }),
    sideEffects: false,
    readOnly: true,
    execute: ({ path: requested, offset, limit }, context) =>
      guard(requested, async () => {
        const file = resolveForFileTool(context.toolRoot, requested, scope.protectedDirectories);
        const inEditor = editorMayOpen(file) ? await context.editorFiles?.read?.(file) : undefined;
        if (inEditor !== undefined)
          return readResult(
            requested,
            linesOfText(inEditor, offset ?? 1, limit ?? defaultReadLines, context.outputLimit - noteRoom),
            Buffer.byteLength(inEditor),
          );
        // Non-blocking: a FIFO is refused below instead of waiting for a writer.
        const fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
        try {
          const stat = fstatSync(fd);
          if (!stat.isFile()) return notRegular(requested, stat);
          const size = stat.size;
          if (readAt(fd, 0, Math.min(size, binaryProbeBytes)).includes(0)) {
            return {
              kind: 'error',
              message:
                `${requested} looks like a binary file (${counted(size, 'byte')}, with NUL bytes); ` +
                `fs_read_file reads text files only`,
            };
          }
          return readResult(
            requested,
            readLineRange(fd, size, offset ?? 1, limit ?? defaultReadLines, context.outputLimit - noteRoom),
            size,
          );
        } finally {
          closeSync(fd);
        }
      }),
  });
}
