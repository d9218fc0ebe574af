/**
 * Proof mode on the wire: an anvil chain (test/support/proof-chain.ts) behind providers that lie
 * (test/support/tamper-proxy.ts). At N=1 a lie in a storage slot, a proof of another block, a
 * header whose hash does not match its fields, a forged receipt, a dropped or added log is caught:
 * the honest provider's answer is served when there is one (call counts asserted), else a -32021
 * that says what failed, never the lie.
 */
import test from 'ava';
import { zeroPadValue } from 'ethers';
import { stopAllAnvils } from '../../support/anvil.js';
import { rpc, startGateway, type Gateway } from '../../support/gateway.js';
import { EMITTER_TOPIC, proofChain, type ProofChain } from '../../support/proof-chain.js';
import { startTamperProxy, type Tamper, type TamperProxy } from '../../support/tamper-proxy.js';

let chain: ProofChain;
test.before(async () => {
  chain = await proofChain('cancun');
});
test.after.always(stopAllAnvils);

const hex = (n: number) => `0x${n.toString(16)}`;

/** A gateway over a liar (asked first) and an honest provider, at N=1 in proof mode. */
async function liarFirst(tamper: Tamper, options: { honest?: boolean; verify?: string; confirmations?: number; timeouts?: Record<string, number> } = {}): Promise<{ gw: Gateway; liar: TamperProxy; honest: TamperProxy; close(): Promise<void> }> {
  const liar = await startTamperProxy(chain.node.url, tamper);
  const honest = await startTamperProxy(chain.node.url, options.honest === false ? tamper : undefined);
  const gw = await startGateway({ confirmations: options.confirmations ?? 1, ...(options.timeouts && { timeouts: { hedgeMs: 1000, ...options.timeouts } }), chains: { [chain.chainId]: { rpcs: [liar.url, honest.url], strategy: 'priority', verify: options.verify ?? 'proof' } } });
  return { gw, liar, honest, close: async () => { await gw.close(); await liar.close(); await honest.close(); } };
}

test.serial('a storage read is proven from one provider at N=1: X-Verified-By proof, the agreed header named', async (t) => {
  const { gw, liar, honest, close } = await liarFirst(() => undefined);
  t.teardown(close);
  const at = hex(chain.blocks.logs);
  const reply = await gw.post(`/rpc/${chain.chainId}`, rpc('eth_getStorageAt', [chain.emitter, '0x1', at]));
  t.is(reply.status, 200);
  t.is(reply.body.result, chain.storedWord);
  t.is(reply.headers['x-verified-by'], 'proof');
  const block = await chain.node.rpc<{ hash: string }>('eth_getBlockByNumber', [at, false]);
  t.is(reply.headers['x-block-hash'], block.hash);
  t.is(reply.headers['x-forwarded-from'], liar.url);
  t.is(reply.headers['x-confirmable'], 'true');
  // the header from the first provider, the proof from it too: the second never asked
  t.is(liar.calls('eth_getBlockByNumber'), 1);
  t.is(liar.calls('eth_getProof'), 1);
  t.is(honest.calls(), 0);
  // the slot was asked as a 32-byte word
  const balance = await gw.post(`/rpc/${chain.chainId}`, rpc('eth_getBalance', [chain.recipient, at]));
  t.is(balance.body.result, await chain.node.rpc<string>('eth_getBalance', [chain.recipient, at]));
  t.is(balance.headers['x-verified-by'], 'proof');
});

