export * from './records.ts';
export * from './contract.ts';
