/**
 * The proof library on real anvil chains, one per hardfork (see test/support/proof-chain.ts for
 * the blocks: legacy, 2930 and 1559 transactions, a deployment, logs from two senders).
 *
 * Headers: hashes recomputed from real anvil blocks of every header layout anvil can mine
 * (`--hardfork berlin`: the original fifteen fields; london, shanghai, cancun, prague: each fork's
 * appended fields), and a range proven down to genesis from the top header.
 */
import test from 'ava';
import { zeroPadValue } from 'ethers';
import type { LogFilter, LogJson } from '../../../lib/proof/bloom.js';
import { ProofError } from '../../../lib/proof/failure.js';
import { checkAccountProof, checkStateAnswer, storageKey, type AccountProofJson } from '../../../lib/proof/state.js';
import { checkTransactions, type TransactionJson } from '../../../lib/proof/transactions.js';
import { senderOf } from '../../../lib/proof/sender.js';
import { blocksToFetch, checkLogsAnswer, LogsProofError, provenLogs, type BlockReceipts } from '../../../lib/proof/logs.js';
import { checkReceiptDetails, checkReceipts, type ReceiptJson } from '../../../lib/proof/receipts.js';
import { checkHeader, checkHeaderChain, headerHash, headerLayout, type BlockJson, type HeaderLayout } from '../../../lib/proof/header.js';
import { stopAllAnvils } from '../../support/anvil.js';
import { EMITTER_TOPIC, proofChain, type Fork, type ProofChain } from '../../support/proof-chain.js';

const layouts: Record<Fork, HeaderLayout> = { berlin: 'frontier', london: 'london', shanghai: 'shanghai', cancun: 'cancun', prague: 'prague' };
/** anvil writes (and hashes) blobGasUsed and excessBlobGas in a genesis before Shanghai, without withdrawalsRoot. */
const genesisLayouts: Record<Fork, HeaderLayout> = { berlin: 'gapped', london: 'gapped', shanghai: 'shanghai', cancun: 'cancun', prague: 'prague' };
const chains = new Map<Fork, ProofChain>();

test.before(async () => {
  for (const fork of Object.keys(layouts) as Fork[]) chains.set(fork, await proofChain(fork));
});
test.after.always(stopAllAnvils);

for (const fork of Object.keys(layouts) as Fork[]) {
  test(`${fork}: every block's hash is the keccak of its fields, layout ${layouts[fork]}`, async (t) => {
    const { node, blocks } = chains.get(fork)!;
    const all: BlockJson[] = [];
    for (let n = 0; n <= blocks.empty; n += 1) {
      const full = n % 2 === 0;
      const block = await node.rpc<BlockJson>('eth_getBlockByNumber', [`0x${n.toString(16)}`, full]);
      t.is(headerHash(block), block.hash as string, `block ${n}`);
      all.push(block);
    }
    t.is(headerLayout(all[0]!), genesisLayouts[fork]);
    const top = checkHeader(all.at(-1)!);
    t.is(top.layout, layouts[fork]);
    const below = checkHeaderChain(top, all.slice(0, -1));
    t.is(below.length, blocks.empty);
    t.is(below[0]!.number, 0n);
    const logsHash = all[blocks.logs]!.hash as string;
    const byHash = await node.rpc<BlockJson>('eth_getBlockByHash', [logsHash, true]);
    t.is(checkHeader(byHash, logsHash).number, BigInt(blocks.logs));
  });
}

/** The header of block n, proven. */
async function header(chain: ProofChain, n: number) {
  return checkHeader(await chain.node.rpc<BlockJson>('eth_getBlockByNumber', [`0x${n.toString(16)}`, false]));
}

for (const fork of Object.keys(layouts) as Fork[]) {
  test(`${fork}: every block's receipts rebuild its receiptsRoot, whole or one by one`, async (t) => {
    const chain = chains.get(fork)!;
    for (let n = 0; n <= chain.blocks.empty; n += 1) {
      const h = await header(chain, n);
      const receipts = await chain.node.rpc<ReceiptJson[]>('eth_getBlockReceipts', [`0x${n.toString(16)}`]);
      t.is(await checkReceipts(h, receipts), receipts, `block ${n}`);
    }
    const h = await header(chain, chain.blocks.logs);
    const block = await chain.node.rpc<{ transactions: string[] }>('eth_getBlockByNumber', [`0x${chain.blocks.logs.toString(16)}`, false]);
    const oneByOne = await Promise.all(block.transactions.map((tx) => chain.node.rpc<ReceiptJson>('eth_getTransactionReceipt', [tx])));
    t.deepEqual([...new Set(oneByOne.map((r) => r.type))].sort(), fork === 'berlin' ? ['0x0'] : ['0x0', '0x1', '0x2']);
    await checkReceipts(h, oneByOne);
    t.is(oneByOne.flatMap((r) => r.logs).length, 3);

    const dropped = structuredClone(oneByOne) as unknown as { logs: unknown[] }[];
    dropped[0]!.logs = [];
    const e = await t.throwsAsync(checkReceipts(h, dropped as unknown as ReceiptJson[]), { instanceOf: ProofError });
    t.is(e!.reason, 'logs-bloom');
    t.is(e!.field, 'receipts[0].logsBloom');
  });
}

