/**
 * Drives the real FastBridgeV2 (test/fixtures/fastbridge/) on two anvil chains, an origin
 * (chain id 42161, "arbitrum") and a destination (8453, "base"), through every state the RFQ
 * indexer's tables can show, and returns what happened as ground truth for the fixtures' test:
 * every bridge's id, request bytes, amounts, and each phase's block, time, transaction and actors.
 *
 * Blocks are mined one transaction at a time with explicit timestamps (anvil runs --no-mining),
 * so a run is the same every time: same addresses, hashes, blocks and times.
 *
 * The bridges (origin → destination), by the state they end in:
 *   requested        bridged, nothing else                          → missing-relay / exceed-deadline
 *   relayed          + relay                                        → missing-proof
 *   proven           + relay + proof                                → missing-claim
 *   claimed          ERC-20 via bridgeV2 (exclusivity, zapNative → sendChainGas) + relay + proof + claim
 *   disputed         + relay + proof (by a second prover) + dispute → missing-proof again, disputes
 *   reproven         + relay + proof + dispute + a later proof      → missing-claim (the dispute is superseded)
 *   conflicting      + relay + proof naming another relayer         → conflicting-proofs, missing-claim
 *   refunded         + refund after the deadline
 *   refundedRelayed  + relay + refund after the deadline            → refunded-and-relayed
 * plus one relay on the destination of a request the origin never saw (an invalid relay).
 */
import {
  createPublicClient, createWalletClient, encodeDeployData, encodeFunctionData, encodePacked, formatUnits, http, keccak256, parseEventLogs, toHex,
  type Abi, type Address, type Hex, type PublicClient,
} from 'viem';
import { mnemonicToAccount, type HDAccount } from 'viem/accounts';
import { anvilMnemonic, type AnvilCluster } from '../support/anvil.js';
import { fastBridgeArtifact } from '../support/fastbridge.js';

export const ORIGIN_CHAIN_ID = 42161;
export const DEST_CHAIN_ID = 8453;
/** Genesis time of both chains: 2025-10-09T08:53:20Z. */
export const GENESIS = 1_760_000_000;
/** Seconds between consecutive blocks. */
const BLOCK_TIME = 12;
/** Empty blocks mined at the end so that every event is final for any Ponder finality rule. */
export const TAIL_BLOCKS = 300;
export const NATIVE: Address = '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee';

export const FastBridgeV2 = fastBridgeArtifact('FastBridgeV2');
const MockERC20 = fastBridgeArtifact('MockERC20');

export interface Phase {
  blockNumber: string;
  blockTimestamp: number;
  transactionHash: Hex;
}
export interface Bridge {
  name: string;
  transactionId: Hex;
  originChainId: number;
  destChainId: number;
  sender: Address;
  to: Address;
  originToken: Address;
  destToken: Address;
  originAmount: string;
  destAmount: string;
  originAmountFormatted: string;
  destAmountFormatted: string;
  sendChainGas: boolean;
  request: Hex;
  deadline: number;
  request_: Phase | null;
  relay: (Phase & { relayer: Address; to: Address }) | null;
  /** The latest proof (the table keeps one per bridge). */
  proof: (Phase & { relayer: Address }) | null;
  /** The latest dispute. */
  dispute: (Phase & { relayer: Address }) | null;
  claim: (Phase & { relayer: Address; to: Address; token: Address; amount: string; amountFormatted: string }) | null;
  refund: (Phase & { to: Address; token: Address; amount: string; amountFormatted: string }) | null;
}
export interface ChainHead {
  chainId: number;
  chain: string;
  blockNumber: string;
  blockTimestamp: number;
  /** First block the indexer reads (the contract's deployment). */
  startBlock: number;
}
export interface DriveResult {
  fastBridge: Address;
  token: Address;
  accounts: Record<string, Address>;
  bridges: Bridge[];
  /** A relay on the destination of a request no origin emitted. */
  invalidRelay: Bridge;
  heads: ChainHead[];
}

