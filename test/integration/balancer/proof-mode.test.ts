/**
 * Proof mode on the wire: an anvil chain (test/support/proof-chain.ts) behind providers that lie
 * (test/support/tamper-proxy.ts). At N=1 a lie in a storage slot, a proof of another block, a
 * header whose hash does not match its fields, a forged receipt, a dropped or added log is caught:
 * the honest provider's answer is served when there is one (call counts asserted), else a -32021
 * that says what failed, never the lie. A provider that numbers logs per transaction is told from
 * a liar; the quirk table decides by the agreed block (Scroll's state on each side of Euclid's
 * time), and the self-check decides each scope on its own (receipts that do not rebuild their root
 * keep receipts and logs on agreement, the rest proven).
 */
import test from 'ava';
import { keccak256, zeroPadValue } from 'ethers';
import type { LogFn, Logger } from '../../../lib/log.js';
import { anvilWallet, signTx } from '../../support/anvil.js';
import { rpc, startGateway, type Gateway } from '../../support/gateway.js';
import { EMITTER_TOPIC, proofChain, stopProofChains, type ProofChain } from '../../support/proof-chain.js';
import { startTamperProxy, type Tamper, type TamperProxy } from '../../support/tamper-proxy.js';

// Receipts as go-ethereum serves them (blobGasPrice on a blob transaction's only): anvil writes it
// on every receipt, a field no root holds, and such a receipt goes by agreement (tested below).
let chain: ProofChain;
test.before(async () => {
  chain = await proofChain('cancun', { receipts: 'geth' });
});
test.after.always(stopProofChains);

const hex = (n: number) => `0x${n.toString(16)}`;

/**
 * No hedging in these gateways (hedgeMs: 0) unless a test sets its own: they count which provider
 * gave what, and a loaded machine's stall past a hedge delay would add a hedged call (a proof's
 * material is hedged as any read).
 */
const noHedge = { timeouts: { hedgeMs: 0 } };