/** Every header of the chain, proven down from the top one. */
async function provenRange(chain: ProofChain) {
  const blocks: BlockJson[] = [];
  for (let n = 0; n <= chain.blocks.empty; n += 1) blocks.push(await chain.node.rpc<BlockJson>('eth_getBlockByNumber', [`0x${n.toString(16)}`, false]));
  const top = checkHeader(blocks.at(-1)!);
  return [...checkHeaderChain(top, blocks.slice(0, -1)), top];
}

for (const fork of Object.keys(layouts) as Fork[]) {
  test(`${fork}: eth_getLogs over the chain is proven complete from the blooms and receipts`, async (t) => {
    const chain = chains.get(fork)!;
    const headers = await provenRange(chain);
    const senderB = zeroPadValue(chain.senders[1]!, 32);
    const filters: [LogFilter, number][] = [
      [{ address: chain.emitter }, 3],
      [{ address: chain.emitter, topics: [EMITTER_TOPIC, senderB] }, 1],
      [{ topics: [null, [senderB, zeroPadValue(chain.senders[0]!, 32)]] }, 3],
      [{ address: chain.recipient }, 0],
      [{}, 3],
    ];
    for (const [filter, count] of filters) {
      const fetch = blocksToFetch(headers, filter);
      const receipts = new Map<string, BlockReceipts>();
      for (const h of fetch) receipts.set(h.hash, { receipts: await chain.node.rpc<ReceiptJson[]>('eth_getBlockReceipts', [h.hash]) });
      const proven = await provenLogs(headers, filter, receipts);
      t.is(proven.length, count, JSON.stringify(filter));
      if (count > 0) t.deepEqual(fetch.map((h) => h.number), [BigInt(chain.blocks.logs)], 'only the block with logs is fetched');
      const answer = await chain.node.rpc<LogJson[]>('eth_getLogs', [{ ...filter, fromBlock: '0x0', toBlock: `0x${chain.blocks.empty.toString(16)}` }]);
      checkLogsAnswer(proven, answer);
      if (answer.length > 1) {
        const dropped = answer.filter((_, i) => i !== 1);
        const e = t.throws(() => checkLogsAnswer(proven, dropped), { instanceOf: LogsProofError })!;
        t.is(e.diff.dropped.length, 1);
        t.is(e.diff.dropped[0]!.logIndex, answer[1]!.logIndex as string);
      }
    }
  });
}

test('trailing wildcards: anvil lets them match shorter logs (geth does not), and the option says which rule the answer is held to', async (t) => {
  const chain = chains.get('prague')!;
  const headers = await provenRange(chain);
  const filter: LogFilter = { topics: [EMITTER_TOPIC, null, null] };
  const receipts = new Map<string, BlockReceipts>();
  for (const h of blocksToFetch(headers, filter)) receipts.set(h.hash, { receipts: await chain.node.rpc<ReceiptJson[]>('eth_getBlockReceipts', [h.hash]) });
  const answer = await chain.node.rpc<LogJson[]>('eth_getLogs', [{ ...filter, fromBlock: '0x0', toBlock: `0x${chain.blocks.empty.toString(16)}` }]);
  t.is(answer.length, 3);
  const geth = await provenLogs(headers, filter, receipts);
  t.is(geth.length, 0);
  t.is(t.throws(() => checkLogsAnswer(geth, answer), { instanceOf: LogsProofError })!.diff.added.length, 3);
  checkLogsAnswer(await provenLogs(headers, filter, receipts, { trailingWildcards: 'match-shorter' }), answer);
});

