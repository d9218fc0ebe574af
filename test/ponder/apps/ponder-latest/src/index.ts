// The RFQ handlers for the newest Ponder: the same rows as the 0.4 app (one per event, keyed by
// transactionId; the latest proof and dispute per bridge kept by an insert … on conflict update).
import { ponder } from 'ponder:registry';
import {
  BridgeDepositClaimedEvents, BridgeDepositRefundedEvents, BridgeProofDisputedEvents, BridgeProofProvidedEvents,
  BridgeRelayedEvents, BridgeRequestEvents,
} from 'ponder:schema';
import { addr, chainName, formatAmount } from './rfq';

const at = (event: { log: { blockNumber: bigint }; block: { timestamp: bigint }; transaction: { hash: string } }) => ({
  blockNumber: BigInt(event.log.blockNumber), blockTimestamp: Number(event.block.timestamp), transactionHash: event.transaction.hash,
});

ponder.on('FastBridgeV2:BridgeRequested', async ({ event, context }) => {
  const a = event.args;
  const originChainId = context.chain.id;
  await context.db.insert(BridgeRequestEvents).values({
    id: a.transactionId, transactionId: a.transactionId, sender: addr(a.sender), request: a.request,
    originToken: addr(a.originToken), destToken: addr(a.destToken),
    originAmount: a.originAmount, originAmountFormatted: formatAmount(a.originAmount, a.originToken),
    destAmount: a.destAmount, destAmountFormatted: formatAmount(a.destAmount, a.destToken),
    originChainId, originChain: chainName(originChainId), destChainId: Number(a.destChainId), destChain: chainName(Number(a.destChainId)),
    sendChainGas: a.sendChainGas, ...at(event),
  });
});

ponder.on('FastBridgeV2:BridgeRelayed', async ({ event, context }) => {
  const a = event.args;
  const destChainId = context.chain.id;
  await context.db.insert(BridgeRelayedEvents).values({
    id: a.transactionId, transactionId: a.transactionId, relayer: addr(a.relayer), to: addr(a.to),
    originToken: addr(a.originToken), destToken: addr(a.destToken),
    originAmount: a.originAmount, originAmountFormatted: formatAmount(a.originAmount, a.originToken),
    destAmount: a.destAmount, destAmountFormatted: formatAmount(a.destAmount, a.destToken),
    originChainId: Number(a.originChainId), originChain: chainName(Number(a.originChainId)), destChainId, destChain: chainName(destChainId),
    ...at(event),
  });
});

ponder.on('FastBridgeV2:BridgeProofProvided', async ({ event, context }) => {
  const a = event.args;
  const originChainId = context.chain.id;
  const latest = { relayer: addr(a.relayer), ...at(event) };
  await context.db.insert(BridgeProofProvidedEvents)
    .values({ id: a.transactionId, transactionId: a.transactionId, originChainId, originChain: chainName(originChainId), ...latest })
    .onConflictDoUpdate(latest);
});

ponder.on('FastBridgeV2:BridgeProofDisputed', async ({ event, context }) => {
  const a = event.args;
  const originChainId = context.chain.id;
  const latest = { relayer: addr(a.relayer), ...at(event) };
  await context.db.insert(BridgeProofDisputedEvents)
    .values({ id: a.transactionId, transactionId: a.transactionId, originChainId, originChain: chainName(originChainId), ...latest })
    .onConflictDoUpdate(latest);
});

ponder.on('FastBridgeV2:BridgeDepositClaimed', async ({ event, context }) => {
  const a = event.args;
  const originChainId = context.chain.id;
  await context.db.insert(BridgeDepositClaimedEvents).values({
    id: a.transactionId, transactionId: a.transactionId, relayer: addr(a.relayer), to: addr(a.to), token: addr(a.token),
    amount: a.amount, amountFormatted: formatAmount(a.amount, a.token), originChainId, originChain: chainName(originChainId), ...at(event),
  });
});

ponder.on('FastBridgeV2:BridgeDepositRefunded', async ({ event, context }) => {
  const a = event.args;
  const originChainId = context.chain.id;
  await context.db.insert(BridgeDepositRefundedEvents).values({
    id: a.transactionId, transactionId: a.transactionId, to: addr(a.to), token: addr(a.token),
    amount: a.amount, amountFormatted: formatAmount(a.amount, a.token), originChainId, originChain: chainName(originChainId), ...at(event),
  });
});
