import type { ErrorCodeTable } from '../feature-contract.ts';

/** The error codes the responses feature raises (docs/inference.md, "The Responses API"); the root merges them into `errorCodes`. */
export const responsesErrors = {
  /** A stored response that is not there for this caller: unknown, another principal's, deleted, or past its retention. */
  response_not_found: 404,
  /** A hosted tool (web search, file search, computer use, code interpreter, ...) svc does not run; the message names `tools[i].type`. */
  responses_tool_unsupported: 400,
  /** A field or value the model's engine cannot express (`background: true`, chat-less fields when translated); the message names it. */
  responses_parameter_unsupported: 400,
  /** An input item or content part the model cannot take (an image for the built-in engine, a file); the message names `input[i]...`. */
  responses_input_unsupported: 400,
} as const satisfies ErrorCodeTable;
