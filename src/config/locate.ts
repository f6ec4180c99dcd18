/**
 * Finds the line of a key path in TOML source text, so that schema errors can name the line the
 * user has to change. Best effort: returns the line of the longest prefix of the path it finds.
 */

interface KeyLine {
  path: string[];
  line: number;
}

export function locateKey(source: string, path: readonly string[]): number | undefined {
  const index = lineIndex(source);
  for (let length = path.length; length > 0; length--) {
    const line = index.get(path.slice(0, length).join('\0'));
    if (line !== undefined) return line;
  }
  return undefined;
}

/**
 * The first line of each key path of the last document asked about: a config with thousands of
 * keys to locate (an untrusted one's ignored MCP servers) is scanned once, not once per key.
 */
let indexed: { source: string; lines: Map<string, number> } | undefined;

function lineIndex(source: string): Map<string, number> {
  if (indexed?.source === source) return indexed.lines;
  const lines = new Map<string, number>();
  for (const entry of keyLines(source)) {
    const key = entry.path.join('\0');
    if (!lines.has(key)) lines.set(key, entry.line);
  }
  indexed = { source, lines };
  return lines;
}

/**
 * Every key path the document names (table headers and keys, inline-table keys included), best effort, without parsing
 * it.
 */
export function keyPaths(source: string): string[][] {
  return [...keyLines(source)].map((entry) => entry.path);
}

/** Every table header and key of the document with its 1-based line, inline-table keys included. */
function* keyLines(source: string): Generator<KeyLine> {
  const lines = source.split('\n');
  let table: string[] = [];
  let multilineDelimiter: string | undefined;
  for (let index = 0; index < lines.length; index++) {
    const lineNumber = index + 1;
    let text = lines[index]!;
    if (multilineDelimiter) {
      const end = text.indexOf(multilineDelimiter);
      if (end === -1) continue;
      text = text.slice(end + 3);
      multilineDelimiter = undefined;
      continue;
    }
    const trimmed = text.trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    if (trimmed.startsWith('[')) {
      const inner = trimmed.startsWith('[[') ? trimmed.slice(2) : trimmed.slice(1);
      const parsed = parseDottedKey(inner, 0);
      if (parsed) {
        table = parsed.keys;
        yield { path: table, line: lineNumber };
      }
      continue;
    }
    const parsed = parseDottedKey(trimmed, 0);
    if (!parsed || trimmed[parsed.end] !== '=') continue;
    const keyPath = [...table, ...parsed.keys];
    yield { path: keyPath, line: lineNumber };
    const value = trimmed.slice(parsed.end + 1).trim();
    if (value.startsWith('{')) yield* inlineTableKeys(value, keyPath, lineNumber);
    for (const delimiter of ['"""', "'''"]) {
      const first = value.indexOf(delimiter);
      if (first !== -1 && value.indexOf(delimiter, first + 3) === -1) multilineDelimiter = delimiter;
    }
  }
}

function* inlineTableKeys(value: string, prefix: string[], line: number): Generator<KeyLine> {
  let position = 1;
  while (position < value.length) {
    while (position < value.length && /[\s,]/.test(value[position]!)) position++;
    const parsed = parseDottedKey(value, position);
    if (!parsed || value[parsed.end] !== '=') return;
    yield { path: [...prefix, ...parsed.keys], line };
    position = skipValue(value, parsed.end + 1);
  }
}

/** Skips one TOML value starting at `position`, returning the index after it. */
function skipValue(text: string, position: number): number {
  let depth = 0;
  let quote: string | undefined;
  for (let index = position; index < text.length; index++) {
    const character = text[index]!;
    if (quote) {
      if (character === '\\' && quote === '"') index++;
      else if (character === quote) quote = undefined;
      continue;
    }
    if (character === '"' || character === "'") quote = character;
    else if (character === '{' || character === '[') depth++;
    else if (character === '}' || character === ']') {
      if (depth === 0) return index + 1;
      depth--;
    } else if (character === ',' && depth === 0) return index + 1;
  }
  return text.length;
}

/** Parses `a.b."c d"` starting at `start`; `end` is the index of the first character after it. */
function parseDottedKey(text: string, start: number): { keys: string[]; end: number } | undefined {
  const keys: string[] = [];
  let position = start;
  for (;;) {
    while (text[position] === ' ' || text[position] === '\t') position++;
    const character = text[position];
    if (character === '"' || character === "'") {
      const close = text.indexOf(character, position + 1);
      if (close === -1) return undefined;
      keys.push(text.slice(position + 1, close));
      position = close + 1;
    } else {
      const match = /^[A-Za-z0-9_-]+/.exec(text.slice(position));
      if (!match) return undefined;
      keys.push(match[0]);
      position += match[0].length;
    }
    while (text[position] === ' ' || text[position] === '\t') position++;
    if (text[position] !== '.') break;
    position++;
  }
  if (text[position] === ']') position++;
  return keys.length > 0 ? { keys, end: position } : undefined;
}
