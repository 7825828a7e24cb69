import { toolNameOf } from './agent-tools.ts';

/**
 * Contract keys that were renamed, the former name to the current one (docs/contributing.md,
 * "Names"). What was derived from a former key keeps working: the client answers to it
 * (`svc.credentials`, `svc.withResponse.credentials`, deprecated) and the MCP endpoint takes a
 * former tool name on a call (`credentials_create`), while `tools/list`, OpenAPI's operation ids
 * and the docs show only the current names. The wire (paths, fields, codes) never changed.
 */
export const formerContractKeys = {
  credentials: 'developerKeys',
} as const;

const formerToolPrefixes = Object.entries(formerContractKeys).map(([former, current]) => [`${toolNameOf(former)}_`, `${toolNameOf(current)}_`] as const);

/** The current name of a tool called by a former one (`credentials_create` -> `developer_keys_create`); any other name as it is. */
export function currentToolName(name: string): string {
  for (const [former, current] of formerToolPrefixes) if (name.startsWith(former)) return current + name.slice(former.length);
  return name;
}
