// The RFQ handlers for Ponder 0.4: one row per event, keyed by transactionId; proofs and disputes
// keep the latest per bridge (upsert), as the reference indexer does (reference §2.3).
import { ponder } from '@/generated';
import { addr, chainName, formatAmount } from './rfq';

const at = (event: { log: { blockNumber: bigint }; block: { timestamp: bigint }; transaction: { hash: string } }) => ({
  blockNumber: BigInt(event.log.blockNumber), blockTimestamp: Number(event.block.timestamp), transactionHash: event.transaction.hash,
});

ponder.on('FastBridgeV2:BridgeRequested', async ({ event, context }) => {
  const a = event.args;
  const originChainId = context.network.chainId;
  await context.db.BridgeRequestEvents.create({
    id: a.transactionId,
    data: {
      transactionId: a.transactionId, sender: addr(a.sender), request: a.request,
      originToken: addr(a.originToken), destToken: addr(a.destToken),
      originAmount: a.originAmount, originAmountFormatted: formatAmount(a.originAmount, a.originToken),
      destAmount: a.destAmount, destAmountFormatted: formatAmount(a.destAmount, a.destToken),
      originChainId, originChain: chainName(originChainId), destChainId: Number(a.destChainId), destChain: chainName(Number(a.destChainId)),
      sendChainGas: a.sendChainGas, ...at(event),
    },
  });
});

ponder.on('FastBridgeV2:BridgeRelayed', async ({ event, context }) => {
  const a = event.args;
  const destChainId = context.network.chainId;
  await context.db.BridgeRelayedEvents.create({
    id: a.transactionId,
    data: {
      transactionId: a.transactionId, relayer: addr(a.relayer), to: addr(a.to),
      originToken: addr(a.originToken), destToken: addr(a.destToken),
      originAmount: a.originAmount, originAmountFormatted: formatAmount(a.originAmount, a.originToken),
      destAmount: a.destAmount, destAmountFormatted: formatAmount(a.destAmount, a.destToken),
      originChainId: Number(a.originChainId), originChain: chainName(Number(a.originChainId)), destChainId, destChain: chainName(destChainId),
      ...at(event),
    },
  });
});

ponder.on('FastBridgeV2:BridgeProofProvided', async ({ event, context }) => {
  const a = event.args;
  const originChainId = context.network.chainId;
  const latest = { relayer: addr(a.relayer), ...at(event) };
  await context.db.BridgeProofProvidedEvents.upsert({
    id: a.transactionId,
    create: { transactionId: a.transactionId, originChainId, originChain: chainName(originChainId), ...latest },
    update: latest,
  });
});

ponder.on('FastBridgeV2:BridgeProofDisputed', async ({ event, context }) => {
  const a = event.args;
  const originChainId = context.network.chainId;
  const latest = { relayer: addr(a.relayer), ...at(event) };
  await context.db.BridgeProofDisputedEvents.upsert({
    id: a.transactionId,
    create: { transactionId: a.transactionId, originChainId, originChain: chainName(originChainId), ...latest },
    update: latest,
  });
});

ponder.on('FastBridgeV2:BridgeDepositClaimed', async ({ event, context }) => {
  const a = event.args;
  const originChainId = context.network.chainId;
  await context.db.BridgeDepositClaimedEvents.create({
    id: a.transactionId,
    data: {
      transactionId: a.transactionId, relayer: addr(a.relayer), to: addr(a.to), token: addr(a.token),
      amount: a.amount, amountFormatted: formatAmount(a.amount, a.token), originChainId, originChain: chainName(originChainId), ...at(event),
    },
  });
});

ponder.on('FastBridgeV2:BridgeDepositRefunded', async ({ event, context }) => {
  const a = event.args;
  const originChainId = context.network.chainId;
  await context.db.BridgeDepositRefundedEvents.create({
    id: a.transactionId,
    data: {
      transactionId: a.transactionId, to: addr(a.to), token: addr(a.token),
      amount: a.amount, amountFormatted: formatAmount(a.amount, a.token), originChainId, originChain: chainName(originChainId), ...at(event),
    },
  });
});