const lower = (a: string) => a.toLowerCase() as Address;
/** The reference indexer's rule: 18 decimals for native ETH, 6 for every other token. */
const formatted = (amount: bigint, token: string) => formatUnits(amount, lower(token) === NATIVE ? 18 : 6);

class Chain {
  readonly client: PublicClient;
  clock: number;
  constructor(readonly cluster: AnvilCluster, readonly name: string) {
    this.client = createPublicClient({ transport: http(cluster.urls[0]) }) as PublicClient;
    this.clock = cluster.genesisTimestamp;
  }

  get id() {
    return this.cluster.chainId;
  }

  wallet(account: HDAccount) {
    return createWalletClient({ account, transport: http(this.cluster.urls[0]) });
  }

  /** Mines one block holding the sent transaction, `gap` seconds after the previous block. */
  async mine(gap = BLOCK_TIME): Promise<{ number: bigint; timestamp: number }> {
    this.clock += gap;
    await this.cluster.nodes[0]!.rpc('evm_mine', [this.clock]);
    const block = await this.client.getBlock();
    return { number: block.number, timestamp: Number(block.timestamp) };
  }

  /** Sends one transaction, mines it in its own block, and returns its receipt (throws if reverted). */
  async send(account: HDAccount, request: { to?: Address; data: Hex; value?: bigint }, gap = BLOCK_TIME) {
    const wallet = this.wallet(account);
    // The block's time is set first, so that the estimate (which also names a revert) sees it.
    this.clock += gap;
    await this.cluster.nodes[0]!.rpc('evm_setNextBlockTimestamp', [this.clock]);
    const gas = await this.client.estimateGas({ account, ...request, blockTag: 'pending' });
    const hash = await wallet.sendTransaction({ ...request, gas: gas * 2n, chain: undefined, account });
    await this.cluster.nodes[0]!.rpc('evm_mine', []);
    const receipt = await this.client.getTransactionReceipt({ hash });
    if (receipt.status !== 'success') throw new Error(`${this.name}: transaction ${hash} reverted`);
    const block = await this.client.getBlock({ blockNumber: receipt.blockNumber });
    return { receipt, phase: { blockNumber: receipt.blockNumber.toString(), blockTimestamp: Number(block.timestamp), transactionHash: hash } satisfies Phase };
  }
}

/** Calldata for a function of an artifact's ABI (untyped: the ABI is read from JSON). */
const call = (abi: Abi, functionName: string, args: unknown[]): Hex => encodeFunctionData({ abi, functionName, args } as never);

