/**
 * Answers under 1 MiB that cost far more than their size to judge, and ordinary ones of the same
 * sizes: per shape, its bytes, the estimate (scan.ts judgingCost, in units of an ordinary byte),
 * whether judgedOffThread sends it to the thread, what that decision's scan costs on the event
 * loop, and what judging it there (assessBody) costs. Best of BENCH_ROUNDS (default 5) per
 * figure, wall time, this worktree's source.
 *
 *   node --import tsx test/bench/costly-answers.ts
 */
import { judgingCost } from '../../lib/jsonrpc/scan.js';
import { assessBody } from '../../lib/verify/answers/answers.js';
import { costlyFrom, offThreadFrom } from '../../lib/verify/answers/off-thread.js';

const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const payload = { batch: false, calls: [{ id: 1, method: 'eth_getLogs', params: [] }] };
const wrap = (r: string) => Buffer.from(`{"jsonrpc":"2.0","id":1,"result":${r}}`);
const log = (i: number) => ({ address: '0x' + 'ab'.repeat(20), topics: ['0x' + 'cd'.repeat(32), '0x' + 'ef'.repeat(32)], data: '0x' + '12'.repeat(64), blockNumber: '0x1234', transactionHash: '0x' + '9a'.repeat(32), transactionIndex: '0x1', blockHash: '0x' + 'be'.repeat(32), logIndex: `0x${i.toString(16)}`, removed: false });
const logs = (n: number) => wrap(JSON.stringify(Array.from({ length: n }, (_, i) => log(i))));
const keys = (n: number) => wrap(JSON.stringify(Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]))));

const shapes: Record<string, Buffer> = {
  'logs 60': logs(60),
  'logs 850': logs(850),
  'logs 1 800': logs(1_800),
  'hex string 1 MB': wrap(`"0x${'ab'.repeat(500_000)}"`),
  'keys 5 000': keys(5_000),
  'keys 10 000': keys(10_000),
  'keys 70 000': keys(70_000),
  '1-key objects 60 000': wrap(`[${Array.from({ length: 60_000 }, (_, i) => `{"k${i}":0}`).join(',')}]`),
  'numbers 1.0 x 9 000': wrap(`[${'1.0,'.repeat(8_999)}1.0]`),
  'numbers 1 x 200 000': wrap(`[${'1,'.repeat(199_999)}1]`),
  '{} x 100 000': wrap(`[${'{},'.repeat(99_999)}{}]`),
  '\\u0000 x 100 000': wrap(`"${'\\u0000'.repeat(100_000)}"`),
  '\\\\ x 250 000': wrap(`"${'\\\\'.repeat(250_000)}"`),
};

const best = new Map<string, { scan: number; judge: number }>();
for (let r = 0; r < rounds; r++) {
  for (const [name, body] of Object.entries(shapes)) {
    let t = performance.now();
    judgingCost(body, costlyFrom);
    const scan = performance.now() - t;
    t = performance.now();
    assessBody(body, payload);
    const judge = performance.now() - t;
    const b = best.get(name) ?? { scan: Infinity, judge: Infinity };
    best.set(name, { scan: Math.min(b.scan, scan), judge: Math.min(b.judge, judge) });
  }
}
console.log('| shape | bytes | estimate (M) | judged | decision\'s scan | assessBody |');
console.log('|---|---:|---:|---|---:|---:|');
for (const [name, body] of Object.entries(shapes)) {
  const { scan, judge } = best.get(name)!;
  const estimate = judgingCost(body);
  console.log(`| ${name} | ${body.length} | ${(estimate / 1e6).toFixed(2)} | ${body.length >= offThreadFrom ? 'thread (its size)' : estimate >= costlyFrom && body.length >= 32 * 1024 ? 'thread' : 'event loop'} | ${scan.toFixed(2)} ms | ${judge.toFixed(1)} ms |`);
}
