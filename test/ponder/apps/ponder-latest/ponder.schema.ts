// The six RFQ tables as `onchainTable`s (the same names and fields as the Ponder 0.4 app; Ponder
// itself turns the columns into snake_case).
import { onchainTable } from 'ponder';

export const BridgeRequestEvents = onchainTable('BridgeRequestEvents', (t) => ({
  id: t.text().primaryKey(), transactionId: t.text().notNull(), sender: t.text().notNull(), request: t.text().notNull(),
  originToken: t.text().notNull(), destToken: t.text().notNull(),
  originAmount: t.bigint(), originAmountFormatted: t.text().notNull(), destAmount: t.bigint().notNull(), destAmountFormatted: t.text().notNull(),
  originChainId: t.integer().notNull(), originChain: t.text().notNull(), destChainId: t.integer().notNull(), destChain: t.text().notNull(),
  sendChainGas: t.boolean().notNull(),
  blockNumber: t.bigint().notNull(), blockTimestamp: t.integer().notNull(), transactionHash: t.text().notNull(),
}));

export const BridgeRelayedEvents = onchainTable('BridgeRelayedEvents', (t) => ({
  id: t.text().primaryKey(), transactionId: t.text().notNull(), relayer: t.text().notNull(), to: t.text().notNull(),
  originToken: t.text().notNull(), destToken: t.text().notNull(),
  originAmount: t.bigint().notNull(), originAmountFormatted: t.text().notNull(), destAmount: t.bigint().notNull(), destAmountFormatted: t.text().notNull(),
  originChainId: t.integer().notNull(), originChain: t.text().notNull(), destChainId: t.integer().notNull(), destChain: t.text().notNull(),
  blockNumber: t.bigint().notNull(), blockTimestamp: t.integer().notNull(), transactionHash: t.text().notNull(),
}));

export const BridgeProofProvidedEvents = onchainTable('BridgeProofProvidedEvents', (t) => ({
  id: t.text().primaryKey(), transactionId: t.text().notNull(), relayer: t.text().notNull(),
  originChainId: t.integer().notNull(), originChain: t.text().notNull(),
  blockNumber: t.bigint().notNull(), blockTimestamp: t.integer().notNull(), transactionHash: t.text().notNull(),
}));

export const BridgeDepositRefundedEvents = onchainTable('BridgeDepositRefundedEvents', (t) => ({
  id: t.text().primaryKey(), transactionId: t.text().notNull(), to: t.text().notNull(), token: t.text().notNull(),
  amount: t.bigint().notNull(), amountFormatted: t.text().notNull(), originChainId: t.integer().notNull(), originChain: t.text().notNull(),
  blockNumber: t.bigint().notNull(), blockTimestamp: t.integer().notNull(), transactionHash: t.text().notNull(),
}));

export const BridgeDepositClaimedEvents = onchainTable('BridgeDepositClaimedEvents', (t) => ({
  id: t.text().primaryKey(), transactionId: t.text().notNull(), relayer: t.text().notNull(), to: t.text().notNull(), token: t.text().notNull(),
  amount: t.bigint().notNull(), amountFormatted: t.text().notNull(), originChainId: t.integer().notNull(), originChain: t.text().notNull(),
  blockNumber: t.bigint().notNull(), blockTimestamp: t.integer().notNull(), transactionHash: t.text().notNull(),
}));

export const BridgeProofDisputedEvents = onchainTable('BridgeProofDisputedEvents', (t) => ({
  id: t.text().primaryKey(), transactionId: t.text().notNull(), relayer: t.text().notNull(),
  originChainId: t.integer().notNull(), originChain: t.text().notNull(),
  blockNumber: t.bigint().notNull(), blockTimestamp: t.integer().notNull(), transactionHash: t.text().notNull(),
}));
