/**
 * decodeRequest against the contract's own decoder: FastBridgeV2 (the real compiled contract,
 * test/fixtures/fastbridge/) deployed on anvil; its pure `getBridgeTransactionV2(bytes)`
 * decodes the same bytes. Requests are generated (edge cases: no exclusivity, maximal integers,
 * call params of several sizes) and one comes from a real `bridgeV2` call's BridgeRequested event.
 * The v1 layout (abi.encode of BridgeTransaction) has no on-chain decoder in FastBridgeV2: it is
 * checked against ethers' ABI coder (and encoded by viem's), two independent implementations.
 * decodeRequest gives addresses EIP-55 checksummed, as both oracles do: compared exactly.
 */
import test from 'ava';
import { AbiCoder } from 'ethers';
import {
  createPublicClient, createWalletClient, decodeEventLog, encodeAbiParameters, encodePacked, getAddress, http, parseEventLogs,
  type Address, type Hex,
} from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { decodeRequest } from '../../../lib/indexer/read/request-decode.js';
import { deployFastBridge, fastBridgeArtifact } from '../../support/fastbridge.js';
import { anvilMnemonic, startAnvils, stopAllAnvils, type AnvilCluster } from '../../support/anvil.js';

const FastBridgeV2 = fastBridgeArtifact('FastBridgeV2');

const MAX256 = 2n ** 256n - 1n;
const MAX32 = 2 ** 32 - 1;
const NATIVE = '0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE' as Address;
const ZERO = '0x0000000000000000000000000000000000000000' as Address;

interface V2 {
  originChainId: number; destChainId: number; originSender: Address; destRecipient: Address; originToken: Address; destToken: Address;
  originAmount: bigint; destAmount: bigint; originFeeAmount: bigint; deadline: bigint; nonce: bigint;
  exclusivityRelayer: Address; exclusivityEndTime: bigint; zapNative: bigint; zapData: Hex;
}

/** BridgeTransactionV2Lib.encodeV2, written from its documented layout. */
function encodeV2(tx: V2, version = 2): Hex {
  return encodePacked(
    ['uint16', 'uint32', 'uint32', 'address', 'address', 'address', 'address', 'uint256', 'uint256', 'uint256', 'uint256', 'uint256', 'address', 'uint256', 'uint256', 'bytes'],
    [version, tx.originChainId, tx.destChainId, tx.originSender, tx.destRecipient, tx.originToken, tx.destToken, tx.originAmount,
      tx.destAmount, tx.originFeeAmount, tx.deadline, tx.nonce, tx.exclusivityRelayer, tx.exclusivityEndTime, tx.zapNative, tx.zapData],
  );
}

const base: V2 = {
  originChainId: 42161, destChainId: 8453,
  originSender: getAddress('0xa11ce00000000000000000000000000000000001'), destRecipient: getAddress('0xb0b0000000000000000000000000000000000002'),
  originToken: getAddress('0xaf88d065e77c8cc2239327c5edb3a432268e5831'), destToken: getAddress('0x833589fcd6edb6e08f4c7c32d4f71b54bda02913'),
  originAmount: 1_000_000n, destAmount: 999_000n, originFeeAmount: 100n, deadline: 1_760_003_600n, nonce: 7n,
  exclusivityRelayer: getAddress('0x6a4d000000000000000000000000000000000003'), exclusivityEndTime: 1_760_000_060n, zapNative: 0n, zapData: '0x',
};

const CASES: Record<string, V2> = {
  typical: base,
  'no exclusivity (zero relayer and end time)': { ...base, exclusivityRelayer: ZERO, exclusivityEndTime: 0n },
  'maximal integers and chain ids': {
    ...base, originChainId: MAX32, destChainId: MAX32, originAmount: MAX256, destAmount: MAX256, originFeeAmount: MAX256,
    deadline: MAX256, nonce: MAX256, exclusivityEndTime: MAX256, zapNative: MAX256,
  },
  'zero everything': {
    originChainId: 0, destChainId: 0, originSender: ZERO, destRecipient: ZERO, originToken: ZERO, destToken: ZERO,
    originAmount: 0n, destAmount: 0n, originFeeAmount: 0n, deadline: 0n, nonce: 0n, exclusivityRelayer: ZERO, exclusivityEndTime: 0n,
    zapNative: 0n, zapData: '0x',
  },
  'call params (short zap data)': { ...base, zapNative: 10n ** 18n, zapData: '0xdeadbeef' },
  'call params (long zap data, not a multiple of 32 bytes)': { ...base, zapData: `0x${'ab'.repeat(1000)}01` },
  'native token': { ...base, originToken: NATIVE, destToken: NATIVE },
};

