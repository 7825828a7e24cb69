export * from './limits.ts';
export * from './extraction.ts';
export * from './documents.ts';
export * from './contract.ts';
