/**
 * The built-in system prompt (DESIGN §9), version 1: what the model is told about where it is and
 * what it can do, composed from facts jp has. Its text is a pure function of those facts, none of
 * which is a clock time (the date is the conversation's, from its log), so the same conversation
 * gets the same bytes on every request and provider prompt caches hit.
 *
 * The system message sent is: this text (or `assistant.system_prompt`, which replaces it), then
 * `assistant.instructions`, then the instruction files (AGENTS.md...) in order, each with its path.
 */

export interface SystemPromptFacts {
  /** Where file tools are confined; tool paths are relative to it. */
  workspaceRoot: string;
  /** The directory jp was started in. */
  workingDirectory: string;
  /** e.g. `Linux 6.8.0 (x64)`. */
  operatingSystem: string;
  /** The conversation's date, YYYY-MM-DD (UTC), from its first recorded event. */
  date: string;
  /** `provider/model`. */
  model: string;
  /** The tools offered, in the order they are offered (by name). */
  tools: readonly { name: string; description: string }[];
  /** Whether a human answered prompts when the turn started (a prompting client was attached). */
  humanAvailable: boolean;
  /**
   * The command sandbox in one sentence: mode, what is writable, the network, how to escalate (sandbox/settings.ts).
   */
  sandbox: string;
}

/** When to use each builtin tool, one line each; other tools get the first sentence of their description. */
const builtinToolLines: Record<string, string> = {
  fs_read_file: 'read a text file, with line numbers; for a long file, read the part you need with offset and limit',
  fs_list_files: 'list files under a directory, optionally by glob (.git, node_modules and .jp are skipped)',
  fs_search:
    'search file contents by regular expression (honours .gitignore); use it to find symbols and usages before ' +
    'reading files',
  fs_create_file: 'create a new file (fails if it exists)',
  fs_modify_file:
    'change a file by exact replacement of old_string with new_string; several edits of one file go in one call ' +
    '(edits), applied all or nothing',
  run_command:
    'run a shell command (/bin/sh -c) in the workspace: builds, tests, git; prefer the file tools for reading, ' +
    'searching and editing',
  ask_user: 'ask the user a question when you cannot proceed without their decision',
};

function toolLine(tool: { name: string; description: string }): string {
  const builtin = builtinToolLines[tool.name];
  if (builtin) return `- ${tool.name}: ${builtin}`;
  const firstSentence = tool.description.split(/(?<=[.!?])\s|\n/)[0]!.trim();
  const cut = firstSentence.length > 160 ? `${firstSentence.slice(0, 159)}…` : firstSentence;
  return `- ${tool.name}${cut ? `: ${cut}` : ''}`;
}

/** The text of the built-in system prompt for these facts. */
export function builtinSystemPrompt(facts: SystemPromptFacts): string {
  const lines = [
    "You are jp, a command-line coding agent. You work in the user's workspace with the tools below, and you answer " +
      'in plain text with Markdown where it helps (your answer is printed on standard output and may be read by a ' +
      'script).',
    '',
    '# Environment',
    `- Workspace root: ${facts.workspaceRoot} (tool paths are relative to it; tools cannot leave it)`,
    `- Working directory: ${facts.workingDirectory}`,
    `- Operating system: ${facts.operatingSystem}; commands run with /bin/sh -c`,
    `- Sandbox: ${facts.sandbox}`,
    `- Date: ${facts.date}`,
    `- Model: ${facts.model}`,
    '',
    '# Tools',
  ];
  if (facts.tools.length === 0)
    lines.push('No tools are available in this conversation: answer from what you know and what the user gave you.');
  else lines.push(...facts.tools.map(toolLine));
  lines.push(
    '',
    'Calls you make in one response that only read (fs_read_file, fs_list_files, fs_search) run at the same time: ' +
      "batch them. Tool output longer than jp's limit is cut in the middle, and the cut is marked.",
    '',
    '# The user',
    facts.humanAvailable
      ? 'A human is at the terminal: they approve tools that change things and answer your questions.'
      : "No human is available right now: tools that need approval are decided by the user's policy without asking, " +
          'and may be denied.',
    'A tool result "unanswered: no user available" means nobody could answer: choose a safe path on your own, or say ' +
      'in your answer what input is required. A denied tool call was not run; do not retry it unchanged.',
    '',
    '# How to work',
    '- Look before you change: search and read the relevant code first; keep changes minimal and in the style of the ' +
      'code around them.',
    "- After changing code, run the project's own checks (tests, type checks) when you can, and report what you ran " +
      'and what you could not.',
    '- Say clearly what you did, what you did not do, and why; never claim a result you did not see.',
  );
  return lines.join('\n');
}

export interface InstructionText {
  /** The file's path as shown to the model (absolute, or `~/`-relative for the user's own). */
  path: string;
  /** Its text, possibly cut to size (the cut is marked in the text). */
  text: string;
}

/**
 * The system message: the base text (built-in or `assistant.system_prompt`), the user's
 * `assistant.instructions`, then the instruction files, nearer ones later.
 */
export function composeSystemPrompt(
  base: string,
  instructions: string | undefined,
  files: readonly InstructionText[],
): string {
  const parts: string[] = [];
  if (base.trim() !== '') parts.push(base.trimEnd());
  if (instructions !== undefined && instructions.trim() !== '')
    parts.push(`# The user's instructions\n\n${instructions.trimEnd()}`);
  if (files.length > 0) {
    parts.push(
      '# Project instructions\n\n' +
        "The files below tell you how to work in this project. They come from the user's own configuration and from " +
        'the workspace root down to the working directory; when they disagree, a later (nearer) file takes ' +
        'precedence over an earlier one.',
    );
    for (const file of files) parts.push(`## ${file.path}\n\n${file.text.trimEnd()}`);
  }
  return parts.join('\n\n');
}
