/**
 * The file the running program was started from, which query servers are started from too: the
 * installed command (dist/jp.cjs, the script Node was started with), or src/cli/main.ts when run
 * from source, which records itself.
 */
let programFile: string | undefined;

export function recordProgramFile(file: string): void {
  programFile = file;
}

/** What a query server is started from: `node <file> __serve`. */
export function serverEntryFile(): string {
  return programFile ?? process.argv[1]!;
}
