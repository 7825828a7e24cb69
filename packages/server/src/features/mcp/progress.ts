import { setTimeout as sleep } from 'node:timers/promises';
import { createParser } from 'eventsource-parser';
import type { AgentProgress, RouteDefinition } from '@svc/schemas';
import type { ContractDispatch, DispatchAnswer, DispatchCaller, DispatchInput } from '../../http/dispatch.ts';

/** Sends one `notifications/progress` of the call. */
export type ReportProgress = (update: { progress: number; total?: number; message?: string }) => Promise<void>;

const answerOf = (status: number, json: unknown): DispatchAnswer => ({ status, headers: {}, json, text: JSON.stringify(json), stream: undefined });

/**
 * Runs a route that declares its progress (`agent.progress` in the contract), reporting each step:
 * a streamed route event by event, gathered back into the JSON it answers unstreamed; a polled
 * route read again until it says it is done. Every call goes through the REST route.
 */
export async function followProgress(
  dispatch: ContractDispatch,
  route: RouteDefinition,
  progress: AgentProgress,
  input: DispatchInput,
  caller: DispatchCaller,
  report: ReportProgress,
): Promise<DispatchAnswer> {
  if ('poll' in progress) {
    const { intervalMs, read } = progress.poll;
    // MCP requires progress to increase with each notification: a poll that reads the same count
    // (a job queued, then running, for many polls) sends nothing; the first poll always reports.
    let reported = Number.NEGATIVE_INFINITY;
    for (;;) {
      const answer = await dispatch.call(route, input, caller);
      if (answer.status !== 200) return answer;
      const state = (read as (answer: unknown) => ReturnType<typeof read>)(answer.json);
      if (state.progress > reported) {
        reported = state.progress;
        await report({
          progress: state.progress,
          ...(state.total !== undefined ? { total: state.total } : {}),
          ...(state.message ? { message: state.message } : {}),
        });
      }
      if (state.done) return answer;
      await sleep(intervalMs, undefined, { signal: caller.signal });
    }
  }
  const { itemEvent, itemsField, finalEvent, errorEvent } = progress.stream;
  const answer = await dispatch.call(route, { ...input, body: { ...(input.body as Record<string, unknown>), stream: true } }, caller, { stream: true });
  const stream = answer.stream!;
  if (!String(answer.headers['content-type'] ?? '').startsWith('text/event-stream')) {
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    return { ...answer, text, json: text ? JSON.parse(text) : undefined, stream: undefined };
  }
  const items: unknown[] = [];
  let final: Record<string, unknown> | undefined;
  let failure: unknown;
  const pending: Array<Promise<void>> = [];
  const parser = createParser({
    onEvent(event) {
      const data = JSON.parse(event.data) as unknown;
      if (event.event === itemEvent) {
        items.push(data);
        // The message names what is counted; the count is `progress` (a task's statusMessage says both once: "3 page-extracted").
        pending.push(report({ progress: items.length, message: itemEvent }));
      } else if (event.event === finalEvent) final = data as Record<string, unknown>;
      else if (event.event === errorEvent) failure = data;
    },
  });
  const decoder = new TextDecoder();
  for await (const chunk of stream) parser.feed(decoder.decode(chunk as Buffer, { stream: true }));
  await Promise.all(pending);
  // A failure after the stream started is the route's error event; the status stays the stream's 200.
  if (failure !== undefined || final === undefined)
    return answerOf(500, failure ?? { code: 'stream_ended_early', error: 'The stream ended before its final event.' });
  return answerOf(200, { ...final, [itemsField]: items });
}
