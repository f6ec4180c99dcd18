/**
 * The entry point's first decision, kept apart from prespawn.ts so that deciding costs no import of
 * node:child_process (~12 ms): `jp --version` and `jp conversation ls` never load it.
 */

/** Whether this command line will want a query server (a cheap guess; a wrong guess only costs a start-up). */
export function wantsServer(argv: readonly string[]): boolean {
  if (!argv.includes('query') && !argv.includes('q')) return false;
  const logToStderr = argv.includes('--log-file=-') || argv.some((argument, index) => argument === '--log-file' && argv[index + 1] === '-');
  return !argv.includes('--no-server') && !argv.includes('--help') && !argv.includes('-h') && !logToStderr;
}
