export { verifyReceipt, ReceiptVerificationError, type ReceiptCheck, type VerifyReceiptOptions, type VerifiedReceipt } from './verify-receipt.ts';
export { receiptHelpers, type ReceiptHelpers } from './helpers.ts';
