/**
 * `jp web [--port N] [--bind ADDRESS] [--host HOST]... | --stdio`: serves the page that shows every
 * run of this user on this machine (and on the SSH hosts of `[web] hosts` and --host) on
 * 127.0.0.1, behind a token made for this start; prints the URL with the token in it on stdout and
 * serves until interrupted (exit 0). With --stdio it serves this machine's runs to a `jp web`
 * elsewhere over stdin and stdout (what --host runs over ssh). The web modules load only here.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { isIP } from 'node:net';
import path from 'node:path';
import { UsageError } from '../../errors.ts';
import type { CommandContext } from '../context.ts';

export interface WebFlags {
  port?: string;
  bind?: string;
  host?: string[];
  stdio?: boolean;
}

const loopbackNames = ['127.0.0.1', 'localhost', '::1'];

function parsePort(value: string | undefined): number {
  if (value === undefined) return 0;
  if (!/^\d+$/.test(value) || Number(value) > 65535)
    throw new UsageError('flag_invalid', `--port ${JSON.stringify(value)} is not a port number (0-65535)`, {
      hint: 'Give a free port, e.g. --port 8765, or leave it out and jp picks one.',
    });
  return Number(value);
}

function parseBind(value: string | undefined): string {
  if (value === undefined) return '127.0.0.1';
  if (isIP(value) === 0)
    throw new UsageError('flag_invalid', `--bind ${JSON.stringify(value)} is not an IP address`, {
      hint: 'Give the address of one of this machine’s interfaces, e.g. --bind 192.168.1.20.',
    });
  if (value === '0.0.0.0' || value === '::')
    throw new UsageError('flag_invalid', `--bind ${value} would listen on every interface`, {
      hint:
        'Give the one address browsers will use (the page checks that requests name it), ' +
        'or reach 127.0.0.1 through `ssh -L`.',
    });
  return value;
}

export async function webCommand(context: CommandContext, flags: WebFlags): Promise<number> {
  const { LocalSource } = await import('../../web/local-source.ts');
  const environment = context.facts.environment;
  const workspace = context.workspace();
  const local = new LocalSource({
    programFile: context.facts.programFile,
    environment,
    current: existsSync(workspace.conversationsDirectory) ? workspace : undefined,
  });
  if (flags.stdio) {
    if (flags.port !== undefined || flags.bind !== undefined || (flags.host ?? []).length > 0)
      throw new UsageError(
        'flags_conflict',
        '--stdio serves over stdin and stdout: it takes no --port, --bind or --host',
      );
    const { serveSourceOverStdio } = await import('../../web/stdio-source.ts');
    await serveSourceOverStdio(local, process.stdin, (text) => process.stdout.write(text));
    return 0;
  }
  const port = parsePort(flags.port);
  const bind = parseBind(flags.bind);
  const pageDirectory = path.join(path.dirname(context.facts.programFile), 'page');
  if (!existsSync(path.join(pageDirectory, 'index.html')))
    throw new UsageError('page_missing', `the page of jp web is not in ${pageDirectory}`, {
      hint: 'Build jp first (`npm run build`); an installed jp has it.',
    });
  const settings = (await context.config()).value.web ?? {};
  const hosts = [...new Set([...(settings.hosts ?? []), ...(flags.host ?? [])])];
  const { SshSource } = await import('../../web/ssh-source.ts');
  const { WebServer } = await import('../../web/http-server.ts');
  const token = randomBytes(24).toString('base64url');
  const server = new WebServer({
    token,
    hosts: loopbackNames.includes(bind) ? loopbackNames : [...loopbackNames, bind],
    pageDirectory,
    sources: [
      local,
      ...hosts.map(
        (host) =>
          new SshSource({
            host,
            sshCommand: settings.ssh_command ?? ['ssh'],
            remoteCommand: settings.remote_command ?? 'jp',
          }),
      ),
    ],
    clientName: 'jp web',
    bind,
    port,
  });
  let listening: number;
  try {
    listening = await server.listen();
  } catch (error) {
    throw new UsageError(
      'port_unavailable',
      `cannot listen on ${bind}:${port}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      {
        hint: 'Pick another port with --port, or leave it out and jp picks a free one.',
      },
    );
  }
  const shown = bind.includes(':') ? `[${bind}]` : bind;
  context.stdout.write(`http://${shown}:${listening}/#token=${token}\n`);
  await context.stdout.flush();
  if (!loopbackNames.includes(bind))
    context.warn(
      `jp web listens on ${bind}, not only this machine: anyone who can reach it and has the URL can answer your runs`,
    );
  context.status(
    `jp web: serving ${hosts.length > 0 ? `this machine and ${hosts.join(', ')}` : 'this machine'}; ` +
      'open the URL above. Ctrl+C stops it.',
  );
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await server.close();
  return 0;
}
