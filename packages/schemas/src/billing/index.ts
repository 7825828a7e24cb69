export * from './packs.ts';
export * from './records.ts';
export * from './contract.ts';
export * from './x402.ts';
export * from './x402-contract.ts';
