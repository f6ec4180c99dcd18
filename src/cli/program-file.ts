/**
 * The file query servers are started from: the program itself (dist/jp.mjs), not the launcher that
 * loaded it (dist/jp.cjs), so that a server's start-up, which a query waits for, skips the launcher.
 * main.ts records it before anything else runs; until then (tests importing modules directly) it is
 * the script Node was started with.
 */
let programFile: string | undefined;

export function recordProgramFile(file: string): void {
  programFile = file;
}

export function serverEntryFile(): string {
  return programFile ?? process.argv[1]!;
}
