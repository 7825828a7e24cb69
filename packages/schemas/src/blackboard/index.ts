export * from './limits.ts';
export * from './channel-key.ts';
export * from './fields.ts';
export * from './records.ts';
export * from './requests.ts';
export * from './mcp.ts';
export * from './contract.ts';
