/**
 * The editor hand-off: text goes to a private temporary file, the user's editor ($VISUAL, $EDITOR,
 * else vi) runs on the controlling terminal (never on stdin or stdout, which may be pipes), and the
 * file's content comes back. The caller stops reading the terminal while the editor runs
 * (TerminalInput.released), so no key meant for the editor is taken by jp. The editor command may carry arguments
 * (`code --wait`): it runs through /bin/sh, as git runs it.
 */
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export class EditorFailed extends Error {}

export function editorCommand(environment: NodeJS.ProcessEnv): string {
  return environment.VISUAL?.trim() || environment.EDITOR?.trim() || 'vi';
}

export async function editInTerminal(
  text: string,
  options: { environment: NodeJS.ProcessEnv; extension: string },
): Promise<string> {
  const directory = mkdtempSync(path.join(os.tmpdir(), 'jp-edit-'));
  const file = path.join(directory, `edit${options.extension}`);
  try {
    writeFileSync(file, text, { mode: 0o600 });
    const command = editorCommand(options.environment);
    const terminalFd = openSync('/dev/tty', 'r+');
    let status: number | null;
    try {
      status = await new Promise<number | null>((resolve, reject) => {
        const child = spawn('/bin/sh', ['-c', `${command} "$1"`, 'sh', file], {
          stdio: [terminalFd, terminalFd, terminalFd],
          env: options.environment,
        });
        child.once('error', (error) =>
          reject(new EditorFailed(`cannot start the editor ${JSON.stringify(command)}: ${error.message}`)),
        );
        child.once('exit', (code) => resolve(code));
      });
    } finally {
      closeSync(terminalFd);
    }
    if (status !== 0)
      throw new EditorFailed(`the editor ${JSON.stringify(command)} exited with status ${status}; nothing was changed`);
    return readFileSync(file, 'utf8');
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}
