export * from './a2a-card.ts';
export * from './a2a-rpc.ts';
export * from './a2a-skills.ts';
export * from './contract.ts';
export * from './mcp-server-card.ts';
export * from './urls.ts';
export * from './try.ts';
