/**
 * The matching of `fs_search`, in a worker thread with a hard deadline (DESIGN §9). A JavaScript
 * regular expression backtracks: `(a+)+$` over 35 `a`s and a `!` runs for minutes inside one call
 * that nothing on its thread can interrupt. Here the main thread stays free, and a search that
 * passes its deadline, or whose run stops, is ended by terminating the worker: the model is told the
 * pattern was too slow, the run goes on.
 *
 * The worker reads and matches the files it is given, in order, and posts what it found. Its code
 * is plain JavaScript run with `eval` (a worker needs code of its own, and jp ships as one bundle).
 */
import { Worker } from 'node:worker_threads';

export interface SearchJob {
  root: string;
  /** Paths relative to `root`, in the order they are searched. */
  files: readonly string[];
  pattern: string;
  flags: string;
  maxResults: number;
  maxFileBytes: number;
  binaryProbeBytes: number;
  maxShownLineCharacters: number;
}

export interface SearchFindings {
  matches: { file: string; line: number; text: string }[];
  matchedFiles: number;
  binary: string[];
  large: string[];
  /** More matches than maxResults: the search stopped at the first maxResults. */
  cut: boolean;
}

export type SearchOutcome = { kind: 'done'; findings: SearchFindings } | { kind: 'too_slow' };

const workerSource = String.raw`
const { parentPort, workerData: job } = require('node:worker_threads');
const fs = require('node:fs');
const path = require('node:path');
const regex = new RegExp(job.pattern, job.flags);
const readWhole = (fd, size) => {
  const buffer = Buffer.alloc(size);
  let filled = 0;
  while (filled < size) {
    const count = fs.readSync(fd, buffer, filled, size - filled, filled);
    if (count === 0) break;
    filled += count;
  }
  return buffer.subarray(0, filled);
};
const shownLine = (line) => {
  const clean = line.endsWith('\r') ? line.slice(0, -1) : line;
  if (clean.length <= job.maxShownLineCharacters) return clean;
  const at = clean.search(regex);
  const start = Math.max(0, Math.min(at - 40, clean.length - job.maxShownLineCharacters));
  const end = start + job.maxShownLineCharacters;
  return (start > 0 ? '…' : '') + clean.slice(start, end) + (end < clean.length ? '…' : '');
};
const findings = { matches: [], matchedFiles: 0, binary: [], large: [], cut: false };
const flags = fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | fs.constants.O_NOFOLLOW;
search: for (const file of job.files) {
  let fd;
  try {
    fd = fs.openSync(path.join(job.root, file), flags);
  } catch {
    continue;
  }
  let content;
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile()) continue;
    if (stat.size > job.maxFileBytes) {
      findings.large.push(file);
      continue;
    }
    content = readWhole(fd, stat.size);
  } finally {
    fs.closeSync(fd);
  }
  if (content.subarray(0, job.binaryProbeBytes).includes(0)) {
    findings.binary.push(file);
    continue;
  }
  const lines = content.toString('utf8').split('\n');
  let matched = false;
  for (let index = 0; index < lines.length; index++) {
    if (!regex.test(lines[index])) continue;
    if (findings.matches.length === job.maxResults) {
      findings.cut = true;
      break search;
    }
    findings.matches.push({ file, line: index + 1, text: shownLine(lines[index]) });
    if (!matched) findings.matchedFiles++;
    matched = true;
  }
}
parentPort.postMessage(findings);
`;

/**
 * Runs the job in a worker; `too_slow` when it did not finish within `deadlineMilliseconds`. A stop of
 * the run (`signal`) ends the worker too and rejects with the signal's reason.
 */
export function searchInWorker(
  job: SearchJob,
  deadlineMilliseconds: number,
  signal: AbortSignal,
): Promise<SearchOutcome> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const worker = new Worker(workerSource, { eval: true, workerData: job });
    let settled = false;
    const settle = (outcome: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      void worker.terminate();
      outcome();
    };
    const timer = setTimeout(() => settle(() => resolve({ kind: 'too_slow' })), deadlineMilliseconds);
    const onAbort = (): void => settle(() => reject(signal.reason));
    signal.addEventListener('abort', onAbort, { once: true });
    worker.once('message', (findings: SearchFindings) => settle(() => resolve({ kind: 'done', findings })));
    worker.once('error', (error) => settle(() => reject(error)));
    worker.once('exit', (code) =>
      settle(() => reject(new Error(`the search worker exited (code ${code}) before it answered`))),
    );
  });
}
