import test from 'ava';
import { finalBlockOf } from '../../../../lib/cache/final.js';
import type { RpcCall } from '../../../../lib/jsonrpc/types.js';
import type { Chain, Upstream } from '../../../../lib/upstream/registry.js';
import { newHealth } from '../../../../lib/health/health.js';

/** A chain of three upstreams whose finalized head is `finalized` (undefined: not known). */
function chainAt(finalized: bigint | undefined): Chain {
  const upstreams = [0, 1, 2].map((i) => {
    const health = newHealth();
    health.head = 100n;
    if (finalized !== undefined) health.finalized = finalized;
    return { url: `http://u${i}`, label: `http://u${i}`, chainId: '1', provider: `u${i}`, health } as unknown as Upstream;
  });
  return { id: '1', upstreams, extraConfirmable: new Map() } as unknown as Chain;
}
const call = (method: string, params: unknown[]): RpcCall => ({ id: 1, method, params });
const body = (value: unknown) => Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, ...(value as object) }));

test('a number pin at or below the finalized head is final; above it, or with no finalized head known, it is not', (t) => {
  const chain = chainAt(90n);
  t.is(finalBlockOf(chain, call('eth_getBalance', ['0xaa', '0x5a']), body({ result: '0x1' })), 90n);
  t.is(finalBlockOf(chain, call('eth_getBalance', ['0xaa', '0x5b']), body({ result: '0x1' })), undefined);
  t.is(finalBlockOf(chainAt(undefined), call('eth_getBalance', ['0xaa', '0x1']), body({ result: '0x1' })), undefined);
  t.is(finalBlockOf(chain, call('eth_getLogs', [{ fromBlock: '0x1', toBlock: '0x10' }]), body({ result: [] })), 16n, 'an empty list over a final range cannot change');
  t.is(finalBlockOf(chain, call('eth_getBalance', ['0xaa', 'latest']), body({ result: '0x1' })), undefined);
});

test('never a null result or a node error, whatever the block', (t) => {
  const chain = chainAt(90n);
  t.is(finalBlockOf(chain, call('eth_getBlockByNumber', ['0x1', false]), body({ result: null })), undefined);
  t.is(finalBlockOf(chain, call('eth_call', [{ to: '0xaa' }, '0x1']), body({ error: { code: 3, message: 'execution reverted' } })), undefined);
});

test('a hash pin: the block its answer names must be final; an absence never is', (t) => {
  const chain = chainAt(90n);
  const tx = `0x${'11'.repeat(32)}`;
  t.is(finalBlockOf(chain, call('eth_getTransactionReceipt', [tx]), body({ result: { blockNumber: '0x10' } })), 16n);
  t.is(finalBlockOf(chain, call('eth_getTransactionReceipt', [tx]), body({ result: { blockNumber: '0x60' } })), undefined);
  t.is(finalBlockOf(chain, call('eth_getTransactionReceipt', [tx]), body({ result: null })), undefined);
  t.is(finalBlockOf(chain, call('eth_getBlockByHash', [tx, false]), body({ result: { number: '0x20' } })), 32n);
  t.is(finalBlockOf(chain, call('eth_getBlockReceipts', [tx]), body({ result: [] })), undefined, 'an empty list names no block');
  t.is(finalBlockOf(chain, call('eth_getTransactionByHash', [tx]), body({ result: { blockNumber: null } })), undefined, 'a pending transaction');
});
