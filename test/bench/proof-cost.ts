/**
 * The CPU cost of the proof library (lib/proof), in this process, on real data (the
 * execution-apis corpus): a header hash, a block's receipts proven (the corpus' block of 4
 * receipts, and a block of 400 made of its receipts repeated), an account proof with one storage
 * proof, a 400-receipt block's logs compared with an answer, 1,000 headers' blooms asked about a
 * filter; plus the bytes of a proof answer
 * against the plain answer it proves. Rounds are interleaved (each operation once per round, in
 * turn) and the median per operation is printed, in CPU time (user + system of this process, so
 * that other processes on a shared machine weigh less) and in wall time.
 *
 *   node --import tsx test/bench/proof-cost.ts            (BENCH_ROUNDS, default 3; BENCH_MS per
 *                                                           operation and round, default 300)
 */
import type { LogJson } from '../../lib/proof/bloom.js';
import { checkHeader, headerHash, type BlockJson } from '../../lib/proof/header.js';
import { blocksToFetch, checkLogsAnswer, provenLogs } from '../../lib/proof/logs.js';
import { checkReceipts, receiptsRoot, type ReceiptJson } from '../../lib/proof/receipts.js';
import { checkAccountProof, type AccountProofJson } from '../../lib/proof/state.js';
import { checkTransactions, type TransactionJson } from '../../lib/proof/transactions.js';
import { recordedPairs } from '../support/execution-apis.js';
import { perCallTable } from './parts.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const MS = Number(process.env.BENCH_MS ?? 300);

const pairs = recordedPairs();
const pair = (name: string) => pairs.find((p) => p.name === name)!;
const latest = pair('eth_getBlockByNumber/get-latest.io#0').response.result as BlockJson & { transactions: TransactionJson[] };
const header = checkHeader(latest);
const receipts = pair('eth_getBlockReceipts/get-block-receipts-latest.io#0').response.result as ReceiptJson[];
const proof = pair('eth_getProof/get-account-proof-with-storage.io#0');
const balance = pair('eth_getProof/get-account-proof-latest.io#0');

/** A block of 400 receipts: the corpus' receipts repeated, renumbered, gas accumulated; its header carries their root. */
const bigReceipts: ReceiptJson[] = Array.from({ length: 400 }, (_, i) => {
  const r = receipts[i % receipts.length]!;
  return { ...r, transactionIndex: `0x${i.toString(16)}`, cumulativeGasUsed: `0x${(21_000 * (i + 1)).toString(16)}` };
});
const bigHeader = { ...header, receiptsRoot: await receiptsRoot(bigReceipts) };
const bigLogs = await provenLogs([bigHeader], {}, new Map([[bigHeader.hash, { receipts: bigReceipts }]]));
const bigAnswer = JSON.parse(JSON.stringify(bigLogs)) as LogJson[];

/** 1,000 proven headers (the corpus' last, repeated: a real bloom each) and a filter of one address and one topic none of them holds. */
const range = Array.from({ length: 1_000 }, () => header);
const sparse = { address: `0x${'ab'.repeat(20)}`, topics: [`0x${'cd'.repeat(32)}`] };

const ops: [string, () => unknown][] = [
  ['blocksToFetch over 1,000 headers (1 address, 1 topic)', () => blocksToFetch(range, sparse)],
  ['headerHash (Prague header)', () => headerHash(latest)],
  [`checkTransactions (${latest.transactions.length} txs)`, () => checkTransactions(header, latest.transactions)],
  [`checkReceipts (${receipts.length} receipts)`, () => checkReceipts(header, receipts)],
  ['checkReceipts (400 receipts)', () => checkReceipts(bigHeader, bigReceipts)],
  ['checkAccountProof (account + 1 slot)', () => checkAccountProof(header, proof.response.result as AccountProofJson)],
  [`provenLogs + checkLogsAnswer (400 receipts, ${bigLogs.length} logs)`, async () => {
    checkLogsAnswer(await provenLogs([bigHeader], {}, new Map([[bigHeader.hash, { receipts: bigReceipts }]])), bigAnswer);
  }],
];

console.log(await perCallTable(ops, ROUNDS, MS, 0));
console.log(`\n| answer | bytes |\n|---|---:|`);
console.log(`| eth_getProof, account only (geth, 0x36) | ${balance.responseText.length} |`);
console.log(`| eth_getProof, account + 1 slot | ${proof.responseText.length} |`);
console.log(`| eth_getBalance, the plain answer it proves | ${JSON.stringify({ jsonrpc: '2.0', id: 1, result: '0x76' }).length} |`);
console.log(`| eth_getBlockByNumber header (hashes only) | ${JSON.stringify({ ...latest, transactions: latest.transactions.map((t) => t.hash) }).length} |`);