/** A gateway over a liar (asked first) and an honest provider, at N=1 in proof mode. */
async function liarFirst(tamper: Tamper, options: { honest?: boolean; verify?: string; confirmations?: number; timeouts?: Record<string, number>; logger?: Logger } = {}): Promise<{ gw: Gateway; liar: TamperProxy; honest: TamperProxy; close(): Promise<void> }> {
  const liar = await startTamperProxy(chain.node.url, tamper);
  const honest = await startTamperProxy(chain.node.url, options.honest === false ? tamper : undefined);
  const gw = await startGateway(
    { confirmations: options.confirmations ?? 1, timeouts: { hedgeMs: 0, ...options.timeouts }, chains: { [chain.chainId]: { rpcs: [liar.url, honest.url], strategy: 'priority', verify: options.verify ?? 'proof' } } },
    options.logger ? { logger: options.logger } : {},
  );
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
  t.is(honest.calls(), 0, JSON.stringify([...honest.methods]));
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

type Receipt = { transactionHash: string; status: string; from: string; logs: { transactionHash: string }[] };
/** A receipt labelled with another transaction's hash (its logs too): the receipts trie holds no hash, only the block's transactions bind it. */
const relabel = (r: Receipt, hash: string): Receipt => ({ ...r, transactionHash: hash, logs: r.logs.map((l) => ({ ...l, transactionHash: hash })) });

test.serial('a receipt labelled with the hash of another transaction of the block is caught by the block\'s transactions: the true receipt served', async (t) => {
  const at = hex(chain.blocks.logs);
  const block = await chain.node.rpc<{ transactions: string[] }>('eth_getBlockByNumber', [at, false]);
  const receipts = await chain.node.rpc<Receipt[]>('eth_getBlockReceipts', [at]);
  const [first, second] = block.transactions as [string, string];
  t.not(receipts[0]!.from, receipts[1]!.from, 'two senders: the receipts differ');
  // The liar swaps the labels of the first two receipts, in its receipt answer and its block receipts alike.
  const { gw, liar, honest, close } = await liarFirst((call, result) => {
    if (call.method === 'eth_getTransactionReceipt' && call.params[0] === first) return relabel(receipts[1]!, first);
    if (call.method === 'eth_getBlockReceipts') return (result as Receipt[]).map((r, i) => (i === 0 ? relabel(r, second) : i === 1 ? relabel(r, first) : r));
    return undefined;
  }, { confirmations: 2 });
  t.teardown(close);
  const reply = await gw.post(`/rpc/${chain.chainId}`, rpc('eth_getTransactionReceipt', [first]));
  t.is(reply.status, 200, reply.text);
  t.deepEqual(reply.body.result, receipts[0], 'the receipt of the transaction asked');
  t.is(reply.headers['x-verified-by'], 'proof');
  t.is(reply.headers['x-forwarded-from'], honest.url);
  t.true(liar.calls('eth_getBlockReceipts') >= 1);
  const all = await gw.post(`/rpc/${chain.chainId}`, rpc('eth_getBlockReceipts', [at]));
  t.is(all.status, 200, all.text);
  t.deepEqual(all.body.result, receipts);
  t.is(all.headers['x-forwarded-from'], honest.url);
});

test.serial('a receipt for a transaction never mined, made of a real receipt of an agreed block, is never served', async (t) => {
  const at = hex(chain.blocks.logs);
  const receipts = await chain.node.rpc<Receipt[]>('eth_getBlockReceipts', [at]);
  const never = `0x${'fe'.repeat(32)}`;
  const { gw, honest, close } = await liarFirst((call, result) => {
    if (call.method === 'eth_getTransactionReceipt' && call.params[0] === never) return relabel(receipts[1]!, never);
    if (call.method === 'eth_getBlockReceipts') return (result as Receipt[]).map((r, i) => (i === 1 ? relabel(r, never) : r));
    return undefined;
  }, { confirmations: 2 });
  t.teardown(close);
  const reply = await gw.post(`/rpc/${chain.chainId}`, rpc('eth_getTransactionReceipt', [never]));
  t.is(reply.status, 502, reply.text);
  t.is(reply.body.result, undefined);
  t.is(reply.body.error.code, -32021, 'the lie named, never served');
  t.is(reply.body.error.data.failures[0].field, 'receipts[1].transactionHash');
  t.is(honest.calls('eth_getTransactionReceipt'), 1, 'the honest provider was asked: it has no such receipt');
});

test.serial('a transaction and its receipt in a block a reorg dropped, which nodes still serve by hash, are never served: the chain\'s block at that number decides', async (t) => {
  const reorged = await proofChain('cancun', { chainId: 31339, receipts: 'geth' });
  const node = reorged.node;
  const at = hex(reorged.blocks.empty + 1);
  const [sender, other] = [anvilWallet(6), anvilWallet(7)];
  const raw = await signTx(sender, { chainId: reorged.chainId, nonce: 0, to: reorged.recipient, value: 7n, gasLimit: 21_000n });
  const txHash = keccak256(raw);
  const snapshot = await node.rpc<string>('evm_snapshot');
  await node.rpc('eth_sendRawTransaction', [raw]);
  await node.rpc('evm_mine', []);
  const orphan = {
    header: await node.rpc<{ hash: string }>('eth_getBlockByNumber', [at, false]),
    full: await node.rpc('eth_getBlockByNumber', [at, true]),
    receipts: await node.rpc('eth_getBlockReceipts', [at]),
    receipt: await node.rpc<{ blockHash: string }>('eth_getTransactionReceipt', [txHash]),
    tx: await node.rpc('eth_getTransactionByHash', [txHash]),
  };
  // The reorg: the same height again, another transaction first, the transaction second.
  await node.rpc('evm_revert', [snapshot]);
  await node.rpc('eth_sendRawTransaction', [await signTx(other, { chainId: reorged.chainId, nonce: 0, to: reorged.recipient, value: 1n, gasLimit: 21_000n })]);
  await node.rpc('evm_mine', []);
  await node.rpc('eth_sendRawTransaction', [raw]);
  await node.rpc('evm_mine', []);
  const receipt = await node.rpc<{ blockHash: string; blockNumber: string }>('eth_getTransactionReceipt', [txHash]);
  const tx = await node.rpc('eth_getTransactionByHash', [txHash]);
  t.not(receipt.blockHash, orphan.receipt.blockHash, 'included again, in another block');
  const dropped = orphan.header.hash.toLowerCase();
  // Every provider still serves the dropped block by hash (go-ethereum keeps it); the liar names it.
  const keeps = (call: { method: string; params: unknown[] }) => (call.method === 'eth_getBlockByHash' && String(call.params[0]).toLowerCase() === dropped ? (call.params[1] ? orphan.full : orphan.header) : undefined);
  const liar = await startTamperProxy(node.url, (call) => {
    if (call.params[0] === txHash) return call.method === 'eth_getTransactionReceipt' ? orphan.receipt : call.method === 'eth_getTransactionByHash' ? orphan.tx : undefined;
    if (call.method === 'eth_getBlockReceipts' && String(call.params[0]).toLowerCase() === dropped) return orphan.receipts;
    return keeps(call);
  });
  const honest = [await startTamperProxy(node.url, keeps), await startTamperProxy(node.url, keeps)];
  t.teardown(async () => { for (const p of [liar, ...honest]) await p.close(); });
  // A gateway per method: in one, the first request's calls measure the liar's latency, and on a
  // loaded machine it could rank measured-slow (select.ts) and not be asked first for the second.
  for (const [method, expected] of [['eth_getTransactionReceipt', receipt], ['eth_getTransactionByHash', tx]] as const) {
    const gw = await startGateway({ ...noHedge, confirmations: 2, refreshInterval: 3600, chains: { [reorged.chainId]: { rpcs: [liar.url, ...honest.map((h) => h.url)], strategy: 'priority', verify: 'proof' } } });
    t.teardown(() => gw.close());
    const reply = await gw.post(`/rpc/${reorged.chainId}`, rpc(method, [txHash]));
    t.is(reply.status, 200, `${method}: ${reply.text.slice(0, 300)}`);
    t.deepEqual(reply.body.result, expected, `${method}: where the chain holds it`);
    t.is(reply.headers['x-verified-by'], 'proof', method);
    t.is(reply.headers['x-forwarded-from'], honest[0]!.url, method);
    t.is(liar.calls(method), 1, `${method}: the liar asked first`);
    const shown = (await upstreamsOf(gw)).find((u) => u.url === liar.url)!;
    t.is(shown.proofsFailed, 1, `${method}: the liar charged for it`);
  }
});

test.serial('a final header agreed by its hash (a block a reorg dropped, asked for by hash) is never kept as the block at its number: later reads by number are proven against the chain\'s block', async (t) => {
  const reorged = await proofChain('cancun', { chainId: 31340, receipts: 'geth' });
  const node = reorged.node;
  const k = reorged.blocks.empty + 1;
  const fresh = '0x00000000000000000000000000000000000d0d00';
  const snapshot = await node.rpc<string>('evm_snapshot');
  await node.rpc('eth_sendRawTransaction', [await signTx(anvilWallet(6), { chainId: reorged.chainId, nonce: 0, to: fresh, value: 5n, gasLimit: 21_000n })]);
  await node.rpc('evm_mine', []);
  const dropped = { header: await node.rpc<{ hash: string }>('eth_getBlockByNumber', [hex(k), false]), full: await node.rpc('eth_getBlockByNumber', [hex(k), true]) };
  t.is(await node.rpc('eth_getBalance', [fresh, hex(k)]), '0x5');
  await node.rpc('evm_revert', [snapshot]);
  await node.rpc('evm_mine', []);
  const canonical = await node.rpc<{ hash: string }>('eth_getBlockByNumber', [hex(k), false]);
  t.not(canonical.hash, dropped.header.hash);
  // Every provider keeps the dropped block by hash (go-ethereum does), and calls block k final.
  const provider = () => startTamperProxy(node.url, (call) => {
    if (call.method === 'eth_getBlockByHash' && String(call.params[0]).toLowerCase() === dropped.header.hash.toLowerCase()) return call.params[1] ? dropped.full : dropped.header;
    if (call.method === 'eth_getBlockByNumber' && call.params[0] === 'finalized') return canonical;
    return undefined;
  });
  const list = [await provider(), await provider(), await provider()];
  const gw = await startGateway({ ...noHedge, confirmations: 2, refreshInterval: 3600, chains: { [reorged.chainId]: { rpcs: list.map((p) => p.url), strategy: 'priority', verify: 'proof' } } });
  t.teardown(async () => { await gw.close(); for (const p of list) await p.close(); });
  await gw.rpc.startHeadTracking().runOnce();
  const byHash = await gw.post(`/rpc/${reorged.chainId}`, rpc('eth_getBlockByHash', [dropped.header.hash, true]));
  t.is(byHash.body.result?.hash, dropped.header.hash, 'the block asked for by its hash');
  const balance = await gw.post(`/rpc/${reorged.chainId}`, rpc('eth_getBalance', [fresh, hex(k)]));
  t.is(balance.status, 200, balance.text);
  t.is(balance.body.result, '0x0', 'the balance at the chain\'s block k');
  t.is(balance.headers['x-block-hash'], canonical.hash);
  const block = await gw.post(`/rpc/${reorged.chainId}`, rpc('eth_getBlockByNumber', [hex(k), false]));
  t.is(block.body.result?.hash, canonical.hash, 'the chain\'s block k');
});

test.serial('eth_getLogs: logs whose receipt is labelled with another transaction\'s hash are caught by the block\'s transactions: each log served under its own transaction', async (t) => {
  const at = hex(chain.blocks.logs);
  const receipts = await chain.node.rpc<Receipt[]>('eth_getBlockReceipts', [at]);
  const block = await chain.node.rpc<{ transactions: string[] }>('eth_getBlockByNumber', [at, false]);
  const never = `0x${'fe'.repeat(32)}`;
  const withLogs = receipts.findIndex((r) => r.logs.length > 0);
  type Log = { transactionHash: string; blockNumber: string };
  const { gw, liar, close } = await liarFirst((call, result) => {
    if (call.method === 'eth_getBlockReceipts') return (result as Receipt[]).map((r, i) => (i === withLogs ? relabel(r, never) : r));
    if (call.method === 'eth_getLogs') return (result as Log[]).map((l) => (l.blockNumber === at && l.transactionHash === block.transactions[withLogs] ? { ...l, transactionHash: never } : l));
    return undefined;
  }, { confirmations: 2 });
  t.teardown(close);
  const range = { address: chain.emitter, topics: [EMITTER_TOPIC], fromBlock: at, toBlock: at };
  const reply = await gw.post(`/rpc/${chain.chainId}`, rpc('eth_getLogs', [range]));
  t.is(reply.status, 200, reply.text);
  t.is(reply.headers['x-verified-by'], 'proof');
  const logs = reply.body.result as Log[];
  t.true(logs.length > 0);
  t.false(logs.some((l) => l.transactionHash === never), 'no log under a hash never mined');
  t.deepEqual(logs, await chain.node.rpc('eth_getLogs', [range]));
  // (Its material proves once the hashes are the transactions': the proven logs are served; its own answer, relabelled, is charged.)
  const chains = await gw.request('GET', '/chains');
  const upstreams = (chains.body.chains?.[0]?.upstreams ?? chains.body[0].upstreams) as { url: string; proofsFailed: number }[];
  t.is(upstreams.find((u) => u.url === liar.url)?.proofsFailed, 1);
});

test.serial('a transaction\'s or receipt\'s sender altered is caught by its signature: the true sender served, by hash, by index, in a full block and in receipts', async (t) => {
  const at = hex(chain.blocks.logs);
  const block = await chain.node.rpc<{ transactions: string[] }>('eth_getBlockByNumber', [at, false]);
  const tx = block.transactions[0]!;
  const evil = `0x${'ee'.repeat(20)}`;
  const forge = (v: unknown) => (v !== null && typeof v === 'object' && 'from' in v ? { ...v, from: evil } : v);
  const { gw, liar, honest, close } = await liarFirst((call, result) => {
    if (call.method === 'eth_getTransactionByHash' || call.method === 'eth_getTransactionReceipt') return forge(result);
    if (call.method === 'eth_getBlockReceipts') return (result as unknown[]).map(forge);
    if (call.method === 'eth_getBlockByHash' && call.params[1] === true) return { ...(result as object), transactions: (result as { transactions: unknown[] }).transactions.map(forge) };
    return undefined;
  }, { confirmations: 2 });
  t.teardown(close);
  const sender = (await chain.node.rpc<{ from: string }>('eth_getTransactionByHash', [tx])).from;
  t.not(sender, evil);
  const asked: [string, unknown[], (r: any) => string][] = [
    ['eth_getTransactionByHash', [tx], (r) => r.from],
    ['eth_getTransactionByBlockNumberAndIndex', [at, '0x0'], (r) => r.from],
    ['eth_getTransactionReceipt', [tx], (r) => r.from],
    ['eth_getBlockByNumber', [at, true], (r) => r.transactions[0].from],
    ['eth_getBlockReceipts', [at], (r) => r[0].from],
  ];
  // A gateway per method (the first liarFirst's): in one, the earlier requests' calls measure the
  // liar's latency, and on a loaded machine it could rank measured-slow (select.ts) and not be asked first.
  for (const [i, [method, params, fromOf]] of asked.entries()) {
    const g = i === 0 ? gw : await startGateway({ ...noHedge, confirmations: 2, chains: { [chain.chainId]: { rpcs: [liar.url, honest.url], strategy: 'priority', verify: 'proof' } } });
    if (g !== gw) t.teardown(() => g.close());
    const reply = await g.post(`/rpc/${chain.chainId}`, rpc(method, params));
    t.is(reply.status, 200, `${method}: ${reply.text.slice(0, 300)}`);
    t.is(reply.headers['x-verified-by'], 'proof', method);
    t.is(fromOf(reply.body.result), sender, method);
    t.is(reply.headers['x-forwarded-from'], honest.url, method);
    const shown = (await upstreamsOf(g)).find((u) => u.url === liar.url)!;
    t.is(shown.proofsFailed, 1, `${method}: the liar charged for it`);
  }
});

test.serial('a full block\'s fields beyond its header and transactions (size, uncles) altered by the provider proving it are never served: the block goes by agreement', async (t) => {
  const at = hex(chain.blocks.logs);
  const liar = await startTamperProxy(chain.node.url, (call, result) =>
    call.method === 'eth_getBlockByHash' && call.params[1] === true ? { ...(result as object), size: '0x1', uncles: [`0x${'ab'.repeat(32)}`] } : undefined,
  );
  const honest = [await startTamperProxy(chain.node.url), await startTamperProxy(chain.node.url)];
  const gw = await startGateway({ ...noHedge, confirmations: 2, chains: { [chain.chainId]: { rpcs: [liar.url, ...honest.map((h) => h.url)], strategy: 'priority', verify: 'proof' } } });
  t.teardown(async () => {
    await gw.close();
    for (const p of [liar, ...honest]) await p.close();
  });
  const reply = await gw.post(`/rpc/${chain.chainId}`, rpc('eth_getBlockByNumber', [at, true]));
  t.is(reply.status, 200, reply.text.slice(0, 300));
  t.is(reply.headers['x-confirmable'], 'true');
  t.deepEqual(reply.body.result, await chain.node.rpc('eth_getBlockByNumber', [at, true]));
  t.is(reply.headers['x-verified-by'], 'agreement', 'its size and uncles vouched for by N, not by the one that proved the rest');
});

test.serial('eth_getProof: storage proofs reordered, one added, or a field beside the proof, from a prover whose every proof holds, are never served', async (t) => {
  const at = hex(chain.blocks.logs);
  const [one, zero, two] = ['0x01', '0x00', '0x02'].map((k) => zeroPadValue(k, 32));
  const params = [chain.emitter, [one, zero], at];
  const expected = await chain.node.rpc<{ storageProof: { key: string; value: string }[] }>('eth_getProof', params);
  const third = (await chain.node.rpc<{ storageProof: unknown[] }>('eth_getProof', [chain.emitter, [two], at])).storageProof[0];
  type Proof = { storageProof: unknown[] };
  const cases: [string, (p: Proof) => unknown, 'proof' | 'agreement'][] = [
    ['reordered', (p) => ({ ...p, storageProof: [...p.storageProof].reverse() }), 'proof'],
    ['a slot not asked added', (p) => ({ ...p, storageProof: [...p.storageProof, third] }), 'proof'],
    ['a field beside the proof', (p) => ({ ...p, storageProof: p.storageProof.map((e) => ({ ...(e as object), note: 'x' })) }), 'agreement'],
  ];
  for (const [name, tamper, by] of cases) {
    const { gw, liar, honest, close } = await liarFirst((call, result) => (call.method === 'eth_getProof' ? tamper(result as Proof) : undefined), { confirmations: 2 });
    const reply = await gw.post(`/rpc/${chain.chainId}`, rpc('eth_getProof', params));
    await close();
    t.false(reply.text.includes('"note"'), `${name}: never the prover's field`);
    if (by === 'proof') {
      t.is(reply.status, 200, `${name}: ${reply.text.slice(0, 300)}`);
      t.deepEqual(reply.body.result, expected, `${name}: one proof per key asked, in the order asked`);
      t.is(reply.headers['x-verified-by'], 'proof', name);
      t.is(reply.headers['x-forwarded-from'], honest.url, `${name}: the honest provider's proof`);
    } else {
      // by agreement, where the liar's extra field is a disagreement (an eth_getProof result is compared whole)
      t.is(reply.status, 502, `${name}: ${reply.text.slice(0, 300)}`);
      t.is(reply.body.error.code, -32010);
      t.is(liar.calls('eth_getProof'), 2, `${name}: asked for its proof, then by agreement`);
    }
  }
});

test.serial('a client\'s parameter the proof cannot read (a slot without 0x or beyond 32 bytes, a short address, a malformed topic) goes by agreement, answered as the nodes answer it: no provider charged', async (t) => {
  const at = hex(chain.blocks.logs);
  const { gw, close } = await liarFirst(() => undefined, { confirmations: 2 });
  t.teardown(close);
  const requests: [string, unknown[]][] = [
    ['eth_getStorageAt', [chain.emitter, '1', at]],
    ['eth_getStorageAt', [chain.emitter, `0x${'0'.repeat(64)}1`, at]],
    ['eth_getStorageAt', [chain.emitter, 'latest', at]],
    ['eth_getBalance', [chain.recipient.slice(0, 40), at]],
    ['eth_getProof', [chain.emitter, ['0x1', '1'], at]],
    ['eth_getLogs', [{ ...filter(), topics: ['0x1234'] }]],
    ['eth_getLogs', [{ ...filter(), topics: [null, null, null, null, EMITTER_TOPIC] }]],
  ];
  for (const [method, params] of requests) {
    const reply = await gw.post(`/rpc/${chain.chainId}`, rpc(method, params));
    const direct = await chain.node.request(method, params);
    t.is(reply.headers['x-verified-by'], 'agreement', `${method} ${JSON.stringify(params).slice(0, 120)}: ${reply.text.slice(0, 200)}`);
    t.deepEqual(reply.body.result ?? reply.body.error, direct.result ?? direct.error, `${method}: as the node answers`);
  }
  t.deepEqual((await upstreamsOf(gw)).map((u) => u.proofsFailed), [0, 0], 'no provider charged for the client\'s parameter');
});

test.serial('a receipt\'s contractAddress, effectiveGasPrice or gasUsed altered by the provider proving it is never served', async (t) => {
  const at = hex(chain.blocks.deploy);
  const receipts = await chain.node.rpc<(Receipt & { contractAddress: string | null; transactionHash: string })[]>('eth_getBlockReceipts', [at]);
  const created = receipts.findIndex((r) => r.contractAddress !== null);
  t.true(created >= 0, 'the block deploys a contract');
  const alterations: [string, (r: Record<string, unknown>) => Record<string, unknown>][] = [
    ['contractAddress', (r) => ({ ...r, contractAddress: `0x${'cc'.repeat(20)}` })],
    ['effectiveGasPrice', (r) => ({ ...r, effectiveGasPrice: '0x1' })],
    ['gasUsed', (r) => ({ ...r, gasUsed: '0x1' })],
  ];
  for (const [name, alter] of alterations) {
    const forge = (r: unknown) => ((r as { transactionHash?: string } | null)?.transactionHash === receipts[created]!.transactionHash ? alter(r as Record<string, unknown>) : r);
    const liar = await startTamperProxy(chain.node.url, (call, result) =>
      call.method === 'eth_getTransactionReceipt' ? forge(result) : call.method === 'eth_getBlockReceipts' ? (result as unknown[]).map(forge) : undefined,
    );
    const honest = [await startTamperProxy(chain.node.url), await startTamperProxy(chain.node.url)];
    const gw = await startGateway({ ...noHedge, confirmations: 2, chains: { [chain.chainId]: { rpcs: [liar.url, ...honest.map((h) => h.url)], strategy: 'priority', verify: 'proof' } } });
    const one = await gw.post(`/rpc/${chain.chainId}`, rpc('eth_getTransactionReceipt', [receipts[created]!.transactionHash]));
    const all = await gw.post(`/rpc/${chain.chainId}`, rpc('eth_getBlockReceipts', [at]));
    await gw.close();
    for (const p of [liar, ...honest]) await p.close();
    t.is(one.status, 200, `${name}: ${one.text.slice(0, 300)}`);
    t.deepEqual(one.body.result, receipts[created], name);
    t.is(all.status, 200, `${name}: ${all.text.slice(0, 300)}`);
    t.deepEqual(all.body.result, receipts, name);
  }
});

test.serial('a receipt\'s fields in no root and not decided by the block (blobGasPrice, an L2\'s l1Fee, any other) are never the prover\'s word: such a receipt goes by agreement, a lie never served', async (t) => {
  // Anvil as it is: the block's blob base fee in every receipt (go-ethereum: a blob transaction's only).
  const raw = await proofChain('cancun', { chainId: 31338 });
  const at = hex(raw.blocks.logs);
  const receipts = await raw.node.rpc<(Receipt & { transactionHash: string; blobGasPrice?: string })[]>('eth_getBlockReceipts', [at]);
  const target = receipts.find((r) => r.logs.length > 0)!;
  t.is(target.blobGasPrice, '0x1', 'anvil writes it');
  const alterations: [string, Record<string, unknown>][] = [
    ['blobGasPrice', { blobGasPrice: '0x77359400' }],
    ['l1Fee', { l1Fee: '0x1234' }],
    ['a log\'s extra field', { logs: target.logs.map((l) => ({ ...l, l1BlockNumber: '0x5' })) }],
  ];
  for (const [name, change] of alterations) {
    const forge = (r: unknown) => ((r as { transactionHash?: string } | null)?.transactionHash === target.transactionHash ? { ...(r as object), ...change } : r);
    const liar = await startTamperProxy(raw.node.url, (call, result) =>
      call.method === 'eth_getTransactionReceipt' ? forge(result) : call.method === 'eth_getBlockReceipts' ? (result as unknown[]).map(forge) : undefined,
    );
    const honest = [await startTamperProxy(raw.node.url), await startTamperProxy(raw.node.url)];
    const gw = await startGateway({ ...noHedge, confirmations: 2, chains: { [raw.chainId]: { rpcs: [liar.url, ...honest.map((h) => h.url)], strategy: 'priority', verify: 'proof' } } });
    const one = await gw.post(`/rpc/${raw.chainId}`, rpc('eth_getTransactionReceipt', [target.transactionHash]));
    const all = await gw.post(`/rpc/${raw.chainId}`, rpc('eth_getBlockReceipts', [at]));
    await gw.close();
    for (const p of [liar, ...honest]) await p.close();
    for (const [what, reply, expected] of [['receipt', one, target], ['block receipts', all, receipts]] as const) {
      t.is(reply.status, 200, `${name}, ${what}: ${reply.text.slice(0, 300)}`);
      t.is(reply.headers['x-confirmable'], 'true');
      t.is(reply.headers['x-verified-by'], 'agreement', `${name}, ${what}: not proven`);
      t.deepEqual(reply.body.result, expected, `${name}, ${what}: the honest value`);
      // (a field outside the execution-apis schema is not compared: the liar may vote, its field is left out)
      if (name === 'blobGasPrice') t.false((reply.headers['x-checked-urls'] as string).includes(liar.url), `${name}, ${what}: the liar not among the quorum`);
    }
  }
});

test.serial('a transaction\'s fields outside its encoding (a legacy one\'s chainId or yParity, a 2930 one\'s v beside its yParity, an L2\'s extra) made up by the prover are never served: the answer goes by agreement', async (t) => {
  const at = hex(chain.blocks.deploy);
  const block = await chain.node.rpc<{ transactions: Record<string, string>[] }>('eth_getBlockByNumber', [at, true]);
  const legacy = block.transactions.find((tx) => tx.type === '0x0')!;
  const accessList = block.transactions.find((tx) => tx.type === '0x1')!;
  t.truthy(legacy.chainId, 'an EIP-155 transaction, its chainId served');
  const cases: [string, Record<string, string>, Record<string, string>][] = [
    ['a legacy chainId', legacy, { chainId: '0x99' }],
    ['a legacy yParity', legacy, { yParity: Number(legacy.v) % 2 === 1 ? '0x1' : '0x0' }],
    ['a 2930 v', accessList, { v: accessList.yParity === '0x0' ? '0x1' : '0x0' }],
    ['an extra', legacy, { l1BlockNumber: '0x5' }],
  ];
  for (const [name, target, change] of cases) {
    const forge = (tx: unknown) => ((tx as { hash?: string } | null)?.hash === target.hash ? { ...(tx as object), ...change } : tx);
    const liar = await startTamperProxy(chain.node.url, (call, result) => {
      if (call.method === 'eth_getTransactionByHash') return forge(result);
      if (call.method.startsWith('eth_getBlockBy') && call.params[1] === true) return { ...(result as object), transactions: (result as { transactions: unknown[] }).transactions.map(forge) };
      return undefined;
    });
    const honest = [await startTamperProxy(chain.node.url), await startTamperProxy(chain.node.url)];
    const gw = await startGateway({ ...noHedge, confirmations: 2, chains: { [chain.chainId]: { rpcs: [liar.url, ...honest.map((h) => h.url)], strategy: 'priority', verify: 'proof' } } });
    const one = await gw.post(`/rpc/${chain.chainId}`, rpc('eth_getTransactionByHash', [target.hash]));
    const full = await gw.post(`/rpc/${chain.chainId}`, rpc('eth_getBlockByNumber', [at, true]));
    await gw.close();
    for (const p of [liar, ...honest]) await p.close();
    const [key, lie] = Object.entries(change)[0]!;
    for (const [what, reply, served] of [['by hash', one, one.body.result], ['in the block', full, full.body.result?.transactions?.find((tx: { hash: string }) => tx.hash === target.hash)]] as const) {
      t.is(reply.status, 200, `${name}, ${what}: ${reply.text.slice(0, 300)}`);
      t.is(reply.headers['x-verified-by'], 'agreement', `${name}, ${what}: not proven`);
      t.truthy(served, `${name}, ${what}`);
      t.not(served[key], lie, `${name}, ${what}: the prover's ${key} never served`);
    }
  }
});

test.serial('fields outside every root that the block decides (a transaction\'s gasPrice, a receipt log\'s blockTimestamp and logIndex) altered by the prover are never served', async (t) => {
  const at = hex(chain.blocks.logs);
  const block = await chain.node.rpc<{ transactions: { hash: string; type: string }[] }>('eth_getBlockByNumber', [at, true]);
  const dynamic = block.transactions.find((tx) => tx.type === '0x2')!.hash;
  const withLogs = (await chain.node.rpc<Receipt[]>('eth_getBlockReceipts', [at])).find((r) => r.logs.length > 0)!.transactionHash;
  const alter = (v: unknown, hash: string, change: (o: Record<string, unknown>) => Record<string, unknown>) => ((v as { hash?: string; transactionHash?: string } | null)?.hash === hash || (v as { transactionHash?: string } | null)?.transactionHash === hash ? change(v as Record<string, unknown>) : v);
  const cases: [string, string, unknown[], (call: { method: string; params: unknown[] }, result: unknown) => unknown][] = [
    ['gasPrice', 'eth_getTransactionByHash', [dynamic], (call, result) => {
      const change = (o: Record<string, unknown>) => ({ ...o, gasPrice: '0x1' });
      if (call.method === 'eth_getTransactionByHash') return alter(result, dynamic, change);
      if (call.method === 'eth_getBlockByHash' && call.params[1] === true) return { ...(result as object), transactions: (result as { transactions: unknown[] }).transactions.map((tx) => alter(tx, dynamic, change)) };
      return undefined;
    }],
    ['a log\'s blockTimestamp', 'eth_getTransactionReceipt', [withLogs], (call, result) => {
      const change = (o: Record<string, unknown>) => ({ ...o, logs: (o.logs as Record<string, unknown>[]).map((l) => ({ ...l, blockTimestamp: '0x1' })) });
      if (call.method === 'eth_getTransactionReceipt') return alter(result, withLogs, change);
      if (call.method === 'eth_getBlockReceipts') return (result as unknown[]).map((r) => alter(r, withLogs, change));
      return undefined;
    }],
    ['a log\'s logIndex', 'eth_getBlockReceipts', [at], (call, result) => {
      const change = (o: Record<string, unknown>) => ({ ...o, logs: (o.logs as Record<string, unknown>[]).map((l) => ({ ...l, logIndex: '0x63' })) });
      if (call.method === 'eth_getBlockReceipts') return (result as unknown[]).map((r) => alter(r, withLogs, change));
      return undefined;
    }],
  ];
  for (const [name, method, params, tamper] of cases) {
    const liar = await startTamperProxy(chain.node.url, tamper);
    const honest = [await startTamperProxy(chain.node.url), await startTamperProxy(chain.node.url)];
    const gw = await startGateway({ ...noHedge, confirmations: 2, chains: { [chain.chainId]: { rpcs: [liar.url, ...honest.map((h) => h.url)], strategy: 'priority', verify: 'proof' } } });
    const reply = await gw.post(`/rpc/${chain.chainId}`, rpc(method, params));
    await gw.close();
    for (const p of [liar, ...honest]) await p.close();
    t.is(reply.status, 200, `${name}: ${reply.text.slice(0, 300)}`);
    t.deepEqual(reply.body.result, await chain.node.rpc(method, params), name);
  }
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

test.serial('a provider stalled on its material is hedged as an ordinary read would be: after the hedge delay the next provider proves the answer', async (t) => {
  // The request's deadline is far beyond the hedge delay (1 s): without a hedge the stalled
  // provider would hold the request to its -32012.
  const { gw, liar, honest, close } = await liarFirst(() => undefined, { timeouts: { hedgeMs: 1000, upstreamMs: 30_000, requestMs: 30_000 } });
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  t.teardown(async () => {
    release();
    await close();
  });
  const order: string[] = [];
  liar.hold = (call) => {
    order.push(`liar ${call.method}`);
    return call.method === 'eth_getProof' ? released : undefined;
  };
  honest.hold = (call) => {
    order.push(`honest ${call.method}`);
    return undefined;
  };
  const at = hex(chain.blocks.logs);
  const reply = await gw.post(`/rpc/${chain.chainId}`, rpc('eth_getBalance', [chain.recipient, at]));
  t.is(reply.status, 200, JSON.stringify(reply.body));
  t.is(reply.body.result, await chain.node.rpc<string>('eth_getBalance', [chain.recipient, at]));
  t.is(reply.headers['x-verified-by'], 'proof');
  t.is(reply.headers['x-forwarded-from'], honest.url);
  // the header first from the liar (asked first; a loaded machine's stall may hedge it too), then
  // the material from the liar, and only then, the hedge, from the honest provider
  t.is(order[0], 'liar eth_getBlockByNumber');
  t.deepEqual(order.filter((c) => c.endsWith('eth_getProof')), ['liar eth_getProof', 'honest eth_getProof']);
  // the stalled provider is neither charged nor failed for a call the hedge cut short
  const chains = await gw.request('GET', '/chains');
  const ups = chains.body.chains?.[0]?.upstreams ?? chains.body[0].upstreams;
  t.is(ups.find((u: { url: string }) => u.url === liar.url).proofsFailed, 0);
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
  const gw = await startGateway({ ...noHedge, confirmations: 1, chains: Object.fromEntries(ids.map((id) => [id, { rpcs: [proxy.url] }])) });
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

test.serial('auto: a self-check whose header does not hash to its fields keeps the whole chain on agreement, with the reason in /chains', async (t) => {
  const { gw, close } = await autoGateway([String(chain.chainId)], (call, result) => (call.method === 'eth_getBlockByNumber' ? { ...(result as object), stateRoot: `0x${'11'.repeat(32)}` } : undefined));
  t.teardown(close);
  const verify = await verifyOf(gw, String(chain.chainId));
  t.is(verify.mode, 'agreement');
  t.regex(verify.reason, /self-check failed: header-hash at /);
  const reply = await gw.post(`/rpc/${chain.chainId}`, rpc('eth_getBlockReceipts', [hex(chain.blocks.logs)]));
  t.is(reply.headers['x-verified-by'], 'agreement');
});

test.serial('auto: a self-check whose account proof fails keeps state reads on agreement; receipts are proven', async (t) => {
  const { gw, close } = await autoGateway([String(chain.chainId)], (call, result) => (call.method === 'eth_getProof' ? { ...(result as object), balance: '0x5' } : undefined));
  t.teardown(close);
  const verify = (await verifyOf(gw, String(chain.chainId))) as unknown as { mode: string; reason: string; scopes: { scope: string; mode: string; reason: string }[] };
  t.is(verify.mode, 'proof');
  t.regex(verify.reason, /by agreement: state reads \(value at balance/);
  t.regex(verify.scopes.find((s) => s.scope === 'state')!.reason, /account proof failed: state reads by agreement: value at balance/);
  const reply = await gw.post(`/rpc/${chain.chainId}`, rpc('eth_getBalance', [chain.recipient, hex(chain.blocks.logs)]));
  t.is(reply.headers['x-verified-by'], 'agreement');
  const receipts = await gw.post(`/rpc/${chain.chainId}`, rpc('eth_getBlockReceipts', [hex(chain.blocks.logs)]));
  t.is(receipts.headers['x-verified-by'], 'proof');
});

// One test per row of the quirk table (lib/proof/quirks.ts): the methods it covers go by agreement under auto
// (anvil's blocks are below every cut-off: block numbers from 0, times from 2023; each side of
// every cut-off is in test/unit/lib/prove/prove.test.ts, both sides of one on the wire below).
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
      if (id === '137') {
        // a receipt asked by hash: decided on its block's agreed header, under the cut-off
        const block = await chain.node.rpc<{ transactions: string[] }>('eth_getBlockByNumber', [at(), false]);
        const receipt = await gw.post(`/rpc/${id}`, rpc('eth_getTransactionReceipt', [block.transactions[0]]));
        t.is(receipt.status, 200);
        t.is(receipt.headers['x-verified-by'], 'agreement');
        t.is(receipt.body.result.transactionHash, block.transactions[0]);
      }
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

const upstreamsOf = async (gw: Gateway) => {
  const chains = await gw.request('GET', '/chains');
  return (chains.body.chains?.[0]?.upstreams ?? chains.body[0].upstreams) as { url: string; proofsFailed: number; proofsChecked: number; logIndexPerTx: number }[];
};

/** The answer's logs numbered per transaction (0 at each transaction's first log), as some providers serve them. */
function numberedPerTx(result: unknown): unknown {
  let tx = '';
  let i = 0;
  return (result as { transactionHash: string; logIndex: string }[]).map((l) => {
    if (l.transactionHash !== tx) [tx, i] = [l.transactionHash, 0];
    return { ...l, logIndex: `0x${(i++).toString(16)}` };
  });
}

test.serial('eth_getLogs from a provider that numbers logs per transaction: not charged, the proven (per block) numbering served, counted, logged once (not when its config says so)', async (t) => {
  const all = await chain.node.rpc<{ logIndex: string; transactionIndex: string }[]>('eth_getLogs', [filter()]);
  // three logs, one in each of transactions 0, 1 and 3 of the block: per block 0x0, 0x1, 0x2; per transaction 0x0 each
  t.deepEqual(all.map((l) => l.logIndex), ['0x0', '0x1', '0x2']);
  const lines: string[] = [];
  const log = ((obj: unknown, msg?: string) => lines.push(JSON.stringify({ obj, msg }))) as LogFn;
  const logger: Logger = { debug: log, info: log, warn: log, error: log, child: () => logger };
  const { gw, liar, honest, close } = await liarFirst((call, result) => (call.method === 'eth_getLogs' ? numberedPerTx(result) : undefined), { logger });
  t.teardown(close);
  for (let round = 1; round <= 2; round += 1) {
    const reply = await gw.post(`/rpc/${chain.chainId}`, rpc('eth_getLogs', [filter()]));
    t.is(reply.status, 200);
    t.is(reply.headers['x-verified-by'], 'proof');
    t.is(reply.headers['x-forwarded-from'], liar.url, 'its receipts proved: its answer built from them');
    t.deepEqual(reply.body.result.map((l: { logIndex: string }) => l.logIndex), ['0x0', '0x1', '0x2']);
  }
  t.is(liar.calls('eth_getLogs'), 2);
  t.is(honest.calls(), 0);
  const ups = await upstreamsOf(gw);
  const shown = ups.find((u) => u.url === liar.url)!;
  t.is(shown.proofsFailed, 0, 'not charged');
  t.is(shown.proofsChecked, 2);
  t.is(shown.logIndexPerTx, 2);
  const metrics = await gw.request('GET', '/metrics');
  t.regex(metrics.text, /omnigate_log_index_per_tx_total\{chain="31337",upstream="[^"]+"\} 2/);
  t.notRegex(metrics.text, /omnigate_proofs_total\{[^}]*outcome="failed"\}/);
  t.is(lines.filter((l) => l.includes('numbers eth_getLogs logIndex per transaction')).length, 1, 'logged once per upstream');
  // configured as numbering per transaction (rpcs[i].logIndex): the same, shown in /chains, not logged
  const known: string[] = [];
  const knownLog = ((obj: unknown, msg?: string) => known.push(JSON.stringify({ obj, msg }))) as LogFn;
  const knownLogger: Logger = { debug: knownLog, info: knownLog, warn: knownLog, error: knownLog, child: () => knownLogger };
  const gw2 = await startGateway({ ...noHedge, confirmations: 1, chains: { [chain.chainId]: { rpcs: [{ url: liar.url, logIndex: 'per-transaction' }, honest.url], strategy: 'priority', verify: 'proof' } } }, { logger: knownLogger });
  t.teardown(() => gw2.close());
  const again = await gw2.post(`/rpc/${chain.chainId}`, rpc('eth_getLogs', [filter()]));
  t.deepEqual(again.body.result.map((l: { logIndex: string }) => l.logIndex), ['0x0', '0x1', '0x2']);
  const listed = (await upstreamsOf(gw2)).find((u) => u.url === liar.url)! as unknown as { logIndex: string; logIndexPerTx: number; proofsFailed: number };
  t.deepEqual([listed.logIndex, listed.logIndexPerTx, listed.proofsFailed], ['per-transaction', 1, 0]);
  t.is(known.filter((l) => l.includes('numbers eth_getLogs logIndex per transaction')).length, 0, 'known from the config: not logged');
});

test.serial('eth_getLogs numbered per transaction with a log dropped (or altered) is still a lie: charged', async (t) => {
  for (const lie of ['dropped', 'altered'] as const) {
    const { gw, liar, close } = await liarFirst((call, result) => {
      if (call.method !== 'eth_getLogs') return undefined;
      const logs = numberedPerTx(result) as { data: string }[];
      if (lie === 'dropped') return logs.slice(1);
      logs[2]!.data = '0xdead';
      return logs;
    });
    const reply = await gw.post(`/rpc/${chain.chainId}`, rpc('eth_getLogs', [filter()]));
    t.is(reply.status, 200, lie);
    t.deepEqual(reply.body.result.map((l: { logIndex: string }) => l.logIndex), ['0x0', '0x1', '0x2'], lie);
    const shown = (await upstreamsOf(gw)).find((u) => u.url === liar.url)!;
    t.is(shown.proofsFailed, 1, `${lie}: charged`);
    t.is(shown.logIndexPerTx, 0, lie);
    await close();
  }
});

test.serial('Scroll: state by agreement on blocks before Euclid\'s time, proven from it on (the agreed header\'s timestamp decides)', async (t) => {
  // Euclid phase 1 on Scroll mainnet: 1744815600. Blocks 1 and 2 at 18 s and 6 s before it, block 3 at 6 s after.
  const euclid = 1_744_815_600;
  const scroll = await proofChain('cancun', { chainId: 534352, timestamp: euclid - 30, receipts: 'geth' });
  const proxy = await startTamperProxy(scroll.node.url);
  const gw = await startGateway({ ...noHedge, confirmations: 1, chains: { 534352: { rpcs: [proxy.url] } } });
  t.teardown(async () => { await gw.close(); await proxy.close(); });
  await gw.rpc.startProofChecks().done;
  const verify = (await verifyOf(gw, '534352')) as unknown as { mode: string; scopes: { scope: string; mode: string; provenFrom: string | null; reason: string }[] };
  t.is(verify.mode, 'proof', 'the self-check ran at the head, past Euclid');
  const state = verify.scopes.find((s) => s.scope === 'state')!;
  t.is(state.mode, 'proof');
  t.is(state.provenFrom, 'time 1744815600 (2025-04-16T15:00:00Z)');
  t.regex(state.reason, /Scroll \(chain 534352\)/);
  const times = await Promise.all([scroll.blocks.logs, scroll.blocks.empty].map(async (n) => Number((await scroll.node.rpc<{ timestamp: string }>('eth_getBlockByNumber', [hex(n), false])).timestamp)));
  t.deepEqual(times, [euclid - 6, euclid + 6]);
  const proofsBefore = proxy.calls('eth_getProof');
  const before = await gw.post('/rpc/534352', rpc('eth_getBalance', [scroll.recipient, hex(scroll.blocks.logs)]));
  t.is(before.status, 200);
  t.is(before.body.result, await scroll.node.rpc<string>('eth_getBalance', [scroll.recipient, hex(scroll.blocks.logs)]));
  t.is(before.headers['x-verified-by'], 'agreement');
  t.is(proxy.calls('eth_getProof'), proofsBefore, 'no proof asked before Euclid');
  const after = await gw.post('/rpc/534352', rpc('eth_getBalance', [scroll.recipient, hex(scroll.blocks.empty)]));
  t.is(after.status, 200);
  t.is(after.body.result, await scroll.node.rpc<string>('eth_getBalance', [scroll.recipient, hex(scroll.blocks.empty)]));
  t.is(after.headers['x-verified-by'], 'proof');
  t.is(proxy.calls('eth_getProof'), proofsBefore + 1);
  // by hash: the agreed header's timestamp decides too
  const hashBefore = (await scroll.node.rpc<{ hash: string }>('eth_getBlockByNumber', [hex(scroll.blocks.deploy), false])).hash;
  const byHash = await gw.post('/rpc/534352', rpc('eth_getStorageAt', [scroll.emitter, '0x0', { blockHash: hashBefore }]));
  t.is(byHash.headers['x-verified-by'], 'agreement');
  // receipts are not under Scroll's quirk: proven on both sides
  const receipts = await gw.post('/rpc/534352', rpc('eth_getBlockReceipts', [hex(scroll.blocks.logs)]));
  t.is(receipts.headers['x-verified-by'], 'proof');
});

test.serial('auto: receipts that do not rebuild their root at the self-check (a receipt type of Arbitrum\'s own) keep receipts and logs on agreement; state and transactions proven', async (t) => {
  const arb = await proofChain('cancun', { chainId: 42161 });
  // a head block with a transaction, for the self-check to read its receipt
  await arb.node.rpc('eth_sendTransaction', [{ from: arb.senders[0], to: arb.recipient, value: '0x5' }]);
  await arb.node.rpc('evm_mine', []);
  const retyped = (r: { type: string }) => ({ ...r, type: '0x6a' });
  const proxy = await startTamperProxy(arb.node.url, (call, result) => {
    if (call.method === 'eth_getBlockReceipts') return (result as { type: string }[]).map(retyped);
    return undefined;
  });
  const gw = await startGateway({ ...noHedge, confirmations: 1, chains: { 42161: { rpcs: [proxy.url] } } });
  t.teardown(async () => { await gw.close(); await proxy.close(); });
  await gw.rpc.startProofChecks().done;
  t.is(proxy.calls('eth_getBlockReceipts'), 1, 'the self-check read the receipts once');
  const verify = (await verifyOf(gw, '42161')) as unknown as { mode: string; reason: string; scopes: { scope: string; mode: string; reason: string }[] };
  t.is(verify.mode, 'proof');
  t.regex(verify.reason, /self-check passed on block 4 .*by agreement: receipts and logs \(receipts-root/);
  t.deepEqual(verify.scopes.map((s) => [s.scope, s.mode]), [['header', 'proof'], ['state', 'proof'], ['receipts', 'agreement'], ['bloom', 'proof']]);
  t.regex(verify.scopes.find((s) => s.scope === 'receipts')!.reason, /receipts root failed: receipts and logs by agreement: receipts-root/);
  const at = hex(arb.blocks.logs);
  const balance = await gw.post('/rpc/42161', rpc('eth_getBalance', [arb.recipient, at]));
  t.is(balance.headers['x-verified-by'], 'proof');
  t.is(balance.body.result, await arb.node.rpc<string>('eth_getBalance', [arb.recipient, at]));
  const block = await arb.node.rpc<{ transactions: string[] }>('eth_getBlockByNumber', [at, false]);
  const receipt = await gw.post('/rpc/42161', rpc('eth_getTransactionReceipt', [block.transactions[0]]));
  t.is(receipt.status, 200);
  t.is(receipt.headers['x-verified-by'], 'agreement');
  t.is(receipt.body.result.transactionHash, block.transactions[0]);
  t.is(proxy.calls('eth_getBlockReceipts'), 1, 'no receipts asked to prove a receipt');
  const logs = await gw.post('/rpc/42161', rpc('eth_getLogs', [{ address: arb.emitter, fromBlock: at, toBlock: at }]));
  t.is(logs.headers['x-verified-by'], 'agreement');
  t.is(logs.body.result.length, 3);
  const full = await gw.post('/rpc/42161', rpc('eth_getBlockByNumber', [at, true]));
  t.is(full.headers['x-verified-by'], 'proof', 'transactions proven');
});

test.serial('a receipt type no encoding is known for is not a lie: the next provider proves; when none can, agreement answers (not -32021)', async (t) => {
  const block = await chain.node.rpc<{ transactions: string[] }>('eth_getBlockByNumber', [hex(chain.blocks.logs), false]);
  // a chain's system transaction of its own, last in the block (as Polygon PoS's state-sync transaction from Madhugiri on)
  const unknownType = (call: { method: string }, result: unknown) => {
    if (call.method !== 'eth_getBlockReceipts') return undefined;
    const receipts = result as { type: string }[];
    receipts[receipts.length - 1]!.type = '0x50';
    return receipts;
  };
  {
    const { gw, liar, honest, close } = await liarFirst(unknownType);
    const reply = await gw.post(`/rpc/${chain.chainId}`, rpc('eth_getBlockReceipts', [hex(chain.blocks.logs)]));
    t.is(reply.status, 200);
    t.is(reply.headers['x-verified-by'], 'proof');
    t.is(reply.headers['x-forwarded-from'], honest.url);
    const shown = (await upstreamsOf(gw)).find((u) => u.url === liar.url)!;
    t.is(shown.proofsFailed, 0, 'not charged');
    await close();
  }
  const { gw, liar, honest, close } = await liarFirst(unknownType, { honest: false });
  t.teardown(close);
  const reply = await gw.post(`/rpc/${chain.chainId}`, rpc('eth_getTransactionReceipt', [block.transactions[0]]));
  t.is(reply.status, 200);
  t.is(reply.headers['x-verified-by'], 'agreement');
  t.is(reply.body.result.transactionHash, block.transactions[0]);
  t.is(liar.calls('eth_getBlockReceipts') + honest.calls('eth_getBlockReceipts'), 2, 'both asked for their material');
  const ups = await upstreamsOf(gw);
  t.deepEqual(ups.map((u) => u.proofsFailed), [0, 0]);
});
