import type { AgentTool } from './agent-tools.ts';
import { compactJsonSchema, type JsonSchema } from './compact-json-schema.ts';

/**
 * The tools as `tools/list` shows them. Hosts put every definition into the model's context on
 * every turn, so the list is kept small (under 64 KiB for the whole contract, tested) without
 * losing a constraint:
 * - `inputSchema` is the contract's, compacted (compactJsonSchema: the same documents valid);
 * - no `outputSchema`: it is optional (MCP 2025-11-25 and 2026-07-28), and the REST answers' schemas
 *   were two thirds of the list; `structuredContent` is still the REST answer, described in the
 *   OpenAPI document;
 * - prose that several tools repeat (a sentence of a route's description, a field's description)
 *   is said once, in the server's `instructions`, not in each tool; what is left of a route's
 *   description is cut to DESCRIPTION_CHARS, a field's to FIELD_DESCRIPTION_CHARS, at a sentence's end
 *   (the first sentence is always kept);
 * - no `title` (the description's first line is the route's summary; a host shows the name) and
 *   no `_meta`; a read-only tool's annotations say only that, another's leave out the hints that
 *   are MCP's defaults (`readOnlyHint: false`, `idempotentHint: false`).
 * A prose cut holds whatever tools a credential sees: a repeated sentence is left out of every
 * tool, not kept in the first one listed.
 */
export interface McpListedTool {
  name: string;
  description: string;
  inputSchema: { type: 'object'; [keyword: string]: unknown };
  /** A read-only tool says only that; another says whether it is destructive, and only a true `idempotentHint` (MCP's defaults: not read-only, not idempotent). */
  annotations: { readOnlyHint?: true; destructiveHint?: boolean; idempotentHint?: true };
}

export interface McpToolListing {
  readonly listed: ReadonlyMap<AgentTool, McpListedTool>;
  /** The prose several tools share, for the server's `instructions`. */
  readonly instructions: string;
}

const DESCRIPTION_CHARS = 300;
const FIELD_DESCRIPTION_CHARS = 150;
/** A sentence this short says little out of its tool's context, and costs little to repeat. */
const SHARED_SENTENCE_CHARS = 80;
/** A field description goes to the instructions when this many tools say it: two is a tool and its batch twin (jobs_submit), which keep theirs. */
const SHARED_FIELD_TOOLS = 3;

