/**
 * The trust a workspace config has now, read without asking anyone: its trust hash (its text and the
 * workspace scripts it names) and whether the user trusts that hash. Used by every command that loads
 * the configuration (context.ts) and by the trust decision itself (workspace-trust.ts).
 */
import { workspaceScripts, workspaceTrustHash } from '../config/trust.ts';
import { readConfigFile } from '../workspace/files.ts';
import { trustDecision } from '../workspace/trust-store.ts';
import type { Workspace } from '../workspace/workspace.ts';

/** The trust hash of a workspace config's text (its text, and the workspace scripts it names when it parses). */
export async function trustHashOf(
  workspace: Workspace,
  source: string,
): Promise<{ sha256: string; layer: Record<string, unknown> | undefined }> {
  const { parse } = await import('smol-toml');
  let layer: Record<string, unknown> | undefined;
  try {
    layer = parse(source) as Record<string, unknown>;
  } catch {
    layer = undefined; // not TOML: the process that loads the configuration says where and why
  }
  return {
    sha256: workspaceTrustHash(source, layer ? workspaceScripts(layer, workspace.root) : [], workspace.root),
    layer,
  };
}

/** The trust hash of the workspace config if its user trusts it as it is now, else null (never asks). */
export async function storedTrust(workspace: Workspace): Promise<string | null> {
  if (workspace.isDefault) return null;
  let source: string;
  try {
    const text = readConfigFile(workspace.configFile);
    if (text === undefined) return null;
    source = text;
  } catch {
    return null;
  }
  const { sha256 } = await trustHashOf(workspace, source);
  return trustDecision(workspace, sha256)?.trusted ? sha256 : null;
}