test.serial('a lie in one storage slot is caught: the liar charged, the honest provider\'s proven answer served', async (t) => {
  const forged = zeroPadValue('0x0bad', 32);
  const { gw, liar, honest, close } = await liarFirst((call, result) => {
    if (call.method !== 'eth_getProof') return undefined;
    const proof = result as { storageProof: { value: string }[] };
    proof.storageProof[0]!.value = forged;
    return proof;
  });
  t.teardown(close);
  const reply = await gw.post(`/rpc/${chain.chainId}`, rpc('eth_getStorageAt', [chain.emitter, '0x1', hex(chain.blocks.logs)]));
  t.is(reply.status, 200);
  t.is(reply.body.result, chain.storedWord);
  t.is(reply.headers['x-forwarded-from'], honest.url);
  t.is(liar.calls('eth_getProof'), 1);
  t.is(honest.calls('eth_getProof'), 1);
  t.is(honest.calls('eth_getBlockByNumber'), 0, 'the header was agreed once, by the first provider');
  const chains = await gw.request('GET', '/chains');
  const ups = chains.body.chains?.[0]?.upstreams ?? chains.body[0].upstreams;
  t.is(ups.find((u: { url: string }) => u.url === liar.url).proofsFailed, 1);
  t.is(ups.find((u: { url: string }) => u.url === honest.url).proofsChecked, 1);
  const metrics = await gw.request('GET', '/metrics');
  t.regex(metrics.text, /omnigate_proofs_total\{chain="31337",upstream="[^"]+",outcome="failed"\} 1/);
});

test.serial('no provider proves: -32021 says what failed, never the lie', async (t) => {
  const { gw, close } = await liarFirst((call, result) => {
    if (call.method !== 'eth_getProof') return undefined;
    (result as { balance: string }).balance = '0xdeadbeef';
    return result;
  }, { honest: false });
  t.teardown(close);
  const reply = await gw.post(`/rpc/${chain.chainId}`, rpc('eth_getBalance', [chain.recipient, hex(chain.blocks.logs)]));
  t.is(reply.status, 502);
  t.is(reply.body.error.code, -32021);
  t.is(reply.body.result, undefined);
  t.is(reply.body.error.data.failures.length, 2);
  t.is(reply.body.error.data.failures[0].reason, 'value');
  t.is(reply.body.error.data.failures[0].field, 'balance');
  t.is(reply.body.error.data.blockNumber, hex(chain.blocks.logs));
});

test.serial('a proof of another block is caught', async (t) => {
  // the liar answers eth_getProof with the proof of the account at an older block
  const older = await chain.node.rpc('eth_getProof', [chain.recipient, [], hex(chain.blocks.deploy - 1)]);
  const { gw, liar, honest, close } = await liarFirst((call) => (call.method === 'eth_getProof' ? older : undefined));
  t.teardown(close);
  const reply = await gw.post(`/rpc/${chain.chainId}`, rpc('eth_getBalance', [chain.recipient, hex(chain.blocks.logs)]));
  t.is(reply.status, 200);
  t.is(reply.body.result, await chain.node.rpc<string>('eth_getBalance', [chain.recipient, hex(chain.blocks.logs)]));
  t.is(reply.headers['x-forwarded-from'], honest.url);
  t.is(liar.calls('eth_getProof'), 1);
});

test.serial('a header whose hash does not match its fields is not agreed on: the next provider\'s header is', async (t) => {
  const { gw, liar, honest, close } = await liarFirst((call, result) => {
    if (call.method !== 'eth_getBlockByNumber') return undefined;
    (result as { stateRoot: string }).stateRoot = `0x${'11'.repeat(32)}`;
    return result;
  });
  t.teardown(close);
  const at = hex(chain.blocks.logs);
  const reply = await gw.post(`/rpc/${chain.chainId}`, rpc('eth_getBalance', [chain.recipient, at]));
  t.is(reply.status, 200);
  t.is(reply.body.result, await chain.node.rpc<string>('eth_getBalance', [chain.recipient, at]));
  t.is(reply.headers['x-verified-by'], 'proof');
  t.is(liar.calls('eth_getBlockByNumber'), 1);
  t.is(honest.calls('eth_getBlockByNumber'), 1);
  const chains = await gw.request('GET', '/chains');
  const ups = chains.body.chains?.[0]?.upstreams ?? chains.body[0].upstreams;
  t.is(ups.find((u: { url: string }) => u.url === liar.url).proofsFailed, 1);
});

test.serial('verify: agreement (and auto before its self-check) asks by agreement: X-Verified-By agreement', async (t) => {
  for (const verify of ['agreement', 'auto']) {
    const { gw, liar, close } = await liarFirst(() => undefined, { verify });
    const reply = await gw.post(`/rpc/${chain.chainId}`, rpc('eth_getBalance', [chain.recipient, hex(chain.blocks.logs)]));
    t.is(reply.headers['x-verified-by'], 'agreement', verify);
    t.is(reply.headers['x-block-hash'], undefined);
    t.is(liar.calls('eth_getProof'), 0);
    t.is(liar.calls('eth_getBalance'), 1);
    await close();
  }
});

test.serial('a forged receipt is caught: the honest provider\'s receipt, proven, is served', async (t) => {
  const block = await chain.node.rpc<{ transactions: string[] }>('eth_getBlockByNumber', [hex(chain.blocks.logs), false]);
  const txHash = block.transactions[0]!;
  const { gw, liar, honest, close } = await liarFirst((call, result) => {
    if (call.method !== 'eth_getTransactionReceipt' && call.method !== 'eth_getBlockReceipts') return undefined;
    const forge = (r: { status: string; transactionHash: string }) => (r.transactionHash === txHash ? { ...r, status: '0x0' } : r);
    return Array.isArray(result) ? result.map(forge) : forge(result as never);
  });
  t.teardown(close);
  const reply = await gw.post(`/rpc/${chain.chainId}`, rpc('eth_getTransactionReceipt', [txHash]));
  t.is(reply.status, 200);
  t.is(reply.body.result.status, '0x1');
  t.is(reply.headers['x-verified-by'], 'proof');
  t.is(reply.headers['x-forwarded-from'], honest.url);
  t.is(liar.calls('eth_getBlockReceipts'), 1);
  const receipts = await gw.post(`/rpc/${chain.chainId}`, rpc('eth_getBlockReceipts', [hex(chain.blocks.logs)]));
  t.is(receipts.body.result.length, block.transactions.length);
  t.is(receipts.headers['x-forwarded-from'], honest.url);
});

const filter = (extra: Record<string, unknown> = {}) => ({ address: chain.emitter, topics: [EMITTER_TOPIC], fromBlock: '0x0', toBlock: hex(chain.blocks.empty), ...extra });

test.serial('eth_getLogs proven complete: a dropped log is caught and charged, the proven logs served', async (t) => {
  const all = await chain.node.rpc<unknown[]>('eth_getLogs', [filter()]);
  t.is(all.length, 3);
  const { gw, liar, honest, close } = await liarFirst((call, result) => (call.method === 'eth_getLogs' ? (result as unknown[]).slice(1) : undefined));
  t.teardown(close);
  const reply = await gw.post(`/rpc/${chain.chainId}`, rpc('eth_getLogs', [filter()]));
  t.is(reply.status, 200);
  t.is(reply.headers['x-verified-by'], 'proof');
  t.is(reply.body.result.length, 3);
  t.deepEqual(reply.body.result.map((l: { logIndex: string; data: string }) => [l.logIndex, l.data]), (all as { logIndex: string; data: string }[]).map((l) => [l.logIndex, l.data]));
  // one agreement on the top header, the rest by parentHash in one batch, receipts of the bloom's blocks only
  t.is(liar.calls('eth_getBlockByNumber'), chain.blocks.empty + 1);
  t.is(liar.calls('eth_getBlockReceipts'), 1);
  t.is(honest.calls(), 0);
  const chains = await gw.request('GET', '/chains');
  const ups = chains.body.chains?.[0]?.upstreams ?? chains.body[0].upstreams;
  t.is(ups.find((u: { url: string }) => u.url === liar.url).proofsFailed, 1);
});

test.serial('eth_getLogs: a log added to the receipts is caught by the receipts root', async (t) => {
  const { gw, liar, honest, close } = await liarFirst((call, result) => {
    if (call.method !== 'eth_getBlockReceipts') return undefined;
    const receipts = result as { logs: unknown[] }[];
    receipts[0]!.logs.push({ ...(receipts[0]!.logs[0] as object) });
    return receipts;
  });
  t.teardown(close);
  const reply = await gw.post(`/rpc/${chain.chainId}`, rpc('eth_getLogs', [filter()]));
  t.is(reply.status, 200);
  t.is(reply.body.result.length, 3);
  t.is(reply.headers['x-forwarded-from'], honest.url);
  t.is(liar.calls('eth_getBlockReceipts'), 1);
});

test.serial('batch members are proven each on its own', async (t) => {
  const { gw, close } = await liarFirst((call, result) => (call.method === 'eth_getProof' && (call.params[0] as string) === chain.recipient ? { ...(result as object), balance: '0x1' } : undefined));
  t.teardown(close);
  const at = hex(chain.blocks.logs);
  const reply = await gw.post(`/rpc/${chain.chainId}`, [rpc('eth_getBalance', [chain.recipient, at], 1), rpc('eth_getStorageAt', [chain.emitter, '0x1', at], 2)]);
  t.is(reply.status, 200);
  t.is(reply.body[0].result, await chain.node.rpc<string>('eth_getBalance', [chain.recipient, at]));
  t.is(reply.body[1].result, chain.storedWord);
  t.is(reply.headers['x-confirmable'], 'true');
});

test.serial('the request deadline covers the proof: providers too slow to give their material end in -32012', async (t) => {
  const { gw, liar, honest, close } = await liarFirst(() => undefined, { timeouts: { upstreamMs: 1000, requestMs: 1000 } });
  t.teardown(close);
  liar.slow.set('eth_getProof', 5000);
  honest.slow.set('eth_getProof', 5000);
  const reply = await gw.post(`/rpc/${chain.chainId}`, rpc('eth_getBalance', [chain.recipient, hex(chain.blocks.logs)]));
  t.is(reply.status, 504);
  t.is(reply.body.error.code, -32012);
  t.is(reply.body.result, undefined);
});

test.serial('N=2: the header agreed by two providers, the answer proven from one; X-Checked-URLS names both', async (t) => {
  const { gw, liar, honest, close } = await liarFirst(() => undefined, { confirmations: 2 });
  t.teardown(close);
  const at = hex(chain.blocks.logs);
  const reply = await gw.post(`/rpc/${chain.chainId}`, rpc('eth_getCode', [chain.emitter, at]));
  t.is(reply.status, 200);
  t.is(reply.body.result, await chain.node.rpc<string>('eth_getCode', [chain.emitter, at]));
  t.is(reply.headers['x-verified-by'], 'proof');
  t.is(reply.headers['x-required-confirmations'], '2');
  t.deepEqual(new Set(String(reply.headers['x-checked-urls']).split(',')), new Set([liar.url, honest.url]));
  t.is(liar.calls('eth_getBlockByNumber') + honest.calls('eth_getBlockByNumber'), 2);
  t.is(liar.calls('eth_getProof') + honest.calls('eth_getProof'), 1, 'one provider proves');
});

/** A gateway whose chains are the anvil chain under other chain ids, verify: auto, its self-checks run. */
async function autoGateway(ids: readonly string[], tamper?: Tamper): Promise<{ gw: Gateway; close(): Promise<void> }> {
  const proxy = await startTamperProxy(chain.node.url, tamper);
  const gw = await startGateway({ confirmations: 1, chains: Object.fromEntries(ids.map((id) => [id, { rpcs: [proxy.url] }])) });
  await gw.rpc.startProofChecks().done;
  return { gw, close: async () => { await gw.close(); await proxy.close(); } };
}

const verifyOf = async (gw: Gateway, id: string) => {
  const chains = await gw.request('GET', '/chains');
  const list = (chains.body.chains ?? chains.body) as { chainId: string; verify: { configured: string; mode: string; reason: string } }[];
  return list.find((c) => c.chainId === id)!.verify;
};

test.serial('auto: the self-check passes on a chain without quirks: its reads are proven', async (t) => {
  const { gw, close } = await autoGateway([String(chain.chainId)]);
  t.teardown(close);
  const verify = await verifyOf(gw, String(chain.chainId));
  t.is(verify.configured, 'auto');
  t.is(verify.mode, 'proof');
  t.regex(verify.reason, /self-check passed/);
  const reply = await gw.post(`/rpc/${chain.chainId}`, rpc('eth_getBalance', [chain.recipient, hex(chain.blocks.logs)]));
  t.is(reply.headers['x-verified-by'], 'proof');
});

test.serial('auto: a self-check whose proof fails keeps the chain on agreement, with the reason in /chains', async (t) => {
  const { gw, close } = await autoGateway([String(chain.chainId)], (call, result) => (call.method === 'eth_getProof' ? { ...(result as object), balance: '0x5' } : undefined));
  t.teardown(close);
  const verify = await verifyOf(gw, String(chain.chainId));
  t.is(verify.mode, 'agreement');
  t.regex(verify.reason, /self-check failed: value at balance/);
  const reply = await gw.post(`/rpc/${chain.chainId}`, rpc('eth_getBalance', [chain.recipient, hex(chain.blocks.logs)]));
  t.is(reply.headers['x-verified-by'], 'agreement');
});

// One test per row of the quirk table (lib/proof/quirks.ts): the methods it covers go by agreement under auto.
const at = () => hex(chain.blocks.logs);
const quirkCases: [string, string, () => [string, unknown[]]][] = [
  ['324', 'zkSync Era: nothing proven', () => ['eth_getBalance', [chain.recipient, at()]]],
  ['1101', 'Polygon zkEVM: nothing proven', () => ['eth_getBlockReceipts', [at()]]],
  ['728126428', 'TRON: nothing proven', () => ['eth_getBalance', [chain.recipient, at()]]],
  ['534352', 'Scroll: state by agreement', () => ['eth_getStorageAt', [chain.emitter, '0x1', at()]]],
  ['137', 'Polygon PoS: receipts by agreement', () => ['eth_getBlockReceipts', [at()]]],
  ['143', 'Monad: eth_getLogs by agreement', () => ['eth_getLogs', [filter()]]],
  ['25', 'Cronos: eth_getLogs by agreement', () => ['eth_getLogs', [filter()]]],
];
for (const [id, title, request] of quirkCases) {
  test.serial(`quirk ${id}, ${title}`, async (t) => {
    const { gw, close } = await autoGateway([id]);
    t.teardown(close);
    const [method, params] = request();
    const reply = await gw.post(`/rpc/${id}`, rpc(method, params));
    t.is(reply.status, 200);
    t.is(reply.headers['x-verified-by'], 'agreement');
    const verify = await verifyOf(gw, id);
    if (['324', '1101', '728126428'].includes(id)) {
      t.is(verify.mode, 'agreement');
      t.regex(verify.reason, new RegExp(`chain ${id}`));
    } else {
      // the rest of the chain is proven
      t.is(verify.mode, 'proof');
      const other = await gw.post(`/rpc/${id}`, rpc(id === '534352' ? 'eth_getBlockReceipts' : 'eth_getBalance', id === '534352' ? [at()] : [chain.recipient, at()]));
      t.is(other.headers['x-verified-by'], 'proof');
    }
  });
}

test.serial('eth_getLogs: a log added to the provider\'s answer, or one altered, is charged; the proven logs are served', async (t) => {
  const all = await chain.node.rpc<{ data: string; logIndex: string }[]>('eth_getLogs', [filter()]);
  for (const lie of ['added', 'altered'] as const) {
    const { gw, liar, close } = await liarFirst((call, result) => {
      if (call.method !== 'eth_getLogs') return undefined;
      const logs = result as { data: string }[];
      if (lie === 'added') return [...logs, { ...logs[0]!, data: '0x01' }];
      logs[1]!.data = '0xdead';
      return logs;
    });
    const reply = await gw.post(`/rpc/${chain.chainId}`, rpc('eth_getLogs', [filter()]));
    t.is(reply.status, 200, lie);
    t.deepEqual(reply.body.result.map((l: { data: string }) => l.data), all.map((l) => l.data), lie);
    t.is(reply.headers['x-forwarded-from'], liar.url, `${lie}: the receipts proved; the answer is built from them`);
    const metrics = await gw.request('GET', '/metrics');
    t.regex(metrics.text, /omnigate_proofs_total\{chain="31337",upstream="[^"]+",outcome="failed"\} 1/, lie);
    t.regex(metrics.text, /omnigate_proof_bytes_count\{chain="31337"\} 1/, lie);
    await close();
  }
});

test.serial('a full block with one transaction altered is caught by the transactions root: the honest block served', async (t) => {
  const at = hex(chain.blocks.deploy);
  const honestBlock = await chain.node.rpc<{ transactions: { value: string }[] }>('eth_getBlockByNumber', [at, true]);
  const { gw, liar, honest, close } = await liarFirst((call, result) => {
    if (call.method !== 'eth_getBlockByHash' || call.params[1] !== true) return undefined;
    const block = result as { transactions: { value: string }[] };
    block.transactions[1]!.value = '0x1';
    return block;
  });
  t.teardown(close);
  const reply = await gw.post(`/rpc/${chain.chainId}`, rpc('eth_getBlockByNumber', [at, true]));
  t.is(reply.status, 200);
  t.deepEqual(reply.body.result.transactions.map((x: { value: string }) => x.value), honestBlock.transactions.map((x) => x.value));
  t.is(reply.headers['x-verified-by'], 'proof');
  t.is(reply.headers['x-forwarded-from'], honest.url);
  t.is(liar.calls('eth_getBlockByHash'), 1);
});

test.serial('transactions by hash and by block and index: proven by the block\'s transactions root; a lie charged, never served', async (t) => {
  const block = await chain.node.rpc<{ hash: string; transactions: { hash: string; value: string }[] }>('eth_getBlockByNumber', [hex(chain.blocks.deploy), true]);
  const tx = block.transactions[1]!;
  const { gw, liar, honest, close } = await liarFirst((call, result) => {
    if (call.method === 'eth_getTransactionByHash') return { ...(result as object), value: '0x7' };
    if (call.method === 'eth_getBlockByHash' && call.params[1] === true) {
      const b = result as { transactions: { value: string }[] };
      b.transactions[1]!.value = '0x7';
      return b;
    }
    return undefined;
  });
  t.teardown(close);
  const byHash = await gw.post(`/rpc/${chain.chainId}`, rpc('eth_getTransactionByHash', [tx.hash]));
  t.is(byHash.status, 200);
  t.is(byHash.body.result.value, tx.value);
  t.is(byHash.headers['x-verified-by'], 'proof');
  t.is(byHash.headers['x-block-hash'], block.hash);
  t.is(byHash.headers['x-forwarded-from'], honest.url, 'the liar\'s block did not prove');
  const byIndex = await gw.post(`/rpc/${chain.chainId}`, rpc('eth_getTransactionByBlockNumberAndIndex', [hex(chain.blocks.deploy), '0x1']));
  t.is(byIndex.body.result.hash, tx.hash);
  t.is(byIndex.body.result.value, tx.value);
  t.is(byIndex.headers['x-forwarded-from'], honest.url);
  const past = await gw.post(`/rpc/${chain.chainId}`, rpc('eth_getTransactionByBlockNumberAndIndex', [hex(chain.blocks.deploy), '0x40']));
  t.is(past.body.result, null);
  t.is(past.headers['x-verified-by'], 'proof');
  t.true(liar.calls('eth_getBlockByHash') >= 2);
});
