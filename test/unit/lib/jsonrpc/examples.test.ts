/**
 * The example data the method table's examples use says what its comments say: the topic and
 * selectors are the keccak of their signatures, the addresses are EIP-55 checksummed, the raw
 * transaction is WETH.deposit() on chain 1, and the block-pinned examples are confirmable.
 */
import test from 'ava';
import { getAddress, keccak256, parseTransaction, recoverTransactionAddress, toHex, type Hex } from 'viem';
import { BALANCE_OF, BLOCK, FIRST_TX, FIRST_TX_BLOCK, FIRST_TX_BLOCK_HASH, RAW_TX, TRANSFER_TOPIC, USDC, VITALIK, WETH } from '../../../../lib/jsonrpc/examples.js';
import { classifyCall } from '../../../../lib/jsonrpc/classify.js';

const selector = (signature: string) => keccak256(toHex(signature)).slice(0, 10);

test('the Transfer topic and the balanceOf call should be what their signatures hash to', (t) => {
  t.is(TRANSFER_TOPIC, keccak256(toHex('Transfer(address,address,uint256)')));
  t.is(BALANCE_OF.to, USDC);
  t.is(BALANCE_OF.data, `${selector('balanceOf(address)')}${'0'.repeat(24)}${VITALIK.slice(2).toLowerCase()}`);
});

test('the addresses should be EIP-55 checksummed, the hashes 32 bytes', (t) => {
  for (const a of [WETH, USDC, VITALIK]) t.is(a, getAddress(a));
  for (const h of [FIRST_TX, FIRST_TX_BLOCK_HASH, TRANSFER_TOPIC]) t.regex(h, /^0x[0-9a-f]{64}$/);
  t.is(Number(BLOCK), 20_000_000);
  t.is(Number(FIRST_TX_BLOCK), 46147);
});

test('the raw transaction should be WETH.deposit() with value 0 on chain 1, nonce 0, from the test key #0', async (t) => {
  const tx = parseTransaction(RAW_TX as Hex);
  t.like(tx, { chainId: 1, to: WETH.toLowerCase(), data: selector('deposit()') });
  t.is(tx.nonce ?? 0, 0);
  t.is(tx.value ?? 0n, 0n);
  t.is(await recoverTransactionAddress({ serializedTransaction: RAW_TX as `0x02${string}` }), '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266');
});

test('a block-pinned example should be confirmable', (t) => {
  t.true(classifyCall({ id: 1, method: 'eth_getBalance', params: [VITALIK, BLOCK] }, new Map()).confirmable);
  t.true(classifyCall({ id: 1, method: 'eth_call', params: [BALANCE_OF, BLOCK] }, new Map()).confirmable);
});
