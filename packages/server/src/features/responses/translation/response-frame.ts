import type { ResponseObject, ResponseOutputItem, ResponsesCreateBody, ResponseUsage, ServedBy } from '@svc/schemas';

/** What every form of one response shares: its id, time, the request it echoes and who serves it. */
export interface ResponseFrame {
  id: string;
  /** Unix seconds. */
  createdAt: number;
  /** svc's public model id. */
  model: string;
  body: ResponsesCreateBody;
  previousResponseId: string | null;
  store: boolean;
  servedBy: ServedBy;
}

export interface ResponseOutcome {
  status: ResponseObject['status'];
  output: ResponseOutputItem[];
  usage: ResponseUsage | null;
  error: { code: string; message: string } | null;
  incompleteReason?: string;
}

/**
 * The Response object in OpenAI's shape: the outcome, and the request's settings echoed with
 * OpenAI's defaults where the caller sent none (temperature and top_p 1, tool_choice auto,
 * parallel tool calls on, text format text, truncation disabled).
 */
export function responseObject(frame: ResponseFrame, outcome: ResponseOutcome): ResponseObject {
  const { body } = frame;
  const finished = outcome.status === 'completed' || outcome.status === 'incomplete' || outcome.status === 'failed';
  return {
    id: frame.id,
    object: 'response',
    created_at: frame.createdAt,
    status: outcome.status,
    background: false,
    completed_at: outcome.status === 'completed' ? Math.floor(Date.now() / 1000) : null,
    error: outcome.error,
    incomplete_details: outcome.incompleteReason ? { reason: outcome.incompleteReason } : null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    metadata: body.metadata ?? {},
    model: frame.model,
    output: outcome.output,
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: frame.previousResponseId,
    reasoning: { effort: (body as { reasoning?: { effort?: unknown } | null }).reasoning?.effort ?? null, summary: null },
    store: frame.store,
    temperature: body.temperature ?? 1,
    text: { ...(body.text ?? {}), format: body.text?.format ?? { type: 'text' } },
    tool_choice: body.tool_choice ?? 'auto',
    tools: body.tools ?? [],
    top_p: body.top_p ?? 1,
    truncation: 'disabled',
    usage: finished ? outcome.usage : null,
    user: body.user ?? null,
    svc: frame.servedBy,
  };
}
