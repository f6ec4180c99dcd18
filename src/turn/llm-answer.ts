/**
 * LlmInquiry: one structured request that answers a tool's question from the conversation so far,
 * for when no human can. Undefined when the model's reply is not an answer of the asked type.
 */
import { contentFromModel, formContentSchema } from '../inquiry/form.ts';
import type { JsonValue, Question } from '../inquiry/types.ts';
import type { ChatModel, PromptMessage, Usage } from '../llm/types.ts';

export interface LlmAnswerContext {
  model: ChatModel;
  /** The prompt of the conversation so far (turn/history.ts). */
  history: PromptMessage[];
  signal: AbortSignal;
  cacheKey: string;
  /** The request's reported usage. */
  usage(usage: Usage | null): void;
}

export async function answerWithLlm(
  context: LlmAnswerContext,
  tool: string,
  question: Question,
): Promise<JsonValue | undefined> {
  const history = [...context.history];
  // The pending step's tool calls have no results yet; providers refuse that, so leave them out.
  while (history.length > 0) {
    const last = history[history.length - 1]!;
    if (last.role === 'tool' || (last.role === 'assistant' && last.toolCalls.length > 0)) history.pop();
    else break;
  }
  const form = question.answer_type === 'form' ? (question.fields ?? []) : undefined;
  const answerSchema: Record<string, unknown> = form
    ? formContentSchema(form)
    : question.answer_type === 'boolean'
      ? { type: 'boolean' }
      : question.answer_type === 'select'
        ? { type: 'string', enum: question.options ?? [] }
        : { type: 'string' };
  const expected = form
    ? `{"answer": <an object with one entry per field, matching this JSON Schema: ${JSON.stringify(answerSchema)}>}`
    : `{"answer": <${question.answer_type === 'boolean' ? 'true or false' : 'string'}>}`;
  const messages: PromptMessage[] = [
    ...history,
    {
      role: 'user',
      content:
        `The tool "${tool}" needs an answer before it can continue, and no human is available to give it.\n` +
        `Question: ${question.text}\n` +
        (question.answer_type === 'select'
          ? `Choose exactly one of: ${JSON.stringify(question.options ?? [])}\n`
          : '') +
        `Reply with only a JSON object of the form ${expected}.`,
    },
  ];
  let text = '';
  for await (const part of context.model.stream({
    messages,
    tools: [],
    signal: context.signal,
    cacheKey: context.cacheKey,
    responseFormat: {
      type: 'json',
      name: 'inquiry_answer',
      schema: {
        type: 'object',
        properties: { answer: answerSchema },
        required: ['answer'],
        additionalProperties: false,
      },
    },
  })) {
    if (part.type === 'text') text += part.text;
    else if (part.type === 'finish') context.usage(part.usage);
  }
  try {
    const parsed = JSON.parse(text.trim().replace(/^```(?:json)?\s*|\s*```$/g, '')) as { answer?: JsonValue };
    if (form) {
      const content = contentFromModel(parsed.answer);
      return content ? { action: 'accept', content } : undefined;
    }
    return parsed.answer ?? undefined;
  } catch {
    return undefined;
  }
}
