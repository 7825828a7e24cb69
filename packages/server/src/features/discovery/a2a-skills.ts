import { a2aSkills, type A2aSkillDefinition } from '@svc/schemas';
import type { DispatchInput } from '../../http/dispatch.ts';
import { fileNote, type IncomingMessage, type NeutralArtifact, type NeutralMessage, type NeutralPart } from './a2a-wire.ts';

export type Skill = (typeof a2aSkills)[number];

/** A message the skill cannot be run from: a -32602 naming what is wrong. */
export class SkillInputError extends Error {
  readonly svcCode: string;
  constructor(svcCode: string, message: string) {
    super(message);
    this.svcCode = svcCode;
  }
}

const knownSkills = () => a2aSkills.map((skill) => skill.id).join(', ');

/**
 * The skill a message names: `metadata.skill`, else the `skill` member of its first data part
 * that has one. Undefined when it names none (the caller gets the trial); an unknown name throws.
 */
export function skillOf(message: IncomingMessage): Skill | undefined {
  const fromData = message.parts.find((part): part is { data: Record<string, unknown> } => 'data' in part && part.data.skill !== undefined);
  const named = message.metadata.skill ?? fromData?.data.skill;
  if (named === undefined) return undefined;
  const skill = a2aSkills.find((candidate) => candidate.id === named);
  if (!skill) throw new SkillInputError('a2a_unknown_skill', `Unknown skill ${JSON.stringify(named)}; the skills are ${knownSkills()}.`);
  return skill;
}

/**
 * The REST input of the skill's route, read from the message: its data parts' members (without
 * `skill`, and without `stream`: A2A streams with message/stream), the text parts into the skill's text field when the data leave it out, and a file part
 * as `data_base64` or `url`. The route validates the result exactly as it validates a REST call.
 */
export function dispatchInputOf(skill: A2aSkillDefinition, message: IncomingMessage): DispatchInput {
  const input: Record<string, unknown> = {};
  for (const part of message.parts) if ('data' in part) Object.assign(input, part.data);
  delete input.skill;
  // A2A streams with its own method (message/stream); the REST answer is always read whole.
  delete input.stream;
  const texts = message.parts.flatMap((part) => ('text' in part ? [part.text] : []));
  if (skill.textField && input[skill.textField] === undefined && texts.length > 0) input[skill.textField] = skill.textsAsList ? texts : texts.join('\n\n');
  if (skill.takesFile) {
    const file = message.parts.find((part): part is Extract<NeutralPart, { file: unknown }> => 'file' in part)?.file;
    if (file?.bytes !== undefined) input.data_base64 = file.bytes;
    else if (file?.uri !== undefined) input.url = file.uri;
    else if (input.data_base64 === undefined && input.url === undefined)
      throw new SkillInputError('invalid_json_rpc:params', `The ${skill.id} skill needs a file part: the PDF's bytes or an https URI.`);
  }
  return skill.inputIn === 'query' ? { query: input } : { body: input };
}

/** Above this, a message's parts are not kept in its task's history (the stored row stays small; the call got its answer). */
export const HISTORY_KEPT_BYTES = 65_536;

/**
 * The user's message as a task keeps it: a file's bytes are not kept (the answer holds what was
 * read from them; a text note naming the file stands in its place, see fileNote), and a message sent in a body over HISTORY_KEPT_BYTES (or of unknown length)
 * keeps a note instead of its parts.
 */
export function historyMessage(message: IncomingMessage, bodyBytes: number | undefined): NeutralMessage {
  if (bodyBytes === undefined || bodyBytes > HISTORY_KEPT_BYTES) {
    const size = bodyBytes === undefined ? 'of unknown length' : `of ${bodyBytes} bytes`;
    return {
      messageId: message.messageId,
      role: 'user',
      parts: [{ text: `(The message came in a body ${size}; over ${HISTORY_KEPT_BYTES} bytes its parts are not kept.)` }],
    };
  }
  const parts = message.parts.map((part): NeutralPart => ('file' in part && part.file.bytes !== undefined ? fileNote(part.file) : part));
  return { messageId: message.messageId, role: 'user', parts };
}

type Json = Record<string, any>;

/** A short reading of the REST answer, beside its JSON: what a text-only agent shows. */
function textOf(skill: Skill, answer: Json): string {
  switch (skill.id) {
    case 'rag':
      return String(answer.answer);
    case 'summarize':
      return String(answer.summary);
    case 'classify':
      return (answer.results as Json[])
        .map((result) => `${result.index}: ${result.label} (${Number(result.score).toFixed(3)}, ${result.confidence})`)
        .join('\n');
    case 'rerank':
      return (answer.results as Json[]).map((result) => `${result.index}: ${Number(result.relevance_score).toFixed(4)}`).join('\n');
    case 'catalog-search':
      return (answer.rows as Json[]).map((row) => `${row.id}: ${row.name ?? ''}`).join('\n') || 'No artifact matched.';
    case 'pdf-extract':
      return `Text of ${answer.pages_returned} of ${answer.page_count} pages from page ${answer.start_page}, ${answer.char_count} characters${answer.truncated ? ' (truncated)' : ''}.`;
  }
}

/** A completed skill's artifact: a text reading and the REST answer itself (RAG's citations are in it). */
export function resultArtifact(taskId: string, skill: Skill, answer: unknown): NeutralArtifact {
  const json = answer as Json;
  return {
    artifactId: `${taskId}-result`,
    name: skill.id,
    description: `The answer of ${skill.route.method} ${skill.route.path}, as REST gives it`,
    parts: [{ text: textOf(skill, json) }, { data: json }],
  };
}

/** A failed skill's status message: the REST error's message, and its body as REST gives it (a stream's `error` event under status 200). */
export function failureMessage(taskId: string, status: number, body: Json): NeutralMessage {
  const code = typeof body.code === 'string' ? body.code : 'error';
  return {
    messageId: `${taskId}-failed`,
    role: 'agent',
    parts: [{ text: `HTTP ${status} ${code}: ${String(body.error ?? body.message ?? '')}` }, { data: { status, body } }],
  };
}
