/**
 * A write in broadcast mode against three real nodes (anvil, no automine): the transaction,
 * signed with viem by a funded dev account, reaches each node once, is mined once on each (its
 * nonce used once, no second transaction), and the client gets its hash, the hash the nodes
 * report. Sending the same bytes again is answered with the hash too: each node already has it.
 */
import test from 'ava';
import { keccak256, type Hex } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { alreadyKnownMessage } from '../../../lib/jsonrpc/writes.js';
import { anvilMnemonic, startAnvils, stopAllAnvils } from '../../support/anvil.js';
import { rpc, startGateway } from '../../support/gateway.js';
import { until } from '../../support/wait.js';

test.after.always(() => stopAllAnvils());

test('anvil: a transaction broadcast to three nodes is mined once on each, and the client gets its hash', async (t) => {
  const cluster = await startAnvils(3);
  t.teardown(() => cluster.stop());
  const gw = await startGateway({ timeouts: { hedgeMs: 0 }, chains: { [cluster.chainId]: { rpcs: cluster.urls, writes: { broadcast: 'all' } } } });
  t.teardown(() => gw.close());

  const account = mnemonicToAccount(anvilMnemonic, { addressIndex: 5 });
  const raw = await account.signTransaction({
    type: 'eip1559',
    chainId: cluster.chainId,
    nonce: 0,
    to: '0x000000000000000000000000000000000000dEaD',
    value: 12_345n,
    gas: 21_000n,
    maxFeePerGas: 10_000_000_000n,
    maxPriorityFeePerGas: 1_000_000_000n,
  });

  const r = await gw.post(`/rpc/${cluster.chainId}`, rpc('eth_sendRawTransaction', [raw], 1));
  t.is(r.status, 200, r.text);
  const hash = r.body.result as string;
  t.is(hash, keccak256(raw as Hex));
  t.deepEqual(String(r.headers['x-checked-urls']).split(',').sort(), [...cluster.urls].sort());
  // The first node to accept answers the client; the calls to the other two are left to finish
  // on their own (lib/jsonrpc/README.md, Writes): wait until each node holds the transaction.
  const holds = async (node: (typeof cluster.nodes)[number]) => (await node.rpc<{ hash: string } | null>('eth_getTransactionByHash', [hash]))?.hash === hash;
  for (const [i, node] of cluster.nodes.entries()) {
    const got = await until(() => holds(node)).then(() => true, () => false);
    if (!got) return t.fail(`node ${i} never got the transaction`);
  }

  // The same bytes again: every node says it has them; the client gets the hash, not an error.
  const again = await gw.post(`/rpc/${cluster.chainId}`, rpc('eth_sendRawTransaction', [raw], 2));
  t.is(again.status, 200, again.text);
  t.deepEqual(again.body, { jsonrpc: '2.0', id: 2, result: hash });
  // (what a node itself answers to those bytes again: an error the table reads as `already known`)
  const direct = await cluster.nodes[0]!.request('eth_sendRawTransaction', [raw]);
  t.regex(String(direct.error?.message), alreadyKnownMessage);

  for (const [i, node] of cluster.nodes.entries()) {
    const pending = await node.rpc<{ hash: string } | null>('eth_getTransactionByHash', [hash]);
    t.is(pending?.hash, hash, `node ${i} has it, under the hash the client got`);
    await node.rpc('evm_mine', []);
    const block = await node.rpc<{ transactions: string[] }>('eth_getBlockByNumber', ['latest', false]);
    t.deepEqual(block.transactions, [hash], `node ${i} mined it once, and nothing else`);
    t.is(await node.rpc('eth_getTransactionCount', [account.address, 'latest']), '0x1', `node ${i}: the nonce was used once`);
    const receipt = await node.rpc<{ status: string }>('eth_getTransactionReceipt', [hash]);
    t.is(receipt.status, '0x1');
  }
});
