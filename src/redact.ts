/**
 * Secret redaction (DESIGN §10). A secret is redacted once, where a text is made (an event, a tool
 * result, an error, a result field, a log line), so the conversation log, the socket, memory,
 * stdout/JSON and what goes back to the model hold the same text.
 *
 * The secrets are the values of environment variables: the provider key variables jp uses and the
 * ones listed in `secrets.env_vars`. They are kept in one Secrets object per process, made by its
 * entry point (the command context, the query server) and passed to whatever writes: the logger,
 * the run and its turns, the results, the MCP connections. Exact values
 * only, no guessing from shapes: a value shorter than 8 characters is not redacted (it would blank
 * out ordinary words). The places a name decides are the values jp is given literally to pass on: an
 * MCP server's `env`, where a name ending in `_TOKEN`, `_API_KEY`, `_SECRET` or `_PASSWORD` marks
 * its value a secret (isSecretName), and its `headers`, where `Authorization`, `Cookie` and names
 * with `token`, `key`, `secret`, `auth` or `password` do (isSecretHeader; the credential after an
 * `Authorization` scheme such as `Bearer` is a secret of its own too).
 *
 * A secret is also redacted in its JSON-escaped forms (once and twice escaped: a log line is JSON,
 * and it may quote a JSON text such as a provider's raw body), so a secret holding `"` or `\` is
 * caught in a log line too.
 */

export const redactedText = '[REDACTED]';
const minimumSecretLength = 8;

/** Whether a variable given literally to a tool (an MCP server's `env`) holds a secret by its name. */
export function isSecretName(name: string): boolean {
  return /_(TOKEN|API_KEY|SECRET|PASSWORD)$/i.test(name);
}

/** Whether an HTTP header jp is given literally (an MCP server's `headers`) carries a secret by its name. */
export function isSecretHeader(name: string): boolean {
  return /^(proxy-)?authorization$|^cookie$|token|key|secret|auth|password/i.test(name);
}

/** The secret and the forms it takes inside a JSON string, and inside a JSON string quoted in one. */
function formsOf(secret: string): string[] {
  const once = JSON.stringify(secret).slice(1, -1);
  const twice = JSON.stringify(once).slice(1, -1);
  return [secret, once, twice];
}

/** The secrets one process knows, and redaction by them. Secrets are only ever added. */
export class Secrets {
  /** Longest first, so that a secret containing another is replaced whole. */
  private values: string[] = [];

  /** Adds the values of `variableNames` in `environment`. */
  add(environment: NodeJS.ProcessEnv, variableNames: Iterable<string>): void {
    const found = new Set(this.values);
    for (const name of variableNames) {
      const value = environment[name];
      if (value !== undefined && value.length >= minimumSecretLength)
        for (const form of formsOf(value)) found.add(form);
    }
    this.values = [...found].sort((a, b) => b.length - a.length);
  }

  /** Adds the values of `variables` whose names mark them secret (isSecretName). */
  addNamed(variables: Record<string, string>): void {
    this.add(variables, Object.keys(variables).filter(isSecretName));
  }

  /** Adds the values of the headers whose names mark them secret (isSecretHeader), and their credentials. */
  addHeaders(headers: Record<string, string>): void {
    const values: Record<string, string> = {};
    for (const [name, value] of Object.entries(headers)) {
      if (!isSecretHeader(name)) continue;
      values[name] = value;
      const credential = /^\S+\s+(\S+)$/.exec(value.trim())?.[1];
      if (credential !== undefined) values[`${name} credential`] = credential;
    }
    this.add(values, Object.keys(values));
  }

  redact(text: string): string {
    let result = text;
    for (const secret of this.values) if (result.includes(secret)) result = result.split(secret).join(redactedText);
    return result;
  }

  /** Redacts every string inside a JSON-like value (keys included); returns the value itself when nothing changed. */
  redactValue<T>(value: T): T {
    if (this.values.length === 0) return value;
    return this.redactInside(value) as T;
  }

  /** A redactor for a text that arrives in pieces. */
  stream(): StreamRedactor {
    return new StreamRedactor(this);
  }

  /** Length of the longest end of `text` that is the beginning (not all) of some secret. */
  longestStartAtEnd(text: string): number {
    let longest = 0;
    for (const secret of this.values) {
      for (let length = Math.min(secret.length - 1, text.length); length > longest; length--) {
        if (text.endsWith(secret.slice(0, length))) {
          longest = length;
          break;
        }
      }
    }
    return longest;
  }

  get empty(): boolean {
    return this.values.length === 0;
  }

  private redactInside(value: unknown): unknown {
    if (typeof value === 'string') return this.redact(value);
    if (Array.isArray(value)) {
      let changed = false;
      const items = value.map((item) => {
        const redacted = this.redactInside(item);
        if (redacted !== item) changed = true;
        return redacted;
      });
      return changed ? items : value;
    }
    if (typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype) {
      let changed = false;
      const entries = Object.entries(value).map(([key, item]) => {
        const redactedKey = this.redact(key);
        const redacted = this.redactInside(item);
        if (redacted !== item || redactedKey !== key) changed = true;
        return [redactedKey, redacted] as const;
      });
      return changed ? Object.fromEntries(entries) : value;
    }
    return value;
  }
}

/**
 * Redacts a text that arrives in pieces (a model's stream): a secret split across two pieces is
 * still caught, because the end of a piece that could be the start of a secret is held back until
 * the next piece (or `end()`) decides.
 */
export class StreamRedactor {
  private readonly secrets: Secrets;
  private held = '';

  constructor(secrets: Secrets) {
    this.secrets = secrets;
  }

  /** The redacted text that can be released now. */
  push(piece: string): string {
    if (this.secrets.empty) return piece;
    const text = this.secrets.redact(this.held + piece);
    const keep = this.secrets.longestStartAtEnd(text);
    this.held = text.slice(text.length - keep);
    return text.slice(0, text.length - keep);
  }

  /** Whatever was held back: the text ended, so it is no secret. */
  end(): string {
    const rest = this.held;
    this.held = '';
    return rest;
  }
}
