/** marked-terminal ships no types; this is the one function jp uses. */
declare module 'marked-terminal' {
  export function markedTerminal(
    options?: Record<string, unknown>,
    highlightOptions?: Record<string, unknown>,
  ): unknown;
}
