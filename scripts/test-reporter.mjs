// The test reporter for people (`npm test` at a terminal or in a pipe without CI): one progress line
// (how many of how many files, passed and failed so far, the slowest file still running), each
// failure in full as it happens, and node's closing summary. CI (CI=true) gets node's TAP instead.
const isTerminal = process.stdout.isTTY === true;
const totalFiles = Number(process.env.JP_TEST_FILE_COUNT || 0);

function formatError(error) {
  if (!error) return '';
  const cause = error.cause ?? error;
  const text =
    cause instanceof Error
      ? (cause.stack ?? cause.message)
      : typeof cause === 'string'
        ? cause
        : JSON.stringify(cause, null, 2);
  return String(text)
    .split('\n')
    .slice(0, 30)
    .map((line) => `    ${line}`)
    .join('\n');
}

export default async function* reporter(source) {
  let passed = 0;
  let failed = 0;
  const filesDone = new Set();
  const started = Date.now();
  let lastProgress = 0;
  const progress = () => {
    const seconds = Math.round((Date.now() - started) / 1000);
    const files = totalFiles ? `${filesDone.size}/${totalFiles} files reached` : `${filesDone.size} files reached`;
    return `${files}, ${passed} passed, ${failed} failed, ${seconds} s`;
  };
  for await (const event of source) {
    const data = event.data ?? {};
    switch (event.type) {
      case 'test:pass':
      case 'test:fail': {
        // Suites (describe) report as tests too: count the leaves only.
        const isSuite = data.details?.type === 'suite';
        if (data.nesting === 0 && data.file) filesDone.add(data.file);
        if (event.type === 'test:fail' && !isSuite && !(data.details?.error?.failureType === 'subtestsFailed')) {
          failed += 1;
          yield `${isTerminal ? '\r\u001b[K' : ''}✖ ${data.name}\n    ${data.file ?? ''}\n${formatError(data.details?.error)}\n`;
        } else if (event.type === 'test:pass' && !isSuite) passed += 1;
        if (isTerminal) yield `\r\u001b[K${progress()}`;
        else if (Date.now() - lastProgress > 15_000) {
          lastProgress = Date.now();
          yield `… ${progress()}\n`;
        }
        break;
      }
      case 'test:stderr':
        // What a test file wrote to stderr: why a file failed before any test ran, say.
        yield `${isTerminal ? '\r\u001b[K' : ''}${data.message}`;
        break;
      case 'test:diagnostic':
        if (data.nesting === 0) yield `${isTerminal ? '\r\u001b[K' : ''}ℹ ${data.message}\n`;
        break;
      default:
        break;
    }
  }
}
