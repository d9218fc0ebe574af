// The six RFQ tables in Ponder 0.4's schema builder: every table keyed by the bridge's
// transactionId, block position and transaction hash on every row (reference §2.1).
import { createSchema } from '@ponder/core';

export default createSchema((p) => {
  const at = { blockNumber: p.bigint(), blockTimestamp: p.int(), transactionHash: p.string() };
  const origin = { originChainId: p.int(), originChain: p.string() };
  return {
    BridgeRequestEvents: p.createTable({
      id: p.string(), transactionId: p.string(), sender: p.string(), request: p.string(),
      originToken: p.string(), destToken: p.string(),
      originAmount: p.bigint().optional(), originAmountFormatted: p.string(),
      destAmount: p.bigint(), destAmountFormatted: p.string(),
      ...origin, destChainId: p.int(), destChain: p.string(), sendChainGas: p.boolean(), ...at,
    }),
    BridgeRelayedEvents: p.createTable({
      id: p.string(), transactionId: p.string(), relayer: p.string(), to: p.string(),
      originToken: p.string(), destToken: p.string(),
      originAmount: p.bigint(), originAmountFormatted: p.string(), destAmount: p.bigint(), destAmountFormatted: p.string(),
      ...origin, destChainId: p.int(), destChain: p.string(), ...at,
    }),
    BridgeProofProvidedEvents: p.createTable({ id: p.string(), transactionId: p.string(), relayer: p.string(), ...origin, ...at }),
    BridgeDepositRefundedEvents: p.createTable({
      id: p.string(), transactionId: p.string(), to: p.string(), token: p.string(), amount: p.bigint(), amountFormatted: p.string(), ...origin, ...at,
    }),
    BridgeDepositClaimedEvents: p.createTable({
      id: p.string(), transactionId: p.string(), relayer: p.string(), to: p.string(), token: p.string(),
      amount: p.bigint(), amountFormatted: p.string(), ...origin, ...at,
    }),
    BridgeProofDisputedEvents: p.createTable({ id: p.string(), transactionId: p.string(), relayer: p.string(), ...origin, ...at }),
  };
});