/** The contract's tuple, as viem returns it, in decodeRequest's form. */
function fromContract(t: Record<string, unknown>) {
  const s = (v: unknown) => (v as bigint).toString();
  const a = (v: unknown) => v as string;
  return {
    version: 2, originChainId: t.originChainId, destChainId: t.destChainId, originSender: a(t.originSender), destRecipient: a(t.destRecipient),
    originToken: a(t.originToken), destToken: a(t.destToken), originAmount: s(t.originAmount), destAmount: s(t.destAmount),
    originFeeAmount: s(t.originFeeAmount), deadline: s(t.deadline), nonce: s(t.nonce), sendChainGas: null,
    exclusivityRelayer: a(t.exclusivityRelayer), exclusivityEndTime: s(t.exclusivityEndTime), zapNative: s(t.zapNative), zapData: t.zapData,
  };
}

let cluster: AnvilCluster;
let bridge: Address;
let client: ReturnType<typeof createPublicClient>;

test.before(async () => {
  cluster = await startAnvils(1, { chainId: 42161 });
  const node = cluster.nodes[0]!;
  await node.rpc('evm_setAutomine', [true]);
  client = createPublicClient({ transport: http(node.url) });
  bridge = await deployFastBridge(node.url, mnemonicToAccount(anvilMnemonic));
});

test.after.always(async () => {
  await stopAllAnvils();
});

const onChain = (request: Hex) => client.readContract({ address: bridge, abi: FastBridgeV2.abi, functionName: 'getBridgeTransactionV2', args: [request] });

for (const [name, tx] of Object.entries(CASES)) {
  test(`v2 request, ${name}: decodeRequest equals getBridgeTransactionV2`, async (t) => {
    const request = encodeV2(tx);
    const contract = fromContract(await onChain(request) as Record<string, unknown>);
    t.deepEqual(decodeRequest(request), contract as never);
    t.deepEqual(decodeRequest(request.toUpperCase().replace('0X', '0x')), contract as never, 'upper-case hex decodes the same');
  });
}

test('v2 requests the contract rejects (another version, truncated) decode to null', async (t) => {
  for (const request of [encodeV2(base, 3), encodeV2(base, 1), encodeV2(base).slice(0, 2 + 333 * 2) as Hex]) {
    await t.throwsAsync(onChain(request), undefined, `the contract rejects ${request.slice(0, 10)}… (${(request.length - 2) / 2} bytes)`);
    t.is(decodeRequest(request), null);
  }
  t.is(decodeRequest('0x123'), null, 'odd length');
  t.is(decodeRequest('0xzz'), null, 'not hex');
  t.is(decodeRequest(''), null, 'empty');
});

test('the request of a real bridgeV2 call decodes to what was bridged, as the contract decodes it', async (t) => {
  const account = mnemonicToAccount(anvilMnemonic);
  const wallet = createWalletClient({ account, transport: http(cluster.nodes[0]!.url) });
  const now = Number((await client.getBlock()).timestamp);
  const params = {
    dstChainId: 8453, sender: account.address, to: base.destRecipient, originToken: NATIVE, destToken: base.destToken,
    originAmount: 5n * 10n ** 17n, destAmount: 123_456_789n, sendChainGas: false, deadline: BigInt(now + 7200),
  };
  const paramsV2 = { quoteRelayer: base.exclusivityRelayer, quoteExclusivitySeconds: 60n, quoteId: '0x01' as Hex, zapNative: 0n, zapData: '0xcafe' as Hex };
  const hash = await wallet.writeContract({
    address: bridge, abi: FastBridgeV2.abi, functionName: 'bridgeV2', args: [params, paramsV2], value: params.originAmount, chain: null,
  });
  const receipt = await client.waitForTransactionReceipt({ hash });
  t.is(receipt.status, 'success');
  const [event] = parseEventLogs({ abi: FastBridgeV2.abi, logs: receipt.logs, eventName: 'BridgeRequested' });
  const args = decodeEventLog({ abi: FastBridgeV2.abi, ...event! }).args as unknown as { request: Hex };
  const block = await client.getBlock({ blockNumber: receipt.blockNumber });
  const decoded = decodeRequest(args.request);
  t.deepEqual(decoded, fromContract(await onChain(args.request) as Record<string, unknown>) as never);
  t.like(decoded, {
    version: 2, originChainId: 42161, destChainId: 8453, originSender: account.address, destRecipient: getAddress(base.destRecipient),
    originToken: getAddress(NATIVE), destToken: getAddress(base.destToken), originAmount: '500000000000000000', destAmount: '123456789',
    deadline: String(now + 7200), nonce: '0', exclusivityRelayer: getAddress(base.exclusivityRelayer),
    exclusivityEndTime: String(block.timestamp + 60n), zapNative: '0', zapData: '0xcafe',
  });
});

