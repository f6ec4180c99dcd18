/**
 * A prompt's content blocks as the user's message (DESIGN §14): its text, and the images that go
 * with it. Pure.
 */
import type { ContentBlock } from '@agentclientprotocol/sdk';
import type { ImageAttachment } from '../conversation/events.ts';
import { UsageError } from '../errors.ts';

/** The image types the providers jp speaks to (OpenAI, Anthropic, and servers like them) take. */
const imageTypes = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];

/**
 * A prompt's content as the user's message: text as it is; a resource link and an embedded
 * resource as context after it, named by URI (an embedded text resource with its content; binary
 * content is named, not inlined). Images go apart (imagesOfPrompt); audio is named, not sent.
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
        break;
      case 'audio':
        parts.push('[audio omitted: jp does not send audio to the model]');
        break;
    }
  }
  return parts.join('\n\n');
}

/** The prompt's images, checked: a type the providers take, and base64 bytes. */
export function imagesOfPrompt(blocks: readonly ContentBlock[]): ImageAttachment[] {
  const images: ImageAttachment[] = [];
  for (const [index, block] of blocks.entries()) {
    if (block.type !== 'image') continue;
    if (!imageTypes.includes(block.mimeType))
      throw new UsageError(
        'image_type_unsupported',
        `image ${index + 1} of the prompt is ${JSON.stringify(block.mimeType)}`,
        {
          hint: `jp sends ${imageTypes.join(', ')} images to the model.`,
        },
      );
    if (block.data === '' || !/^[A-Za-z0-9+/]+={0,2}$/.test(block.data) || block.data.length % 4 !== 0)
      throw new UsageError('image_invalid', `image ${index + 1} of the prompt is not base64 data`, {
        hint: 'An ACP image block carries its bytes in base64 in `data`.',
      });
    images.push({ media_type: block.mimeType, data: block.data });
  }
  return images;
}
