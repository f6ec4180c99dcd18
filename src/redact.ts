/**
 * Secret redaction at write time (DESIGN §10): API keys never reach a log, an event, a registry
 * entry, socket traffic or an error message. The secrets are the values of the environment
 * variables that hold keys; every text jp writes passes through `redact`.
 */

const replacement = '[REDACTED]';
const secretNamePattern = /(_API_KEY|_TOKEN|_SECRET|_PASSWORD)$/;

let secrets: string[] = [];
const bearerPattern = /(authorization["']?\s*[:=]\s*["']?(?:bearer|basic)\s+)[A-Za-z0-9._~+/=-]{8,}/gi;
const keyShapePattern = /\b(sk-(?:ant-)?[A-Za-z0-9_-]{16,})/g;

/** Registers the secret values found in `environment` plus any extra variable names (api_key_env). */
export function registerSecretsFrom(environment: NodeJS.ProcessEnv, extraNames: string[] = []): void {
  const found = new Set(secrets);
  for (const [name, value] of Object.entries(environment)) {
    if (!value || value.length < 8) continue;
    if (secretNamePattern.test(name) || extraNames.includes(name)) found.add(value);
  }
  secrets = [...found].sort((a, b) => b.length - a.length);
}

export function redact(text: string): string {
  let result = text;
  for (const secret of secrets) if (result.includes(secret)) result = result.split(secret).join(replacement);
  return result.replace(bearerPattern, `$1${replacement}`).replace(keyShapePattern, replacement);
}
