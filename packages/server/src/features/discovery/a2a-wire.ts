import type { A2aSkillSendParamsV03, A2aSkillSendParamsV10 } from '@svc/schemas';

/**
 * Tasks, messages and parts as svc keeps them, whatever the protocol version: one stored row
 * answers A2A 0.3 and 1.0 alike, rendered here when it is sent.
 */
export type TaskState = 'submitted' | 'working' | 'completed' | 'failed' | 'canceled';
export type NeutralPart = { text: string } | { data: Record<string, unknown> } | { file: { bytes?: string; uri?: string; mediaType?: string; name?: string } };
export interface NeutralMessage {
  messageId: string;
  role: 'user' | 'agent';
  parts: NeutralPart[];
}
export interface NeutralArtifact {
  artifactId: string;
  name: string;
  description?: string;
  parts: NeutralPart[];
}
export interface NeutralTask {
  id: string;
  contextId: string;
  skill: string;
  state: TaskState;
  statusMessage?: NeutralMessage | undefined;
  /** When the task last changed (ISO 8601). */
  timestamp: string;
  artifacts: NeutralArtifact[];
  history: NeutralMessage[];
}

export type Version = '0.3' | '1.0';

/** A sent message as svc reads it: parts, the message's own metadata, and the ids it continues. */
export interface IncomingMessage {
  messageId: string;
  contextId?: string | undefined;
  parts: NeutralPart[];
  metadata: Record<string, unknown>;
  /** 0.3 `blocking: false` or 1.0 `returnImmediately: true`: answer the working task at once. */
  returnImmediately: boolean;
  historyLength?: number | undefined;
}

export function incomingV03(params: A2aSkillSendParamsV03): IncomingMessage {
  const { message, configuration } = params;
  const parts = message.parts.map((part): NeutralPart => {
    if (part.kind === 'text') return { text: part.text };
    if (part.kind === 'data') return { data: part.data };
    const file = part.file as { bytes?: string; uri?: string; mimeType?: string; name?: string };
    return { file: { bytes: file.bytes, uri: file.uri, mediaType: file.mimeType, name: file.name } };
  });
  return {
    messageId: message.messageId,
    contextId: message.contextId,
    parts,
    metadata: { ...params.metadata, ...message.metadata },
    returnImmediately: configuration?.blocking === false,
    historyLength: configuration?.historyLength,
  };
}

export function incomingV10(params: A2aSkillSendParamsV10): IncomingMessage {
  const { message, configuration } = params;
  const parts = message.parts.map((part): NeutralPart => {
    const member = part as { text?: string; data?: Record<string, unknown>; raw?: string; url?: string; mediaType?: string; filename?: string };
    if (member.text !== undefined) return { text: member.text };
    if (member.data !== undefined) return { data: member.data };
    return { file: { bytes: member.raw, uri: member.url, mediaType: member.mediaType, name: member.filename } };
  });
  return {
    messageId: message.messageId,
    contextId: message.contextId,
    parts,
    metadata: { ...params.metadata, ...message.metadata },
    returnImmediately: configuration?.returnImmediately === true,
    historyLength: configuration?.historyLength,
  };
}

const drop = <T extends Record<string, unknown>>(value: T): T => Object.fromEntries(Object.entries(value).filter(([, member]) => member !== undefined)) as T;

/**
 * A file part whose bytes were not kept (a stored task keeps no PDF) is written as a text note:
 * both versions require a file part to carry bytes or a URI (the 0.3 SDK throws "Invalid file
 * part: missing bytes or uri", 1.0 decodes a part with no content), so an empty one is not sent.
 */
export function fileNote(file: { mediaType?: string | undefined; name?: string | undefined }): NeutralPart {
  const what = [file.name, file.mediaType].filter(Boolean).join(', ');
  return { text: `(A file${what ? ` (${what})` : ''} was sent; its bytes are not kept.)` };
}

const withContent = (part: NeutralPart): NeutralPart =>
  'file' in part && part.file.bytes === undefined && part.file.uri === undefined ? fileNote(part.file) : part;

