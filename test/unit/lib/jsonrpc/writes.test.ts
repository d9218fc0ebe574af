import test from 'ava';
import { Transaction, Wallet } from 'ethers';
import { declaredMethod, neverConfirmable } from '../../../../lib/jsonrpc/methods.js';
import { classifyCall } from '../../../../lib/jsonrpc/classify.js';
import { isAlreadyKnown, isWrite, mayBroadcast, transactionHash, txHashOf, writeTable } from '../../../../lib/jsonrpc/writes.js';

const wallet = new Wallet('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d');
const raw = await wallet.signTransaction(Transaction.from({ type: 2, chainId: 1, nonce: 0, to: '0x000000000000000000000000000000000000dEaD', gasLimit: 21_000n, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 1n }));
const hash = Transaction.from(raw).hash!;
const call = (method: string, params: unknown[]) => ({ id: 1, method, params });
const legacy = await wallet.signTransaction(Transaction.from({ type: 0, chainId: 1, nonce: 0, to: '0x000000000000000000000000000000000000dEaD', gasLimit: 21_000n, gasPrice: 10n ** 10n }));
const blob = (() => {
  const tx = Transaction.from({
    type: 3, chainId: 1, nonce: 1, to: '0x000000000000000000000000000000000000dEaD', gasLimit: 21_000n, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 1n, maxFeePerBlobGas: 1n,
    blobs: [{ data: `0x${'00'.repeat(131_072)}`, commitment: `0x${'c0'.repeat(48)}`, proof: `0x${'a0'.repeat(48)}` }],
  });
  tx.signature = wallet.signingKey.sign(tx.unsignedHash);
  return tx;
})();
const bytes = (hex: string) => Buffer.from(hex.slice(2), 'hex');

test('the transaction hash is keccak-256 of the signed bytes, where each method carries them', (t) => {
  t.is(txHashOf(call('eth_sendRawTransaction', [raw])), hash);
  t.is(txHashOf(call('eth_sendRawTransactionConditional', [raw, { knownAccounts: {} }])), hash);
  t.is(txHashOf(call('eth_sendPrivateTransaction', [{ tx: raw, maxBlockNumber: '0x10' }])), hash);
  t.is(txHashOf(call('eth_sendRawTransaction', [raw.toUpperCase().replace('0X', '0x')])), hash, 'hex digits in either case');
  for (const bad of [[], ['0x'], ['0x0'], ['0xzz'], [42], [null]]) t.is(txHashOf(call('eth_sendRawTransaction', bad)), undefined, JSON.stringify(bad));
  t.is(txHashOf(call('eth_sendTransaction', [{ to: '0x00' }])), undefined, 'the node signs: no hash before it answers');
  t.is(txHashOf(call('eth_getBalance', [raw])), undefined);
});

test('already known and kin, from geth, erigon, nethermind, besu, reth, anvil, OpenEthereum', (t) => {
  for (const message of ['already known', 'known transaction: 0xabc', 'ALREADY_EXISTS: already known', 'AlreadyKnown', 'Known transaction', 'transaction already imported', 'Transaction with the same hash was already imported.', 'INTERNAL_ERROR: existing tx with same hash']) {
    t.true(isAlreadyKnown({ code: -32000, message }), message);
  }
  // A different transaction holds the nonce, or it is simply wrong: the node's answer, not ours to change.
  for (const message of ['nonce too low', 'replacement transaction underpriced', 'insufficient funds for gas * price + value', 'transaction underpriced', 'invalid sender']) {
    t.false(isAlreadyKnown({ code: -32000, message }), message);
  }
  t.false(isAlreadyKnown(undefined));
  t.false(isAlreadyKnown({ code: -32000 }));
});

test('every write is never confirmable, even when the config declares it', (t) => {
  for (const method of Object.keys(writeTable)) {
    t.true(neverConfirmable.has(method), method);
    t.false(classifyCall(call(method, [raw]), new Map([[method, { kind: 'none' }]])).confirmable, method);
    t.true('error' in declaredMethod(method), method);
  }
});

test('a batch with one write is a write; broadcast only when every write of it may be', (t) => {
  t.true(isWrite([call('eth_chainId', []), call('eth_sendRawTransaction', [raw])]));
  t.false(isWrite([call('eth_chainId', []), call('eth_blockNumber', [])]));
  t.false(isWrite([call('constructor', [])]), 'own properties only');
  t.true(mayBroadcast([call('eth_chainId', []), call('eth_sendRawTransaction', [raw])]));
  t.false(mayBroadcast([call('eth_sendRawTransaction', [raw]), call('eth_sendTransaction', [{}])]), 'the node signs: each node would make its own');
  t.false(mayBroadcast([call('eth_submitWork', [])]));
});

test('the transaction hash of each type: its bytes, a blob transaction\'s body without its blobs, none for a type not known', (t) => {
  t.is(transactionHash(bytes(legacy)), Transaction.from(legacy).hash!);
  t.is(transactionHash(bytes(raw)), hash);
  t.is(transactionHash(bytes(blob.serialized)), blob.hash!, 'network form: the blobs are not hashed');
  const body = blob.clone();
  body.blobs = null;
  t.is(transactionHash(bytes(body.serialized)), blob.hash!, 'a blob transaction without its sidecar: its bytes');
  t.is(transactionHash(bytes(`0x71${blob.serialized.slice(4)}`)), undefined, 'zkSync 0x71 and other types');
  for (const cut of [1, 2, 5, 100]) t.is(transactionHash(bytes(blob.serialized).subarray(0, cut)), undefined, `cut at ${cut}`);
  t.is(transactionHash(Buffer.alloc(0)), undefined);
});
