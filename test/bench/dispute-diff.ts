/**
 * What explaining a dispute costs on a big answer: two eth_getLogs answers of 5,000 logs
 * (3.0 MB each) that differ in the last log's data, read again from their bodies
 * (comparableAnswers) and walked for the differing paths (diffAnswers). Only the 502 path pays it.
 *   node --import tsx test/bench/dispute-diff.ts
 */
import type { RpcPayload } from '../../lib/jsonrpc/types.js';
import { comparableAnswers, diffAnswers } from '../../lib/verify/dispute.js';

const log = (i: number, data = `0x${i.toString(16).padStart(64, '0')}`) => ({
  address: '0x1111111111111111111111111111111111111111',
  blockHash: `0x${'ab'.repeat(32)}`,
  blockNumber: '0x10',
  data,
  logIndex: `0x${i.toString(16)}`,
  removed: false,
  topics: [`0x${'cd'.repeat(32)}`, `0x${'ce'.repeat(32)}`, `0x${'cf'.repeat(32)}`],
  transactionHash: `0x${'ef'.repeat(32)}`,
  transactionIndex: '0x0',
});
const list = Array.from({ length: 5000 }, (_, i) => log(i));
const a = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, result: list }));
const b = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, result: list.map((l, i) => (i === list.length - 1 ? { ...l, data: '0xdead' } : l)) }));
const payload: RpcPayload = { calls: [{ id: 1, method: 'eth_getLogs', params: [] }], batch: false, raw: Buffer.alloc(0) };
const rounds = 20;
const read: number[] = [];
const diff: number[] = [];
for (let round = 0; round < rounds; round++) {
  const t0 = performance.now();
  const values = [comparableAnswers(a, payload), comparableAnswers(b, payload)];
  const t1 = performance.now();
  const d = diffAnswers(values);
  read.push(t1 - t0);
  diff.push(performance.now() - t1);
  if (d.length !== 1 || d[0]!.path !== `result[${list.length - 1}].data`) throw new Error(`unexpected: ${JSON.stringify(d)}`);
}
const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!.toFixed(1);
console.log(`answers of ${a.length} bytes, ${list.length} logs, ${rounds} rounds: reading both again ${median(read)} ms, finding the paths ${median(diff)} ms (medians)`);
