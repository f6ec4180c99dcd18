/**
 * A prompt's content blocks as the user's message (DESIGN §14). Pure.
 */
import type { ContentBlock } from '@agentclientprotocol/sdk';

/**
 * A prompt's content as the user's message: text as it is; a resource link and an embedded
 * resource as context after it, named by URI (an embedded text resource with its content; binary
 * content is named, not inlined).
 */
export function messageOfPrompt(blocks: readonly ContentBlock[]): string {
  const parts: string[] = [];
  for (const block of blocks) {
    switch (block.type) {
      case 'text':
        parts.push(block.text);
        break;
      case 'resource_link':
        parts.push(`[resource: ${block.uri}${block.name && block.name !== block.uri ? ` (${block.name})` : ''}]`);
        break;
      case 'resource': {
        const resource = block.resource;
        if ('text' in resource) parts.push(`<resource uri="${resource.uri}">\n${resource.text}\n</resource>`);
        else parts.push(`[binary resource: ${resource.uri}${resource.mimeType ? ` (${resource.mimeType})` : ''}]`);
        break;
      }
      case 'image':
      case 'audio':
        parts.push(`[${block.type} omitted: jp does not send ${block.type} to the model]`);
        break;
    }
  }
  return parts.join('\n\n');
}