function partV03(stored: NeutralPart): Record<string, unknown> {
  const part = withContent(stored);
  if ('text' in part) return { kind: 'text', text: part.text };
  if ('data' in part) return { kind: 'data', data: part.data };
  return { kind: 'file', file: drop({ bytes: part.file.bytes, uri: part.file.uri, mimeType: part.file.mediaType, name: part.file.name }) };
}

function partV10(stored: NeutralPart): Record<string, unknown> {
  const part = withContent(stored);
  if ('text' in part) return { text: part.text };
  if ('data' in part) return { data: part.data };
  return drop({ raw: part.file.bytes, url: part.file.uri, mediaType: part.file.mediaType, filename: part.file.name });
}

const STATE_V10: Record<TaskState, string> = {
  submitted: 'TASK_STATE_SUBMITTED',
  working: 'TASK_STATE_WORKING',
  completed: 'TASK_STATE_COMPLETED',
  failed: 'TASK_STATE_FAILED',
  canceled: 'TASK_STATE_CANCELED',
};

export const isFinal = (state: TaskState) => state === 'completed' || state === 'failed' || state === 'canceled';

function messageOf(version: Version, message: NeutralMessage, task: Pick<NeutralTask, 'id' | 'contextId'>): Record<string, unknown> {
  if (version === '0.3')
    return { kind: 'message', role: message.role, messageId: message.messageId, taskId: task.id, contextId: task.contextId, parts: message.parts.map(partV03) };
  return {
    messageId: message.messageId,
    contextId: task.contextId,
    taskId: task.id,
    role: message.role === 'user' ? 'ROLE_USER' : 'ROLE_AGENT',
    parts: message.parts.map(partV10),
  };
}

function statusOf(version: Version, task: NeutralTask): Record<string, unknown> {
  return drop({
    state: version === '0.3' ? task.state : STATE_V10[task.state],
    message: task.statusMessage ? messageOf(version, task.statusMessage, task) : undefined,
    timestamp: task.timestamp,
  });
}

function artifactOf(version: Version, artifact: NeutralArtifact): Record<string, unknown> {
  return drop({
    artifactId: artifact.artifactId,
    name: artifact.name,
    description: artifact.description,
    parts: artifact.parts.map(version === '0.3' ? partV03 : partV10),
  });
}

/** The task as the version writes it; `historyLength` keeps the newest messages (0: none). */
export function renderTask(version: Version, task: NeutralTask, historyLength?: number): Record<string, unknown> {
  const history = historyLength === undefined ? task.history : historyLength === 0 ? [] : task.history.slice(-historyLength);
  return {
    ...(version === '0.3' ? { kind: 'task' } : {}),
    id: task.id,
    contextId: task.contextId,
    status: statusOf(version, task),
    artifacts: task.artifacts.map((artifact) => artifactOf(version, artifact)),
    history: history.map((message) => messageOf(version, message, task)),
    metadata: { skill: task.skill },
  };
}

/** A stream event's result: a status update (0.3 marks the last `final`). */
export function renderStatusUpdate(version: Version, task: NeutralTask): Record<string, unknown> {
  const update = { taskId: task.id, contextId: task.contextId, status: statusOf(version, task) };
  return version === '0.3' ? { kind: 'status-update', ...update, final: isFinal(task.state) } : { statusUpdate: update };
}

/** A stream event's result: an artifact, whole by default, or a chunk appended to one. */
export function renderArtifactUpdate(
  version: Version,
  task: Pick<NeutralTask, 'id' | 'contextId'>,
  artifact: NeutralArtifact,
  chunk: { append: boolean; lastChunk: boolean } = { append: false, lastChunk: true },
): Record<string, unknown> {
  const update = { taskId: task.id, contextId: task.contextId, artifact: artifactOf(version, artifact), ...chunk };
  return version === '0.3' ? { kind: 'artifact-update', ...update } : { artifactUpdate: update };
}

/** What `message/send` answers: 0.3 the task itself, 1.0 `{ task }`. */
export const renderSendResult = (version: Version, task: NeutralTask, historyLength?: number) =>
  version === '0.3' ? renderTask(version, task, historyLength) : { task: renderTask(version, task, historyLength) };

/** The first event of a stream: the task as it starts. */
export const renderStreamTask = (version: Version, task: NeutralTask) => (version === '0.3' ? renderTask(version, task) : { task: renderTask(version, task) });