for (const fork of Object.keys(layouts) as Fork[]) {
  test(`${fork}: state reads are proven by eth_getProof against stateRoot`, async (t) => {
    const chain = chains.get(fork)!;
    const at = `0x${chain.blocks.logs.toString(16)}`;
    const h = await header(chain, chain.blocks.logs);
    const short = await chain.node.request('eth_getProof', [chain.emitter, ['0x1'], at]);
    t.truthy(short.error, 'anvil refuses a storage key shorter than 32 bytes');
    const slots = ['0x1', '0x0', '0x2'];
    const proof = await chain.node.rpc<AccountProofJson>('eth_getProof', [chain.emitter, slots.map((s) => storageKey(s)), at]);
    const contract = await checkAccountProof(h, proof, { address: chain.emitter, slots });
    t.true(contract.exists);
    for (const slot of slots) {
      const served = await chain.node.rpc<string>('eth_getStorageAt', [chain.emitter, slot, at]);
      t.is(checkStateAnswer('eth_getStorageAt', contract, served, slot), served, slot);
    }
    t.is(checkStateAnswer('eth_getStorageAt', contract, chain.storedWord, '0x1'), chain.storedWord);
    const code = await chain.node.rpc<string>('eth_getCode', [chain.emitter, at]);
    t.is(checkStateAnswer('eth_getCode', contract, code), code);
    t.is(t.throws(() => checkStateAnswer('eth_getCode', contract, '0x00'), { instanceOf: ProofError })!.reason, 'code-hash');

    for (const address of [...chain.senders, chain.recipient, `0x${'c1'.repeat(20)}`]) {
      const account = await checkAccountProof(h, await chain.node.rpc<AccountProofJson>('eth_getProof', [address, [], at]), { address });
      for (const method of ['eth_getBalance', 'eth_getTransactionCount', 'eth_getCode'] as const) {
        const served = await chain.node.rpc<string>(method, [address, at]);
        t.is(checkStateAnswer(method, account, served), served, `${address} ${method}`);
      }
      if (address === chain.recipient) t.is(account.balance, fork === 'berlin' ? 3001n : 6001n);
    }
    const absent = await checkAccountProof(h, await chain.node.rpc<AccountProofJson>('eth_getProof', [`0x${'c1'.repeat(20)}`, [storageKey('0x0')], at]));
    t.false(absent.exists);

    const sender = chain.senders[0]!;
    const before = await chain.node.rpc<AccountProofJson>('eth_getProof', [sender, [], `0x${chain.blocks.deploy.toString(16)}`]);
    const e = await t.throwsAsync(checkAccountProof(h, before), { instanceOf: ProofError });
    t.is(e!.reason, 'account-proof', 'a proof of another block');
    const lie = { ...(await chain.node.rpc<AccountProofJson>('eth_getProof', [sender, [], at])), balance: '0x1' };
    const v = await t.throwsAsync(checkAccountProof(h, lie), { instanceOf: ProofError });
    t.deepEqual([v!.reason, v!.field], ['value', 'balance']);
  });
}

for (const fork of Object.keys(layouts) as Fork[]) {
  test(`${fork}: every block's transactions rebuild its transactionsRoot; logs carry the proven hashes`, async (t) => {
    const chain = chains.get(fork)!;
    for (let n = 0; n <= chain.blocks.empty; n += 1) {
      const block = await chain.node.rpc<BlockJson & { transactions: TransactionJson[] }>('eth_getBlockByNumber', [`0x${n.toString(16)}`, true]);
      const h = checkHeader(block);
      t.deepEqual(await checkTransactions(h, block.transactions), block.transactions.map((tx) => tx.hash as string), `block ${n}`);
      // Each sender recovered from its signature, whatever the type (legacy EIP-155, 2930, 1559, 7702).
      t.deepEqual(block.transactions.map((tx) => senderOf(tx)), block.transactions.map((tx) => String(tx.from).toLowerCase()), `block ${n}: senders`);
      const receipts = await checkReceipts(h, await chain.node.rpc<ReceiptJson[]>('eth_getBlockReceipts', [h.hash]));
      checkReceiptDetails(receipts, block.transactions as unknown as { hash: string; to: string | null }[]);
    }
    const deploy = await chain.node.rpc<{ transactions: TransactionJson[] }>('eth_getBlockByNumber', [`0x${chain.blocks.deploy.toString(16)}`, true]);
    const types = { berlin: ['0x0', '0x1'], london: ['0x0', '0x1', '0x2'], shanghai: ['0x0', '0x1', '0x2'], cancun: ['0x0', '0x1', '0x2'], prague: ['0x0', '0x1', '0x2', '0x4'] }[fork];
    t.deepEqual([...new Set(deploy.transactions.map((tx) => tx.type as string))].sort(), types, 'the transaction types proven');
    const block = await chain.node.rpc<BlockJson & { transactions: TransactionJson[] }>('eth_getBlockByNumber', [`0x${chain.blocks.logs.toString(16)}`, true]);
    const h = checkHeader(block);
    const transactionHashes = await checkTransactions(h, block.transactions);
    const receipts = await chain.node.rpc<ReceiptJson[]>('eth_getBlockReceipts', [h.hash]);
    const filter: LogFilter = { address: chain.emitter };
    const logs = await provenLogs([h], filter, new Map([[h.hash, { receipts, transactionHashes }]]));
    t.deepEqual(logs.map((l) => l.transactionHash), [transactionHashes[0], transactionHashes[1], transactionHashes[3]]);
    checkLogsAnswer(logs, await chain.node.rpc<LogJson[]>('eth_getLogs', [{ ...filter, blockHash: h.hash }]));
    const forged = structuredClone(block.transactions) as Record<string, unknown>[];
    forged[2]!.value = '0x2';
    t.is((await t.throwsAsync(checkTransactions(h, forged), { instanceOf: ProofError }))!.field, 'transactions[2].hash');
  });
}
