/** The proof library's public names (re-exported by the package entry). */
export { ProofError, type ProofErrorInit, type ProofReason } from './failure.js';
export { checkHeader, checkHeaderChain, headerHash, headerLayout, headerRlp, type BlockJson, type HeaderLayout, type ProvenHeader } from './header.js';
export { bloomMayMatch, bloomQuery, logsBloom, logsBloomMayMatch, orBlooms, type BloomQuery, type LogFilter, type LogJson } from './bloom.js';
export { blockBloom, checkReceiptAnswer, checkReceiptDetails, checkReceipts, receiptBytes, receiptsRoot, type ReceiptJson } from './receipts.js';
export {
  blockLogs, blocksToFetch, checkLogsAnswer, diffLogs, logIndexInTransaction, logMatches, LogsProofError, numberedPerTransaction, provenLogs,
  type AlteredLog, type BlockReceipts, type LogsDiff, type LogsOptions, type ProvenLog,
} from './logs.js';
export {
  balanceAnswer, checkAccountProof, checkCode, checkStateAnswer, storageAnswer, storageKey, transactionCountAnswer,
  type AccountProofJson, type ProvenAccount,
} from './state.js';
export { checkTransactionHash, checkTransactions, transactionBytes, type TransactionJson } from './transactions.js';
