import { ProtocolError, ProtocolErrorCode, ResourceNotFoundError } from '@modelcontextprotocol/server';
import { blackboardContract, catalogContract, type RouteDefinition } from '@svc/schemas';
import type { ContractDispatch, DispatchCaller, DispatchInput } from '../../http/dispatch.ts';

/**
 * Resources where they fit: an artifact's metadata and a blackboard channel's recent posts, each
 * read through its REST route (the same JSON, auth and limits), addressed by a template.
 */
const templates: ReadonlyArray<{
  uriTemplate: string;
  name: string;
  title: string;
  description: string;
  pattern: RegExp;
  route: RouteDefinition;
  input: (value: string) => DispatchInput;
}> = [
  {
    uriTemplate: 'svc://artifacts/{id}',
    name: 'artifact',
    title: 'Catalog artifact',
    description: 'An artifact of the catalog: its metadata, as GET /api/artifacts/{id} answers.',
    pattern: /^svc:\/\/artifacts\/(.+)$/,
    route: catalogContract.artifact,
    input: (id) => ({ params: { id } }),
  },
  {
    uriTemplate: 'svc://blackboard/{key}',
    name: 'blackboard-channel',
    title: 'Blackboard channel',
    description: "A blackboard channel's recent posts, as GET /api/v1/blackboard/get?key={key} answers.",
    pattern: /^svc:\/\/blackboard\/(.+)$/,
    route: blackboardContract.get,
    input: (key) => ({ query: { key } }),
  },
];

export const resourceTemplates = templates.map(({ uriTemplate, name, title, description }) => ({
  uriTemplate,
  name,
  title,
  description,
  mimeType: 'application/json',
}));

export async function readResource(dispatch: ContractDispatch, uri: string, caller: DispatchCaller) {
  for (const template of templates) {
    const match = template.pattern.exec(uri);
    if (!match) continue;
    let value: string;
    try {
      value = decodeURIComponent(match[1]!);
    } catch {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Malformed percent-escape in ${uri}`);
    }
    const answer = await dispatch.call(template.route, template.input(value), caller);
    if (answer.status === 404) throw new ResourceNotFoundError(uri);
    if (answer.status !== 200) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `${uri}: ${answer.text}`);
    return { contents: [{ uri, mimeType: 'application/json', text: answer.text }] };
  }
  throw new ResourceNotFoundError(uri, `No resource ${uri}: the templates are ${resourceTemplates.map((entry) => entry.uriTemplate).join(', ')}.`);
}
