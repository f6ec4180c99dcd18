/**
 * An MCP tool result as the text the model reads: text as it is, structured content as JSON (unless
 * a text block already carries the same JSON), images and audio as a short description, resource
 * links and embedded resources by name and URI (with their text when they have some).
 */

type Block = Record<string, unknown>;

function describeBytes(base64: unknown): string {
  if (typeof base64 !== 'string') return 'unknown size';
  const padding = base64.endsWith('==') ? 2 : base64.endsWith('=') ? 1 : 0;
  return `${Math.max(0, Math.floor((base64.length * 3) / 4) - padding)} bytes`;
}

function describeBlock(block: Block): string {
  switch (block.type) {
    case 'text':
      return String(block.text ?? '');
    case 'image':
    case 'audio':
      return (
        `[${block.type}: ${String(block.mimeType ?? 'unknown type')}, ${describeBytes(block.data)}; not shown ` +
        `to the model]`
      );
    case 'resource_link': {
      const name = typeof block.title === 'string' ? block.title : String(block.name ?? 'resource');
      const details = [block.mimeType, block.description]
        .filter((part) => typeof part === 'string' && part !== '')
        .join('; ');
      return `[resource link: ${name} <${String(block.uri)}>${details ? ` (${details})` : ''}]`;
    }
    case 'resource': {
      const resource = (block.resource ?? {}) as Block;
      if (typeof resource.text === 'string') return `[resource <${String(resource.uri)}>]\n${resource.text}`;
      return (
        `[resource ` +
        `<${String(resource.uri)}>: ${String(resource.mimeType ?? 'binary')}, ${describeBytes(resource.blob)}]`
      );
    }
    default:
      return `[${String(block.type)} content]`;
  }
}

function sameJson(text: string, value: unknown): boolean {
  try {
    return JSON.stringify(JSON.parse(text)) === JSON.stringify(value);
  } catch {
    return false;
  }
}

/** The text of a `tools/call` result, and whether the server flagged it as an error (`isError`). */
export function describeCallResult(result: Record<string, unknown>): { text: string; isError: boolean } {
  // Servers on protocol 2024-10-07 answer with `toolResult` instead of content blocks.
  if (!Array.isArray(result.content) && 'toolResult' in result) {
    return {
      text: typeof result.toolResult === 'string' ? result.toolResult : JSON.stringify(result.toolResult),
      isError: false,
    };
  }
  const blocks = (Array.isArray(result.content) ? result.content : []) as Block[];
  const parts = blocks.map(describeBlock);
  const structured = result.structuredContent;
  if (
    structured !== undefined &&
    !blocks.some((block) => block.type === 'text' && typeof block.text === 'string' && sameJson(block.text, structured))
  ) {
    parts.push(`structured content: ${JSON.stringify(structured)}`);
  }
  return { text: parts.join('\n'), isError: result.isError === true };
}
