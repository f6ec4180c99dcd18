/**
 * Images in an editor's prompt (issue 39, point 2): jp acp offers promptCapabilities.image, sends
 * the image to the model beside the text, records it with the user's message so a later request
 * and a loaded session still have it, and refuses an image it cannot send with a clear error.
 * The SDK's client drives the real binary; the fake provider speaks OpenAI's chat wire.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { methods } from '@agentclientprotocol/sdk';
import { initialize, startEditor, stdoutMessages, validateTraffic } from '../support/acp.ts';
import { acpEditor, acpErrorOf, acpFinish, acpNewSession, acpProvider } from '../support/acp-session.ts';
import { startFakeProvider, textStep } from '../support/fake-provider.ts';
import { fakeModelArguments, readEvents, useCleanup } from '../support/jp.ts';

const cleanup = useCleanup();

/** A 1×1 PNG. */
const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

/** The image parts of the user messages of an OpenAI chat request, as data URLs. */
function imageUrls(body: { messages: { role: string; content: unknown }[] }): string[] {
  return body.messages
    .filter((message) => message.role === 'user' && Array.isArray(message.content))
    .flatMap((message) => message.content as { type: string; image_url?: { url: string } }[])
    .filter((part) => part.type === 'image_url')
    .map((part) => part.image_url!.url);
}

describe('jp acp: images in prompts', () => {
  it('an image is sent to the model with the text, kept for the next request, recorded and replayed by session/load', async () => {
    const fake = await acpProvider(cleanup, (() => textStep('A red dot.')) as never);
    const sandbox = cleanup.sandbox();
    const editor = await acpEditor(cleanup, sandbox, fake);
    const capabilities = stdoutMessages(editor)
      .map((message) => message.result as { agentCapabilities?: { promptCapabilities?: { image?: boolean } } })
      .find((result) => result?.agentCapabilities !== undefined)?.agentCapabilities;
    assert.equal(capabilities?.promptCapabilities?.image, true);
    const sessionId = await acpNewSession(editor, sandbox.workspace);

    const answered = await editor.connection.agent.request(methods.agent.session.prompt, {
      sessionId,
      prompt: [
        { type: 'text', text: 'What is in this picture?' },
        { type: 'image', mimeType: 'image/png', data: png },
      ],
    });
    assert.equal(answered.stopReason, 'end_turn');
    const first = fake.requests.at(-1)!.body;
    assert.deepEqual(imageUrls(first), [`data:image/png;base64,${png}`]);
    assert.ok(JSON.stringify(first.messages).includes('What is in this picture?'));

    // The next turn's request carries the whole history, the image with it.
    await editor.connection.agent.request(methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: 'text', text: 'And now?' }],
    });
    assert.deepEqual(imageUrls(fake.requests.at(-1)!.body), [`data:image/png;base64,${png}`]);

    const request = readEvents(sandbox, sessionId).find((event) => event.type === 'chat_request');
    assert.deepEqual(request?.images, [{ media_type: 'image/png', data: png }]);
    await acpFinish(editor);

    // Another editor loads the session: the user's message comes back with its image.
    const other = await acpEditor(cleanup, sandbox, fake);
    await other.connection.agent.request(methods.agent.session.load, {
      sessionId,
      cwd: sandbox.workspace,
      mcpServers: [],
    });
    const replayed = other.updates
      .filter((notification) => notification.update.sessionUpdate === 'user_message_chunk')
      .map((notification) =>
        notification.update.sessionUpdate === 'user_message_chunk' ? notification.update.content : undefined,
      );
    assert.deepEqual(replayed.slice(0, 2), [
      { type: 'text', text: 'What is in this picture?' },
      { type: 'image', mimeType: 'image/png', data: png },
    ]);
    await acpFinish(other);
  });

  it('an image alone is a prompt; an image of a type the providers do not take, or not base64, is refused before the model is asked', async () => {
    const fake = await acpProvider(cleanup, (() => textStep('Seen.')) as never);
    const sandbox = cleanup.sandbox();
    const editor = await acpEditor(cleanup, sandbox, fake);
    const sessionId = await acpNewSession(editor, sandbox.workspace);

    const alone = await editor.connection.agent.request(methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: 'image', mimeType: 'image/png', data: png }],
    });
    assert.equal(alone.stopReason, 'end_turn');
    assert.deepEqual(imageUrls(fake.requests.at(-1)!.body), [`data:image/png;base64,${png}`]);
    const asked = fake.requests.length;

    const tiff = await acpErrorOf(
      editor.connection.agent.request(methods.agent.session.prompt, {
        sessionId,
        prompt: [
          { type: 'text', text: 'and this?' },
          { type: 'image', mimeType: 'image/tiff', data: png },
        ],
      }),
    );
    assert.equal(tiff.code, -32602);
    assert.match(tiff.message, /image 2 of the prompt is "image\/tiff"/);
    assert.match((tiff.data as { hint: string }).hint, /image\/png, image\/jpeg, image\/gif, image\/webp/);

    const garbage = await acpErrorOf(
      editor.connection.agent.request(methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: 'image', mimeType: 'image/png', data: 'not base64!' }],
      }),
    );
    assert.equal(garbage.code, -32602);
    assert.match(garbage.message, /image 1 of the prompt is not base64 data/);
    assert.equal(fake.requests.length, asked, 'the model was not asked');
    assert.equal(
      readEvents(sandbox, sessionId).filter((event) => event.type === 'chat_request').length,
      1,
      'nothing recorded for a refused prompt',
    );
    await acpFinish(editor);
  });

  for (const [wire, imagePart] of [
    ['openai-responses', { type: 'input_image', image_url: `data:image/png;base64,${png}` }],
    ['anthropic', { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } }],
  ] as const)
    it(`${wire}: the image reaches the model in the wire's own image part`, async () => {
      const fake = await startFakeProvider({ wire, steps: [textStep('A dot.')] });
      cleanup.add(() => fake.close());
      const sandbox = cleanup.sandbox();
      const settings = fakeModelArguments(wire, fake.baseUrl);
      const editor = startEditor(sandbox, { args: settings.args, env: settings.env });
      cleanup.add(() => editor.close());
      await initialize(editor);
      const sessionId = await acpNewSession(editor, sandbox.workspace);
      const answered = await editor.connection.agent.request(methods.agent.session.prompt, {
        sessionId,
        prompt: [
          { type: 'text', text: 'What is it?' },
          { type: 'image', mimeType: 'image/png', data: png },
        ],
      });
      assert.equal(answered.stopReason, 'end_turn');
      const body = fake.requests.at(-1)!.body as Record<string, { role?: string; content?: unknown }[]>;
      const messages = wire === 'anthropic' ? body.messages! : body.input!;
      const parts = messages
        .filter((message) => message.role === 'user' && Array.isArray(message.content))
        .flatMap((message) => message.content as { type: string }[]);
      assert.deepEqual(
        // Anthropic's prompt caching may mark the last part; what matters is the image itself.
        parts
          .filter((part) => part.type === imagePart.type)
          .map(({ cache_control: _cache, ...part }: { type: string; cache_control?: unknown }) => part),
        [imagePart],
      );
      assert.equal(await editor.close(), 0, editor.stderr());
      assert.ok(validateTraffic(editor) > 0);
    });
});
