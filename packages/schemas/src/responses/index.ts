export * from './limits.ts';
export * from './request.ts';
export * from './response.ts';
export * from './contract.ts';