/** Sentences: split after `.` or `)` and one space, before a capital, a backtick or `(`. Fixed-width lookarounds: linear. */
const sentencesOf = (text: string): string[] => text.split(/(?<=[.)]) (?=[A-Z`(])/);

/** Whole sentences up to `chars`, at least the first. */
function upTo(sentences: readonly string[], chars: number): string {
  let out = '';
  for (const sentence of sentences) {
    if (out && out.length + 1 + sentence.length > chars) break;
    out = out ? `${out} ${sentence}` : sentence;
  }
  return out;
}

const isObject = (value: unknown): value is JsonSchema => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Every object of a schema with a `description`, with the property name it describes when it is one. */
function eachDescribed(node: unknown, visit: (holder: JsonSchema, name: string | undefined) => void, name?: string): void {
  if (Array.isArray(node)) for (const item of node) eachDescribed(item, visit);
  else if (isObject(node)) {
    if (typeof node.description === 'string') visit(node, name);
    for (const [key, value] of Object.entries(node)) {
      // A property's or a definition's name says what a shared description is about.
      if ((key === 'properties' || key === '$defs') && isObject(value))
        for (const [field, schema] of Object.entries(value)) eachDescribed(schema, visit, field);
      else eachDescribed(value, visit);
    }
  }
}

/** `type: "string"` beside a `const`, or beside an `enum` of strings only, says nothing more. */
function dropImpliedTypes(node: unknown): void {
  if (Array.isArray(node)) for (const item of node) dropImpliedTypes(item);
  else if (isObject(node)) {
    const implied =
      node.type === 'string' && (typeof node.const === 'string' || (Array.isArray(node.enum) && node.enum.every((value) => typeof value === 'string')));
    if (implied) delete node.type;
    for (const value of Object.values(node)) dropImpliedTypes(value);
  }
}

/** Counts, over the tools, in how many each item occurs (once per tool). */
function toolsSaying<T>(tools: readonly AgentTool[], itemsOf: (tool: AgentTool) => Iterable<T>): Map<T, number> {
  const counts = new Map<T, number>();
  for (const tool of tools) for (const item of new Set(itemsOf(tool))) counts.set(item, (counts.get(item) ?? 0) + 1);
  return counts;
}

const routeSentences = (tool: AgentTool) => (tool.route.description ? sentencesOf(tool.route.description) : []);
function fieldDescriptions(tool: AgentTool): string[] {
  const found: string[] = [];
  eachDescribed(tool.inputSchema, (holder) => found.push(holder.description as string));
  return found;
}

/** The descriptions of a tool's own arguments (its schema's top-level properties). */
function topLevelDescriptions(tool: AgentTool): Set<string> {
  const properties = (tool.inputSchema.properties ?? {}) as Record<string, JsonSchema>;
  return new Set(Object.values(properties).flatMap((property) => (typeof property.description === 'string' ? [property.description] : [])));
}

export function mcpToolListing(tools: readonly AgentTool[]): McpToolListing {
  const sharedSentences = toolsSaying(tools, routeSentences);
  const sharedFields = toolsSaying(tools, fieldDescriptions);
  // An argument's description is kept by the tool it is an argument of; where another tool nests the
  // same schema (jobs_submit's items are the operations' inputs), it is left out there.
  const ownArguments = toolsSaying(tools, topLevelDescriptions);
  const isShared = (sentence: string) => sharedSentences.get(sentence)! >= 2 && sentence.length >= SHARED_SENTENCE_CHARS;
  const fieldNames = new Map<string, Set<string>>();
  const listed = new Map<AgentTool, McpListedTool>();
  for (const tool of tools) {
    const ownSentences = routeSentences(tool).filter((sentence) => !isShared(sentence));
    const description = [tool.route.summary, upTo(ownSentences, DESCRIPTION_CHARS), `REST: ${tool.route.method} ${tool.route.path}.`]
      .filter(Boolean)
      .join('\n\n');
    const inputSchema = compactJsonSchema(tool.inputSchema) as McpListedTool['inputSchema'];
    const said = new Set<string>();
    const own = topLevelDescriptions(tool);
    eachDescribed(inputSchema, (holder, name) => {
      const text = holder.description as string;
      if (sharedFields.get(text)! >= SHARED_FIELD_TOOLS) {
        if (name) (fieldNames.get(text) ?? fieldNames.set(text, new Set()).get(text)!).add(name);
        delete holder.description;
      } else if (said.has(text) || (!own.has(text) && (ownArguments.get(text) ?? 0) > 0)) delete holder.description;
      else {
        said.add(text);
        holder.description = upTo(sentencesOf(text), FIELD_DESCRIPTION_CHARS);
      }
    });
    dropImpliedTypes(inputSchema);
    const { readOnlyHint, destructiveHint, idempotentHint } = tool.annotations;
    listed.set(tool, {
      name: tool.name,
      description,
      inputSchema,
      annotations: readOnlyHint ? { readOnlyHint } : { destructiveHint, ...(idempotentHint ? { idempotentHint } : {}) },
    });
  }
  const sentences = [...sharedSentences.keys()].filter(isShared);
  const fields = [...fieldNames].map(([text, names]) => `- ${[...names].map((name) => `\`${name}\``).join(', ')}: ${text}`);
  const instructions = [
    'Every tool is one operation of the svc REST API (its description ends with the REST route); a tool result is the REST answer as structuredContent, and a refusal is isError with the REST error body and its stable code.',
    sentences.length > 0 ? `What several tools share:\n${sentences.map((sentence) => `- ${sentence}`).join('\n')}` : '',
    fields.length > 0 ? `Arguments several tools share:\n${fields.join('\n')}` : '',
  ]
    .filter(Boolean)
    .join('\n\n');
  return { listed, instructions };
}
