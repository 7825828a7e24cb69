export * from './limits.ts';
export * from './operations.ts';
export * from './records.ts';
export * from './contract.ts';
