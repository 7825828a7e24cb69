export * from './packs.ts';
export * from './records.ts';
export * from './contract.ts';