export async function drive(originCluster: AnvilCluster, destCluster: AnvilCluster): Promise<DriveResult> {
  const origin = new Chain(originCluster, 'arbitrum');
  const dest = new Chain(destCluster, 'base');
  const acct = (i: number) => mnemonicToAccount(anvilMnemonic, { addressIndex: i });
  const admin = acct(0), user = acct(1), relayer = acct(2), prover2 = acct(3), guard = acct(4), canceler = acct(5), recipient = acct(6), named = acct(7);
  const accounts = {
    admin: lower(admin.address), user: lower(user.address), relayer: lower(relayer.address), prover2: lower(prover2.address),
    guard: lower(guard.address), canceler: lower(canceler.address), recipient: lower(recipient.address), namedRelayer: lower(named.address),
  };

  // The same deployments in the same order on both chains: the same addresses.
  let fastBridge: Address | undefined;
  let token: Address | undefined;
  const startBlocks: number[] = [];
  for (const chain of [origin, dest]) {
    const fb = await chain.send(admin, { data: encodeDeployData({ abi: FastBridgeV2.abi, bytecode: FastBridgeV2.bytecode, args: [admin.address] } as never) });
    const mock = await chain.send(admin, { data: encodeDeployData({ abi: MockERC20.abi, bytecode: MockERC20.bytecode, args: ['USD Coin', 6] } as never) });
    fastBridge = lower(fb.receipt.contractAddress!);
    token = lower(mock.receipt.contractAddress!);
    startBlocks.push(Number(fb.receipt.blockNumber));
    const role = (name: string) => keccak256(toHex(name));
    await chain.send(admin, { to: fastBridge, data: call(FastBridgeV2.abi, 'grantRole', [role('GUARD_ROLE'), guard.address]) });
    await chain.send(admin, { to: fastBridge, data: call(FastBridgeV2.abi, 'grantRole', [role('CANCELER_ROLE'), canceler.address]) });
    await chain.send(admin, { to: fastBridge, data: call(FastBridgeV2.abi, 'addProver', [relayer.address]) });
    await chain.send(admin, { to: fastBridge, data: call(FastBridgeV2.abi, 'addProver', [prover2.address]) });
    for (const who of [user, relayer]) {
      await chain.send(admin, { to: token, data: call(MockERC20.abi, 'mint', [who.address, 1_000_000_000_000n]) });
      await chain.send(who, { to: token, data: call(MockERC20.abi, 'approve', [fastBridge, 2n ** 255n]) });
    }
  }
  const fb = fastBridge!, usdc = token!;

  const bridges: Bridge[] = [];
  const ETH = 10n ** 18n;
  const plans: Array<{ name: string; amount: bigint; erc20?: boolean; shortDeadline?: boolean; v2?: boolean }> = [
    { name: 'requested', amount: ETH / 10n },
    { name: 'relayed', amount: ETH / 5n },
    { name: 'proven', amount: ETH / 4n },
    { name: 'claimed', amount: 2_500_000n, erc20: true, v2: true },
    { name: 'disputed', amount: ETH / 2n },
    { name: 'reproven', amount: ETH },
    { name: 'conflicting', amount: (ETH * 3n) / 2n },
    { name: 'refunded', amount: ETH / 100n, shortDeadline: true },
    { name: 'refundedRelayed', amount: ETH / 50n, shortDeadline: true },
  ];
  const ZAP = 10n ** 15n;
  for (const plan of plans) {
    const originToken = plan.erc20 ? usdc : NATIVE;
    const destAmount = plan.amount - plan.amount / 1000n;
    const deadline = origin.clock + BLOCK_TIME + (plan.shortDeadline ? 3600 : 7 * 86_400);
    const params = {
      dstChainId: DEST_CHAIN_ID, sender: user.address, to: recipient.address, originToken, destToken: originToken,
      originAmount: plan.amount, destAmount, sendChainGas: false, deadline: BigInt(deadline),
    };
    const data = plan.v2
      ? call(FastBridgeV2.abi, 'bridgeV2', [params, {
        quoteRelayer: relayer.address, quoteExclusivitySeconds: 60n, quoteId: '0x01', zapNative: ZAP, zapData: '0x',
      }])
      : call(FastBridgeV2.abi, 'bridge', [params]);
    const sent = await origin.send(user, { to: fb, data, value: plan.erc20 ? 0n : plan.amount });
    const [event] = parseEventLogs({ abi: FastBridgeV2.abi, logs: sent.receipt.logs, eventName: 'BridgeRequested' }) as unknown as Array<{
      args: { transactionId: Hex; sender: Address; request: Hex; destChainId: number; originToken: Address; destToken: Address; originAmount: bigint; destAmount: bigint; sendChainGas: boolean };
    }>;
    const a = event!.args;
    bridges.push({
      name: plan.name, transactionId: a.transactionId, originChainId: ORIGIN_CHAIN_ID, destChainId: Number(a.destChainId),
      sender: lower(a.sender), to: accounts.recipient, originToken: lower(a.originToken), destToken: lower(a.destToken),
      originAmount: a.originAmount.toString(), destAmount: a.destAmount.toString(),
      originAmountFormatted: formatted(a.originAmount, a.originToken), destAmountFormatted: formatted(a.destAmount, a.destToken),
      sendChainGas: a.sendChainGas, request: a.request, deadline,
      request_: sent.phase, relay: null, proof: null, dispute: null, claim: null, refund: null,
    });
  }
  const b = (name: string) => bridges.find((x) => x.name === name)!;

  // Destination: relays (the relayer pays the destination amount, plus the zap's native value).
  const relay = async (bridge: Bridge) => {
    const value = bridge.destToken === NATIVE ? BigInt(bridge.destAmount) : bridge.sendChainGas ? ZAP : 0n;
    const sent = await dest.send(relayer, { to: fb, data: call(FastBridgeV2.abi, 'relay', [bridge.request]), value });
    bridge.relay = { ...sent.phase, relayer: accounts.relayer, to: bridge.to };
  };
  for (const name of ['relayed', 'proven', 'claimed', 'disputed', 'reproven', 'conflicting', 'refundedRelayed']) await relay(b(name));

  // A request the origin never emitted (its nonce is far beyond the origin's), relayed anyway.
  const forged = encodeV2Request({
    originChainId: ORIGIN_CHAIN_ID, destChainId: DEST_CHAIN_ID, originSender: user.address, destRecipient: recipient.address,
    originToken: NATIVE, destToken: NATIVE, originAmount: ETH / 20n, destAmount: ETH / 20n - ETH / 20_000n, originFeeAmount: 0n,
    deadline: BigInt(dest.clock + 86_400), nonce: 1_000_000n,
  });
  const invalid: Bridge = {
    name: 'invalidRelay', transactionId: keccak256(forged), originChainId: ORIGIN_CHAIN_ID, destChainId: DEST_CHAIN_ID,
    sender: accounts.user, to: accounts.recipient, originToken: NATIVE, destToken: NATIVE,
    originAmount: (ETH / 20n).toString(), destAmount: (ETH / 20n - ETH / 20_000n).toString(),
    originAmountFormatted: formatted(ETH / 20n, NATIVE), destAmountFormatted: formatted(ETH / 20n - ETH / 20_000n, NATIVE),
    sendChainGas: false, request: forged, deadline: dest.clock + 86_400,
    request_: null, relay: null, proof: null, dispute: null, claim: null, refund: null,
  };
  await relay(invalid);

  // Origin: proofs, disputes, a later proof, a claim after the dispute period, refunds after the deadline.
  const prove = async (bridge: Bridge, by: HDAccount, named_?: HDAccount) => {
    const destTx = bridge.relay!.transactionHash;
    const data = named_
      ? call(FastBridgeV2.abi, 'proveV2', [bridge.transactionId, destTx, named_.address])
      : call(FastBridgeV2.abi, 'prove', [bridge.request, destTx]);
    const sent = await origin.send(by, { to: fb, data });
    bridge.proof = { ...sent.phase, relayer: lower((named_ ?? by).address) };
  };
  const dispute = async (bridge: Bridge) => {
    const relayerOfProof = bridge.proof!.relayer;
    const sent = await origin.send(guard, { to: fb, data: call(FastBridgeV2.abi, 'dispute', [bridge.transactionId]) });
    bridge.dispute = { ...sent.phase, relayer: relayerOfProof };
  };
  await prove(b('proven'), relayer);
  await prove(b('claimed'), relayer);
  await prove(b('disputed'), prover2);
  await prove(b('reproven'), prover2);
  await prove(b('conflicting'), relayer, named);
  await dispute(b('disputed'));
  await dispute(b('reproven'));
  // A later proof of the disputed bridge, by the relayer (the second prover is now penalized).
  await prove(b('reproven'), relayer);

  const disputePeriod = Number(await origin.client.readContract({ address: fb, abi: FastBridgeV2.abi, functionName: 'DISPUTE_PERIOD' }) as bigint);
  const claimed = b('claimed');
  const claimTx = await origin.send(relayer, { to: fb, data: call(FastBridgeV2.abi, 'claimV2', [claimed.request]) }, disputePeriod + 60);
  claimed.claim = {
    ...claimTx.phase, relayer: accounts.relayer, to: accounts.relayer, token: claimed.originToken,
    amount: claimed.originAmount, amountFormatted: claimed.originAmountFormatted,
  };
  // The claimed amount is the origin amount less the protocol fee (zero unless set): read it from the event.
  const [claimEvent] = parseEventLogs({ abi: FastBridgeV2.abi, logs: claimTx.receipt.logs, eventName: 'BridgeDepositClaimed' }) as unknown as Array<{ args: { amount: bigint; to: Address } }>;
  claimed.claim.amount = claimEvent!.args.amount.toString();
  claimed.claim.amountFormatted = formatted(claimEvent!.args.amount, claimed.originToken);
  claimed.claim.to = lower(claimEvent!.args.to);

  for (const [i, name] of ['refunded', 'refundedRelayed'].entries()) {
    const bridge = b(name);
    const gap = i === 0 ? Math.max(BLOCK_TIME, bridge.deadline - origin.clock + 60) : BLOCK_TIME;
    const sent = await origin.send(canceler, { to: fb, data: call(FastBridgeV2.abi, 'refund', [bridge.request]) }, gap);
    const [ev] = parseEventLogs({ abi: FastBridgeV2.abi, logs: sent.receipt.logs, eventName: 'BridgeDepositRefunded' }) as unknown as Array<{ args: { amount: bigint; to: Address; token: Address } }>;
    bridge.refund = { ...sent.phase, to: lower(ev!.args.to), token: lower(ev!.args.token), amount: ev!.args.amount.toString(), amountFormatted: formatted(ev!.args.amount, ev!.args.token) };
  }

  // Empty blocks, so that every event is final whatever finality depth the indexer assumes.
  // Both heads end at the same time: an indexer that orders events across chains by time (Ponder
  // does) processes a chain's events only up to the time every other chain has reached.
  const end = Math.max(origin.clock, dest.clock) + (TAIL_BLOCKS + 1) * BLOCK_TIME;
  const heads: ChainHead[] = [];
  for (const [i, chain] of [origin, dest].entries()) {
    await chain.cluster.nodes[0]!.rpc('anvil_mine', [toHex(TAIL_BLOCKS - 1), toHex(BLOCK_TIME)]);
    await chain.cluster.nodes[0]!.rpc('evm_mine', [end]);
    const head = await chain.client.getBlock();
    chain.clock = Number(head.timestamp);
    heads.push({ chainId: chain.id, chain: chain.name, blockNumber: head.number.toString(), blockTimestamp: Number(head.timestamp), startBlock: startBlocks[i]! });
  }
  return { fastBridge: fb, token: usdc, accounts, bridges, invalidRelay: invalid, heads };
}

/** A FastBridgeV2 request in its packed V2 layout (version 2, no exclusivity, no zap). */
function encodeV2Request(r: {
  originChainId: number; destChainId: number; originSender: Address; destRecipient: Address; originToken: Address; destToken: Address;
  originAmount: bigint; destAmount: bigint; originFeeAmount: bigint; deadline: bigint; nonce: bigint;
}): Hex {
  const ZERO: Address = '0x0000000000000000000000000000000000000000';
  return encodePackedV2([2, r.originChainId, r.destChainId, r.originSender, r.destRecipient, r.originToken, r.destToken, r.originAmount,
    r.destAmount, r.originFeeAmount, r.deadline, r.nonce, ZERO, 0n, 0n, '0x']);
}
const encodePackedV2 = (values: unknown[]) => encodePacked(
  ['uint16', 'uint32', 'uint32', 'address', 'address', 'address', 'address', 'uint256', 'uint256', 'uint256', 'uint256', 'uint256', 'address', 'uint256', 'uint256', 'bytes'],
  values as never,
);
