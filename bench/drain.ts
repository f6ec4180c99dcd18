/** The floor of anything that streams from the fake provider: a bare HTTP client draining the same response. */
import type { FakeProvider } from '../test/support/fake-provider.ts';

export async function drainOnce(provider: FakeProvider): Promise<{ firstByte: number; total: number }> {
  const started = performance.now();
  const response = await fetch(`${provider.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer x' },
    body: JSON.stringify({
      model: 'm',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'hi' }],
    }),
  });
  const reader = response.body!.getReader();
  let firstByte = Number.NaN;
  for (;;) {
    const { done } = await reader.read();
    if (Number.isNaN(firstByte)) firstByte = performance.now() - started;
    if (done) break;
  }
  return { firstByte, total: performance.now() - started };
}
