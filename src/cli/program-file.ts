/**
 * The program file (dist/jp.mjs, not the launcher dist/jp.cjs that loaded it), which query servers
 * are found beside. main.ts records it before anything else runs; until then (tests importing
 * modules directly) it is the script Node was started with.
 */
import path from 'node:path';

let programFile: string | undefined;

export function recordProgramFile(file: string): void {
  programFile = file;
}

/**
 * What a query server is started from (`node <file> __serve`): beside the built program
 * (dist/jp.mjs), the `jp` command itself (dist/jp.cjs, launcher.ts); run from source, the program.
 */
export function serverEntryFile(): string {
  const program = programFile ?? process.argv[1]!;
  return program.endsWith('.mjs') ? path.join(path.dirname(program), 'jp.cjs') : program;
}
