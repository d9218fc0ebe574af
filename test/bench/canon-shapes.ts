/**
 * Micro-benchmark of the canonical form on the hot path: canonicalForm()+sha256Hex and assessBody
 * (parse + canonical form + SHA-256) of a large block with full transactions (every type, with
 * access lists, blob hashes, authorizations and withdrawals), the same block with L2 extras on the
 * block and on every transaction, and the bench's 2.5 MB eth_getLogs reply. Prints medians (ms).
 * No assertion: timings are for a reader to compare (e.g. the built code of two commits).
 *
 *   npm run build --silent && node --import tsx test/bench/canon-shapes.ts [DIST_DIR]
 *
 * DIST_DIR (default ./dist) is the built tree measured; for an older build, `cp -r dist /tmp/old`
 * before the change and run the two alternately, one process each (two builds in one process
 * measure the second slower, whichever it is). Printed: the median over the rounds of each
 * round's median, and the lowest round. Knobs: CANON_RUNS (calls per round, default 30),
 * CANON_ROUNDS (default 7).
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { RpcPayload } from '../../lib/jsonrpc/types.js';
import { replyText, requests } from './payloads.js';

const dist = path.resolve(process.argv[2] ?? 'dist');
const runs = Number(process.env.CANON_RUNS ?? 30);
const rounds = Number(process.env.CANON_ROUNDS ?? 7);
const { canonicalForm, sha256Hex } = (await import(pathToFileURL(path.join(dist, 'lib/verify/answers/canonical.js')).href)) as typeof import('../../lib/verify/answers/canonical.js');
const { assessBody } = (await import(pathToFileURL(path.join(dist, 'lib/verify/answers/answers.js')).href)) as typeof import('../../lib/verify/answers/answers.js');

const hex = (n: number, bytes: number) => `0x${n.toString(16).padStart(bytes * 2, '0').slice(-bytes * 2)}`;

function transaction(i: number, extras: boolean): Record<string, unknown> {
  const type = i % 5; // 0 legacy, 1 access list, 2 dynamic fee, 3 blob, 4 set-code
  const tx: Record<string, unknown> = {
    blockHash: hex(0xabcdef, 32),
    blockNumber: '0x1312d00',
    blockTimestamp: '0x6553f100',
    from: hex(i * 7919, 20),
    gas: '0x5208',
    gasPrice: '0x4a817c800',
    hash: hex(i * 104729 + 1, 32),
    input: `0x${'a9059cbb'}${hex(i, 32).slice(2)}${hex(i * 3, 32).slice(2)}`,
    nonce: hex(i, 2),
    to: hex(i * 31 + 5, 20),
    transactionIndex: hex(i, 2),
    value: '0xde0b6b3a7640000',
    type: `0x${type}`,
    v: type === 0 ? '0x25' : '0x1',
    r: hex(i * 13 + 1, 32),
    s: hex(i * 17 + 1, 32),
  };
  if (type > 0) {
    Object.assign(tx, { chainId: '0x1', yParity: '0x1', accessList: [{ address: hex(i, 20), storageKeys: [hex(1, 32), hex(2, 32)] }] });
  }
  if (type >= 2) Object.assign(tx, { maxFeePerGas: '0x6fc23ac00', maxPriorityFeePerGas: '0x3b9aca00' });
  if (type === 3) Object.assign(tx, { maxFeePerBlobGas: '0x3b9aca00', blobVersionedHashes: [hex(i + 1, 32), hex(i + 2, 32)] });
  if (type === 4) Object.assign(tx, { authorizationList: [{ chainId: '0x1', nonce: '0x1', address: hex(i, 20), yParity: '0x0', r: hex(i + 3, 32), s: hex(i + 4, 32) }] });
  if (extras) Object.assign(tx, { l1BlockNumber: '0x13a1b2c', requestId: null });
  return tx;
}

function blockResult(count: number, extras: boolean): Record<string, unknown> {
  const block: Record<string, unknown> = {
    baseFeePerGas: '0x3b9aca00',
    blobGasUsed: '0x40000',
    difficulty: '0x0',
    excessBlobGas: '0x0',
    extraData: '0x6265617665726275696c642e6f7267',
    gasLimit: '0x1c9c380',
    gasUsed: '0x1c9c000',
    hash: hex(0xabcdef, 32),
    logsBloom: `0x${'00'.repeat(256)}`,
    miner: hex(0x95222290, 20),
    mixHash: hex(5, 32),
    nonce: '0x0000000000000000',
    number: '0x1312d00',
    parentBeaconBlockRoot: hex(6, 32),
    parentHash: hex(7, 32),
    receiptsRoot: hex(8, 32),
    requestsHash: hex(9, 32),
    sha3Uncles: hex(10, 32),
    size: '0x2a0b1',
    stateRoot: hex(11, 32),
    timestamp: '0x6553f100',
    transactions: Array.from({ length: count }, (_, i) => transaction(i, extras)),
    transactionsRoot: hex(12, 32),
    uncles: [],
    withdrawals: Array.from({ length: 16 }, (_, i) => ({ index: hex(i, 4), validatorIndex: hex(i * 9, 4), address: hex(i, 20), amount: '0x1234' })),
    withdrawalsRoot: hex(13, 32),
  };
  if (extras) Object.assign(block, { l1BlockNumber: '0x13a1b2c', sendCount: '0x1', sendRoot: hex(14, 32) });
  return block;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

function measure(fn: () => unknown): number {
  for (let i = 0; i < 10; i += 1) fn();
  const times: number[] = [];
  for (let i = 0; i < runs; i += 1) {
    const t = performance.now();
    fn();
    times.push(performance.now() - t);
  }
  return median(times);
}

const single = (method: string, params: unknown[]): RpcPayload => ({ calls: [{ id: 1, method, params }], batch: false, raw: Buffer.alloc(0) });
const cases: { name: string; method: string; payload: RpcPayload; text: string }[] = [
  { name: 'block, 1,000 full transactions', method: 'eth_getBlockByNumber', payload: single('eth_getBlockByNumber', ['0x1312d00', true]), text: JSON.stringify({ jsonrpc: '2.0', id: 1, result: blockResult(1000, false) }) },
  { name: 'the same block with L2 extras', method: 'eth_getBlockByNumber', payload: single('eth_getBlockByNumber', ['0x1312d00', true]), text: JSON.stringify({ jsonrpc: '2.0', id: 1, result: blockResult(1000, true) }) },
  { name: 'eth_getLogs, 5,000 logs', method: 'eth_getLogs', payload: single('eth_getLogs', [...requests.getLogs.params]), text: replyText('eth_getLogs', 1, 1) },
];

const bodies = cases.map((c) => ({ body: Buffer.from(c.text), result: (JSON.parse(c.text) as { result: unknown }).result }));
/** [case] → per round: the medians of canonicalForm+sha256Hex and of assessBody. */
const times = cases.map(() => [[], []] as [number[], number[]]);
for (let round = 0; round < rounds; round += 1) {
  for (const [i, c] of cases.entries()) {
    const { body, result } = bodies[i]!;
    times[i]![0].push(measure(() => sha256Hex(canonicalForm(c.method, { result }))));
    times[i]![1].push(
      measure(() => {
        const a = assessBody(body, c.payload);
        if (!a.ok) throw new Error(a.reason);
      }),
    );
  }
}
const fmt = (xs: number[]) => `${median(xs).toFixed(2)} (min ${Math.min(...xs).toFixed(2)})`;
console.log(`${dist}: median over ${rounds} rounds of ${runs} calls each, ms`);
for (const [i, c] of cases.entries()) {
  console.log(`  ${c.name} (${(bodies[i]!.body.length / 1e6).toFixed(2)} MB): canonicalForm+sha256Hex ${fmt(times[i]![0])}; assessBody ${fmt(times[i]![1])}`);
}