const V1_TYPES = ['tuple(uint32,uint32,address,address,address,address,uint256,uint256,uint256,bool,uint256,uint256)'];

for (const [name, tx] of Object.entries(CASES)) {
  for (const sendChainGas of [false, true]) {
    test(`v1 request (FastBridge BridgeTransaction), ${name}, sendChainGas ${sendChainGas}: decodes as ethers' ABI coder does`, (t) => {
      const values = [tx.originChainId, tx.destChainId, tx.originSender, tx.destRecipient, tx.originToken, tx.destToken,
        tx.originAmount, tx.destAmount, tx.originFeeAmount, sendChainGas, tx.deadline, tx.nonce] as const;
      const request = encodeAbiParameters(
        [{ type: 'tuple', components: V1_TYPES[0]!.slice(6, -1).split(',').map((type) => ({ type })) }], [values as never],
      );
      const [e] = AbiCoder.defaultAbiCoder().decode(V1_TYPES, request) as unknown as [unknown[]];
      t.deepEqual(decodeRequest(request), {
        version: 1, originChainId: Number(e[0]), destChainId: Number(e[1]), originSender: e[2] as string, destRecipient: e[3] as string,
        originToken: e[4] as string, destToken: e[5] as string, originAmount: String(e[6]), destAmount: String(e[7]),
        originFeeAmount: String(e[8]), sendChainGas: e[9] as boolean, deadline: String(e[10]), nonce: String(e[11]),
        exclusivityRelayer: null, exclusivityEndTime: null, zapNative: null, zapData: null,
      });
    });
  }
}

test('v1 requests that are not a valid BridgeTransaction decode to null', (t) => {
  const word = (hex: string) => hex.padStart(64, '0');
  const valid = encodeAbiParameters(
    [{ type: 'tuple', components: V1_TYPES[0]!.slice(6, -1).split(',').map((type) => ({ type })) }],
    [[1, 2, ZERO, ZERO, ZERO, ZERO, 1n, 1n, 0n, true, 1n, 1n] as never],
  );
  const words = valid.slice(2).match(/.{64}/g)!;
  t.not(decodeRequest(valid), null);
  t.is(decodeRequest(`0x${words.slice(0, 11).join('')}`), null, 'one word short');
  t.is(decodeRequest(`0x${[...words.slice(0, 9), word('2'), ...words.slice(10)].join('')}`), null, 'a bool word of 2');
  t.is(decodeRequest(`0x${[word('1'.repeat(9)), ...words.slice(1)].join('')}`), null, 'a chain id wider than uint32');
  t.is(decodeRequest(`0x${[...words.slice(0, 1), word('1'.repeat(9)), ...words.slice(2)].join('')}`), null, 'a destination chain id wider than uint32');
  t.is(decodeRequest(`0x${[...words.slice(0, 4), `01${'0'.repeat(62)}`, ...words.slice(5)].join('')}`), null, 'an address word with its padding set');
  // ethers rejects the dirty address too; it accepts the wide uint32 and the bool of 2, which
  // Solidity's abi.decode (ABI coder v2) reverts on, as decodeRequest refuses them.
  const dirty = `0x${[...words.slice(0, 4), `01${'0'.repeat(62)}`, ...words.slice(5)].join('')}`;
  t.throws(() => AbiCoder.defaultAbiCoder().decode(V1_TYPES, dirty).toArray(true), undefined, 'ethers rejects the dirty address word');
});
