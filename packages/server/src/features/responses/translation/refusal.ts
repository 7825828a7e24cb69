import { ServiceError } from '../../../service-error.ts';

/**
 * The 400 for what the Responses API can ask and the serving engine cannot do: the code says
 * which kind, the message and `detail[0].loc` name the field (`tools[2].type`, `input[0].content[1].type`).
 */
export function refuse(
  code: 'responses_tool_unsupported' | 'responses_parameter_unsupported' | 'responses_input_unsupported',
  path: ReadonlyArray<string | number>,
  message: string,
): ServiceError {
  const field = path.reduce<string>((text, part) => (typeof part === 'number' ? `${text}[${part}]` : text ? `${text}.${part}` : part), '');
  return new ServiceError(code, `${field}: ${message}`, { detail: [{ loc: ['body', ...path], msg: message, type: code }] });
}
