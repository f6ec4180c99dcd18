/**
 * The checkpoint store of one directory (the tool root of a workspace): a shadow git repository in
 * the workspace's user-local state, `$XDG_DATA_HOME/jp/workspace/<id>/checkpoints/<root-key>/`
 * (0700; never in the workspace, never in its `.git`, hidden from the sandbox with the rest of jp's
 * data). A checkpoint is a commit of the directory's state: every file that is not ignored by the
 * workspace's `.gitignore` rules, tracked by the user's git or not, plus the files jp's file tools
 * wrote (even ignored ones). Not in it, and named: files over the size limit and directories that
 * are git repositories of their own. The commit's message holds the permission bits git does not
 * keep (anything but 0644 and 0755), so a restore gives each file its exact mode back.
 */
import { createHash } from 'node:crypto';
import {
  closeSync,
  copyFileSync,
  existsSync,
  lstatSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  realpathSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { lstat } from 'node:fs/promises';
import path from 'node:path';
import { ensurePrivateDirectory } from '../workspace/files.ts';
import { git, type GitCall, type GitOutput, type GitTarget, records } from './git.ts';

export interface NotCovered {
  path: string;
  reason: 'size' | 'repository';
}

export interface Snapshot {
  commit: string;
  tree: string;
  notCovered: NotCovered[];
}

export type SnapshotOutcome = Snapshot | { tooLarge: true; files: number };

export interface Limits {
  /** Files larger than this many bytes are not recorded. */
  maxFileBytes: number;
  /** A directory with more files than this (not ignored) is not checkpointed at all. */
  maxFiles: number;
}

/** One entry of a checkpoint's tree: a regular file (0644 or 0755 in git's terms) or a symbolic link. */
export interface TreeEntry {
  gitMode: string;
  object: string;
}

/** What the commit message of a checkpoint records besides the tree. */
interface CommitNotes {
  modes: Record<string, number>;
  not_covered: NotCovered[];
}

const attributes = '* -text -filter -ident -working-tree-encoding -eol\n';
/** A workspace whose new and changed files git cannot list in this time is too large to checkpoint quickly. */
const listingMilliseconds = 20_000;

/** The store's whole config, written by jp: nothing of the user's or the workspace's is read. */
const configuration = `[core]
\trepositoryformatversion = 0
\tbare = true
\tsharedRepository = 0600
\thooksPath = /dev/null
\tfsmonitor = false
\tautocrlf = false
\tsafecrlf = false
\tsymlinks = true
\tfilemode = true
\tignorecase = false
\tquotePath = false
\texcludesFile = /dev/null
\tattributesFile = /dev/null
\tuntrackedCache = false
[gc]
\tauto = 0
[maintenance]
\tauto = false
[commit]
\tgpgSign = false
[advice]
\taddEmbeddedRepo = false
\taddIgnoredFile = false
`;

/** Writes a file of the store unless it already holds exactly this text. */
function writeIfChanged(file: string, text: string): void {
  try {
    if (readFileSync(file, 'utf8') === text) return;
  } catch {
    // missing: written below
  }
  writeFileSync(file, text, { mode: 0o600 });
}

/** `<basename>-<12 hex of the real path>`: one store per directory. */
export function rootKey(root: string): string {
  let real = root;
  try {
    real = realpathSync(root);
  } catch {
    // a directory that is gone still names its store
  }
  const base = path.basename(real).replace(/[^A-Za-z0-9._-]/g, '_') || 'root';
  return `${base}-${createHash('sha256').update(real).digest('hex').slice(0, 12)}`;
}

export function storeDirectory(userDirectory: string, root: string): string {
  return path.join(userDirectory, 'checkpoints', rootKey(root));
}

export class CheckpointStore {
  readonly directory: string;
  readonly root: string;
  private readonly program: string;
  private readonly environment: NodeJS.ProcessEnv;
  private readonly conversationId: string;
  /** The last checkpoint this store object made (the parent of the next). */
  private parent: string | undefined;

  constructor(options: {
    userDirectory: string;
    root: string;
    program: string;
    environment: NodeJS.ProcessEnv;
    conversationId: string;
  }) {
    this.directory = storeDirectory(options.userDirectory, options.root);
    this.root = options.root;
    this.program = options.program;
    this.environment = options.environment;
    this.conversationId = options.conversationId;
  }

  get exists(): boolean {
    return existsSync(path.join(this.directory, 'repository', 'HEAD'));
  }

  private target(): GitTarget {
    return {
      program: this.program,
      gitDirectory: path.join(this.directory, 'repository'),
      workTree: this.root,
      indexFile: path.join(this.directory, 'indexes', this.conversationId),
      home: this.directory,
    };
  }

  private run(args: readonly string[], call?: GitCall): Promise<GitOutput> {
    return git(this.target(), args, this.environment, call);
  }

  /** Makes the store (0700) and its repository, with jp's own config and attributes only. */
  async prepare(): Promise<void> {
    const repository = path.join(this.directory, 'repository');
    ensurePrivateDirectory(path.join(this.directory, 'indexes'));
    if (!existsSync(path.join(repository, 'HEAD')))
      await this.run(['init', '--quiet', '--bare', '--template=', '--shared=0600', repository]);
    ensurePrivateDirectory(path.join(repository, 'info'));
    writeIfChanged(path.join(repository, 'config'), configuration);
    writeIfChanged(path.join(repository, 'info', 'attributes'), attributes);
    // jp's workspace directory, wherever it is: conversations are never part of a checkpoint.
    writeIfChanged(path.join(repository, 'info', 'exclude'), '.jp/\n');
    this.seedIndex();
  }

  /** A conversation's first index is a copy of the newest one: git then rehashes only what changed. */
  private seedIndex(): void {
    const indexes = path.join(this.directory, 'indexes');
    const own = path.join(indexes, this.conversationId);
    if (existsSync(own)) return;
    const newest = readdirSync(indexes)
      .filter((name) => !name.endsWith('.lock'))
      .map((name) => ({ name, modified: statSync(path.join(indexes, name)).mtimeMs }))
      .sort((a, b) => b.modified - a.modified)[0];
    if (newest) copyFileSync(path.join(indexes, newest.name), own);
  }

  /**
   * Records the directory's state as a commit. `forced`: paths (relative to the root) recorded even
   * when ignored, the files jp's file tools write.
   */
  async snapshot(limits: Limits, forced: readonly string[] = []): Promise<SnapshotOutcome> {
    await this.prepare();
    // What is new or changed since this index was written; the files it holds are counted from its header.
    const tracked = this.indexEntries();
    const listing = await this.run(['ls-files', '-z', '-t', '--others', '--modified', '--exclude-standard'], {
      maxRecords: 2 * limits.maxFiles,
      timeoutMilliseconds: listingMilliseconds,
    });
    const entries = records(listing.stdout);
    const counted = tracked + entries.filter((entry) => entry.startsWith('? ')).length;
    if (listing.cut || counted > limits.maxFiles) return { tooLarge: true, files: counted };
    const notCovered: NotCovered[] = [];
    const excluded: string[] = [];
    const candidates = new Set<string>();
    for (const entry of entries) {
      const file = entry.slice(2);
      if (entry.startsWith('? ') && file.endsWith('/')) {
        notCovered.push({ path: file.slice(0, -1), reason: 'repository' });
        excluded.push(file.slice(0, -1));
      } else if (entry.startsWith('? ') || entry.startsWith('C ')) candidates.add(file);
    }
    for (const file of forced) candidates.add(file);
    for (const file of candidates) {
      const stat = lstatSync(path.join(this.root, file), { throwIfNoEntry: false });
      if (stat?.isFile() && stat.size > limits.maxFileBytes) {
        notCovered.push({ path: file, reason: 'size' });
        excluded.push(file);
      }
    }
    const excludedSet = new Set(excluded);
    // Read alongside git's work: the files are not changing, and the index's files plus the new ones are all there is.
    const modes = this.unusualModes(candidates, excludedSet);
    const pathspecs = ['.', ...excluded.map((file) => `:(exclude,literal)${file}`)];
    await this.run(['add', '--all', '--pathspec-from-file=-', '--pathspec-file-nul'], {
      input: pathspecs.join('\0'),
    });
    if (excluded.length > 0)
      await this.run(
        ['rm', '--cached', '--quiet', '--ignore-unmatch', '-r', '--pathspec-from-file=-', '--pathspec-file-nul'],
        {
          input: excluded.map((file) => `:(literal)${file}`).join('\0'),
        },
      );
    const forcedExisting = forced.filter(
      (file) => !excludedSet.has(file) && lstatSync(path.join(this.root, file), { throwIfNoEntry: false })?.isFile(),
    );
    if (forcedExisting.length > 0)
      await this.run(['add', '--force', '--pathspec-from-file=-', '--pathspec-file-nul'], {
        input: forcedExisting.map((file) => `:(literal)${file}`).join('\0'),
      });
    const tree = (await this.run(['write-tree'])).stdout.toString('utf8').trim();
    const notes: CommitNotes = { modes: await modes, not_covered: notCovered };
    const reference = `refs/jp/${this.conversationId}`;
    this.parent ??= await this.resolve(reference);
    const parent = this.parent;
    const commit = (
      await this.run(['commit-tree', tree, ...(parent ? ['-p', parent] : []), '-F', '-'], {
        input: `jp checkpoint\n\n${JSON.stringify(notes)}\n`,
      })
    ).stdout
      .toString('utf8')
      .trim();
    await this.run(['update-ref', reference, commit]);
    this.parent = commit;
    return { commit, tree, notCovered };
  }

  /** How many files this index holds: the entry count of its header (0 without one). */
  private indexEntries(): number {
    try {
      const header = Buffer.alloc(12);
      const descriptor = openSync(this.target().indexFile, 'r');
      try {
        if (readSync(descriptor, header, 0, 12, 0) < 12) return 0;
      } finally {
        closeSync(descriptor);
      }
      return header.toString('latin1', 0, 4) === 'DIRC' ? header.readUInt32BE(8) : 0;
    } catch {
      return 0;
    }
  }

  /**
   * Permission bits other than git's two (0644, 0755) of the regular files a checkpoint holds: those
   * of the index, and the new ones (`added`), less what it leaves out.
   */
  private async unusualModes(added: ReadonlySet<string>, left: ReadonlySet<string>): Promise<Record<string, number>> {
    const indexed = records((await this.run(['ls-files', '-z', '--cached'])).stdout);
    const files = [...new Set([...indexed, ...added])].filter((file) => !left.has(file));
    const modes: Record<string, number> = {};
    for (let start = 0; start < files.length; start += 256) {
      const batch = files.slice(start, start + 256);
      const stats = await Promise.all(batch.map((file) => lstat(path.join(this.root, file)).catch(() => undefined)));
      stats.forEach((stat, index) => {
        if (!stat?.isFile()) return;
        const mode = stat.mode & 0o7777;
        if (mode !== 0o644 && mode !== 0o755) modes[batch[index]!] = mode;
      });
    }
    return Object.fromEntries(Object.entries(modes).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }

  private async resolve(reference: string): Promise<string | undefined> {
    try {
      return (
        (await this.run(['rev-parse', '--verify', '--quiet', reference])).stdout.toString('utf8').trim() || undefined
      );
    } catch {
      return undefined;
    }
  }

  /** Whether this store holds the commit (a log copied from elsewhere names commits it does not). */
  async has(commit: string): Promise<boolean> {
    if (!/^[0-9a-f]{40,64}$/.test(commit) || !this.exists) return false;
    try {
      await this.run(['cat-file', '-e', `${commit}^{commit}`]);
      return true;
    } catch {
      return false;
    }
  }

  /** The notes of a checkpoint commit: exact modes and what it does not cover. */
  async notes(commit: string): Promise<CommitNotes> {
    const message = (await this.run(['cat-file', 'commit', commit])).stdout.toString('utf8');
    const body = message
      .slice(message.indexOf('\n\n') + 2)
      .split('\n')
      .slice(2)
      .join('\n')
      .trim();
    try {
      const parsed = JSON.parse(body) as Partial<CommitNotes>;
      return { modes: parsed.modes ?? {}, not_covered: parsed.not_covered ?? [] };
    } catch {
      return { modes: {}, not_covered: [] };
    }
  }

  /**
   * The paths that differ between two checkpoints (renames as a deletion and an addition), a change
   * of permission bits git does not keep (0600 to 0644) included.
   */
  async changedPaths(from: string, to: string): Promise<{ path: string; status: string }[]> {
    const output = await this.run(['diff-tree', '-r', '-z', '--no-renames', '--name-status', from, to]);
    const parts = records(output.stdout);
    const changed: { path: string; status: string }[] = [];
    for (let index = 0; index + 1 < parts.length; index += 2)
      changed.push({ status: parts[index]!, path: parts[index + 1]! });
    const listed = new Set(changed.map((entry) => entry.path));
    const [before, after] = [(await this.notes(from)).modes, (await this.notes(to)).modes];
    for (const file of new Set([...Object.keys(before), ...Object.keys(after)]))
      if (!listed.has(file) && before[file] !== after[file]) changed.push({ status: 'M', path: file });
    return changed;
  }

  /** The entries of these paths in a checkpoint; a path it does not hold is absent from the map. */
  async entries(commit: string, paths: readonly string[]): Promise<Map<string, TreeEntry>> {
    const found = new Map<string, TreeEntry>();
    if (paths.length === 0) return found;
    const wanted = new Set(paths);
    const output = await this.run(['ls-tree', '-r', '-z', '--full-tree', commit]);
    for (const entry of records(output.stdout)) {
      const tab = entry.indexOf('\t');
      const [gitMode, , object] = entry.slice(0, tab).split(' ');
      const file = entry.slice(tab + 1);
      if (wanted.has(file) && gitMode && object) found.set(file, { gitMode, object });
    }
    return found;
  }

  /** The bytes of a stored file. */
  async blob(object: string): Promise<Buffer> {
    return (await this.run(['cat-file', 'blob', object])).stdout;
  }

  /** A unified diff between two checkpoints, of these paths only. */
  async unifiedDiff(from: string, to: string, paths: readonly string[]): Promise<Buffer> {
    const parts: Buffer[] = [];
    for (const chunk of chunks(paths))
      parts.push(
        (
          await this.run([
            'diff',
            '--no-color',
            '--no-ext-diff',
            '--no-textconv',
            '--no-renames',
            from,
            to,
            '--',
            ...chunk,
          ])
        ).stdout,
      );
    return Buffer.concat(parts);
  }

  /** Line counts per path (`binary` for a binary file). */
  async numstat(
    from: string,
    to: string,
    paths: readonly string[],
  ): Promise<Map<string, { added: number; removed: number } | 'binary'>> {
    const stats = new Map<string, { added: number; removed: number } | 'binary'>();
    for (const chunk of chunks(paths)) {
      const output = await this.run([
        'diff',
        '--numstat',
        '-z',
        '--no-renames',
        '--no-textconv',
        from,
        to,
        '--',
        ...chunk,
      ]);
      for (const entry of records(output.stdout)) {
        const [added, removed, file] = entry.split('\t');
        if (file === undefined) continue;
        stats.set(file, added === '-' ? 'binary' : { added: Number(added), removed: Number(removed) });
      }
    }
    return stats;
  }
}

/** Literal pathspecs in groups small enough for one command line. */
function chunks(paths: readonly string[]): string[][] {
  const groups: string[][] = [];
  for (let index = 0; index < paths.length; index += 500)
    groups.push(paths.slice(index, index + 500).map((file) => `:(literal)${file}`));
  return groups;
}
