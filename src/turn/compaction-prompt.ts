/**
 * The system prompt of a compaction request (DESIGN §6): the model is asked to write the summary
 * that stands for the older part of a conversation from then on. Versioned with jp; changing it
 * changes what later requests of long conversations carry.
 */
export const compactionPromptVersion = 1;

export function compactionPrompt(maxWords: number): string {
  return [
    'You are compacting the history of a conversation between a user and an AI coding assistant that uses tools.',
    "The conversation has grown too long for the model's context window. What you write replaces the transcript you " +
      'are given:',
    'the assistant will continue the work with only your summary and the most recent messages, so it must not lose ' +
      'anything it needs.',
    '',
    'Write a summary that keeps:',
    '- what the user asked for, in their words where it matters, and every constraint or preference they stated;',
    '- what has been done so far: files read, created or changed (with paths), commands run and their outcomes;',
    '- facts learned from tool results that are still needed (names, values, errors, decisions), quoted exactly when ' +
      'short;',
    '- what remains to do and what the assistant was about to do next.',
    'If the transcript starts with an earlier summary, merge it in: the new summary replaces it.',
    '',
    `Write plain text, at most ${maxWords} words. Do not address the user; do not add anything that is not in the ` +
      `transcript.`,
  ].join('\n');
}
