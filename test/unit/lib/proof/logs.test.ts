/**
 * eth_getLogs proven complete: filter semantics checked against a real node's answers (the
 * execution-apis corpus), the logs of a real block (0x36) rebuilt from its proven receipts, and
 * every way an answer can differ (a log dropped, added, altered, renumbered, reordered) named;
 * an answer numbered per transaction told from one that lies.
 */
import test from 'ava';
import type { LogFilter, LogJson } from '../../../../lib/proof/bloom.js';
import { ProofError } from '../../../../lib/proof/failure.js';
import { checkHeader, type BlockJson } from '../../../../lib/proof/header.js';
import { blockLogs, blocksToFetch, checkLogsAnswer, diffLogs, logIndexInTransaction, logMatches, LogsProofError, numberedPerTransaction, provenLogs, type ProvenLog } from '../../../../lib/proof/logs.js';
import type { ReceiptJson } from '../../../../lib/proof/receipts.js';
import { recordedPairs } from '../../../support/execution-apis.js';

const pairs = recordedPairs();
const pair = (name: string) => pairs.find((p) => p.name === name)!;
const header36 = checkHeader(pair('eth_getBlockByNumber/get-latest.io#0').response.result as BlockJson);
const block1 = checkHeader(pair('eth_getBlockByHash/get-block-by-hash.io#0').response.result as BlockJson);
const receipts36 = pair('eth_getBlockReceipts/get-block-receipts-latest.io#0').response.result as ReceiptJson[];
const allLogs36 = receipts36.flatMap((r) => r.logs);

test("the filter semantics are a real node's: topics by position, null and [] wildcards, lists of alternatives", (t) => {
  const all = pair('eth_getLogs/filter-with-blockHash.io#0').response.result as LogJson[];
  t.true(all.length >= 1);
  const p = pair('eth_getLogs/filter-with-blockHash-and-topics.io#0');
  const filter = (p.request.params as LogFilter[])[0]!;
  t.deepEqual(all.filter((l) => logMatches(l, filter)), p.response.result as LogJson[]);
  t.deepEqual(all.filter((l) => logMatches(l, { topics: [null, [`0x${'00'.repeat(32)}`]] })), []);
  for (const name of ['eth_getLogs/topic-exact-match.io#0', 'eth_getLogs/topic-null-wildcard.io#0', 'eth_getLogs/topic-wildcard.io#0', 'eth_getLogs/contract-addr.io#0']) {
    const p = pair(name);
    const filter = (p.request.params as LogFilter[])[0]!;
    const answer = p.response.result as LogJson[];
    t.true(answer.length > 0, name);
    t.true(answer.every((l) => logMatches(l, filter)), name);
  }
  const log = { address: '0x7dcd17433742f4c0ca53122ab541d0ba67fc27df', topics: [`0x${'01'.repeat(32)}`] };
  t.false(logMatches(log, { topics: [null, null] }), 'more positions than topics: no match (geth)');
  t.true(logMatches(log, { topics: [null, null] }, { trailingWildcards: 'match-shorter' }));
  t.false(logMatches(log, { address: [`0x${'02'.repeat(20)}`] }));
  t.true(logMatches(log, { address: '0x7DCD17433742F4C0CA53122AB541D0BA67FC27DF' }));
});

test('the logs of a proven block are its receipts\' logs, numbered per block', async (t) => {
  t.true(allLogs36.length > 2);
  const proven = await provenLogs([header36], {}, new Map([[header36.hash, { receipts: receipts36 }]]));
  t.is(proven.length, allLogs36.length);
  for (const [i, p] of proven.entries()) {
    const served = allLogs36[i]!;
    t.is(p.logIndex, served.logIndex as string);
    t.is(p.transactionHash, served.transactionHash as string);
    t.is(p.transactionIndex, served.transactionIndex as string);
    t.is(p.blockHash, served.blockHash as string);
    t.deepEqual(p.topics, served.topics);
  }
  // the node's own eth_getLogs answer for the block, as its receipts give it, passes
  checkLogsAnswer(proven, allLogs36);
  const one = allLogs36[1]!;
  const filter: LogFilter = { address: one.address, topics: [one.topics[0]!] };
  const some = await provenLogs([header36], filter, new Map([[header36.hash, { receipts: receipts36 }]]));
  t.deepEqual(some.map((l) => l.logIndex), allLogs36.filter((l) => logMatches(l, filter)).map((l) => l.logIndex as string));
  t.true(some.some((l) => l.logIndex === one.logIndex));
});

test('a block whose bloom rules the filter out needs no receipts; one that may match does', async (t) => {
  const absent: LogFilter = { address: `0x${'ab'.repeat(20)}` };
  t.deepEqual(blocksToFetch([block1, header36], absent), []);
  t.deepEqual(await provenLogs([block1, header36], absent, new Map()), []);
  t.deepEqual(blocksToFetch([block1, header36], {}), [header36], 'block 1 has no logs: its bloom is empty');
  const e = await t.throwsAsync(provenLogs([block1, header36], {}, new Map()), { instanceOf: ProofError });
  t.is(e!.field, 'receipts[block 54]');
  const forged = structuredClone(receipts36) as unknown as { logs: { data: string }[] }[];
  forged.find((r) => r.logs.length > 0)!.logs[0]!.data = '0x1234';
  const f = await t.throwsAsync(provenLogs([header36], {}, new Map([[header36.hash, { receipts: forged as unknown as ReceiptJson[] }]])), { instanceOf: ProofError });
  t.is(f!.reason, 'receipts-root');
});

async function proven36(): Promise<ProvenLog[]> {
  return provenLogs([header36], {}, new Map([[header36.hash, { receipts: receipts36 }]]));
}

const copy = (): LogJson[] => structuredClone(allLogs36) as LogJson[];

test('an answer with one log dropped, added or altered is named precisely', async (t) => {
  const proven = await proven36();
  const dropped = copy();
  dropped.splice(1, 1);
  const d = t.throws(() => checkLogsAnswer(proven, dropped), { instanceOf: LogsProofError })!;
  t.is(d.reason, 'logs');
  t.deepEqual(d.diff.dropped.map((l) => l.logIndex), [allLogs36[1]!.logIndex as string]);
  t.deepEqual([d.diff.added.length, d.diff.altered.length], [0, 0]);
  t.regex(d.message, /1 dropped \(block 0x36 logIndex 0x1\)/);

  const renumbered = copy();
  renumbered.splice(1, 1);
  for (const [i, l] of renumbered.entries()) (l as unknown as { logIndex: string }).logIndex = `0x${i.toString(16)}`;
  const r = t.throws(() => checkLogsAnswer(proven, renumbered), { instanceOf: LogsProofError })!;
  t.deepEqual(r.diff.dropped.map((l) => l.logIndex), ['0x1'], 'still one log dropped');
  t.true(r.diff.altered.every((a) => a.fields.join() === 'logIndex'));

  const added = copy();
  added.push({ ...added[0]!, data: '0xdeadbeef', logIndex: `0x${allLogs36.length.toString(16)}` });
  const a = t.throws(() => checkLogsAnswer(proven, added), { instanceOf: LogsProofError })!;
  t.deepEqual(a.diff.added.map((x) => x.index), [allLogs36.length]);
  t.is(a.field, `result[${allLogs36.length}]`);

  const altered = copy();
  (altered[2] as { data: string }).data = '0xdeadbeef';
  const x = t.throws(() => checkLogsAnswer(proven, altered), { instanceOf: LogsProofError })!;
  t.deepEqual(x.diff.altered.map((v) => [v.index, v.fields]), [[2, ['data']]]);
  t.is(x.field, 'result[2].data');
  t.deepEqual([x.diff.dropped.length, x.diff.added.length], [0, 0]);

  const topic = copy();
  (topic[0] as unknown as { topics: string[] }).topics = [...topic[0]!.topics.slice(0, -1), `0x${'ee'.repeat(32)}`];
  t.deepEqual(t.throws(() => checkLogsAnswer(proven, topic), { instanceOf: LogsProofError })!.diff.altered[0]!.fields, ['topics']);

  const tx = copy();
  (tx[0] as unknown as { transactionHash: string }).transactionHash = `0x${'aa'.repeat(32)}`;
  t.deepEqual(t.throws(() => checkLogsAnswer(proven, tx), { instanceOf: LogsProofError })!.diff.altered[0]!.fields, ['transactionHash']);

  const swapped = copy();
  [swapped[0], swapped[1]] = [swapped[1]!, swapped[0]!];
  const s = t.throws(() => checkLogsAnswer(proven, swapped), { instanceOf: LogsProofError })!;
  t.is(s.diff.outOfOrderAt, 1);

  const removed = copy();
  (removed[0] as unknown as { removed: boolean }).removed = true;
  t.deepEqual(t.throws(() => checkLogsAnswer(proven, removed), { instanceOf: LogsProofError })!.diff.altered[0]!.fields, ['removed']);
});

test('diffLogs: an empty answer drops every log; an exact answer differs in nothing', async (t) => {
  const proven = await proven36();
  t.is(diffLogs(proven, []).dropped.length, proven.length);
  t.deepEqual(diffLogs(proven, allLogs36), { dropped: [], added: [], altered: [], outOfOrderAt: undefined });
  t.notThrows(() => checkLogsAnswer([], []));
  t.is(blockLogs(header36, { receipts: receipts36, transactionHashes: receipts36.map(() => `0x${'bb'.repeat(32)}`) }, {})[0]!.transactionHash, `0x${'bb'.repeat(32)}`);
});

test('malformed answers fail with the field named, never with a TypeError', async (t) => {
  const proven = await proven36();
  const e = t.throws(() => checkLogsAnswer(proven, [null as unknown as LogJson, ...allLogs36]), { instanceOf: LogsProofError })!;
  t.deepEqual(e.diff.added.map((a) => a.index), [0]);
  t.is(t.throws(() => checkLogsAnswer(proven, 'x' as unknown as LogJson[]), { instanceOf: ProofError })!.reason, 'malformed');
  const noLogs = structuredClone(receipts36) as unknown as Record<string, unknown>[];
  delete noLogs[0]!.logs;
  const r = await t.throwsAsync(provenLogs([header36], {}, new Map([[header36.hash, { receipts: noLogs as unknown as ReceiptJson[] }]])), { instanceOf: ProofError });
  t.deepEqual([r!.reason, r!.field], ['malformed', 'receipts[0].logs']);
  const badLog = structuredClone(receipts36) as unknown as { logs: unknown[] }[];
  badLog.find((x) => x.logs.length > 0)!.logs[0] = { address: allLogs36[0]!.address, data: '0x' };
  const b = await t.throwsAsync(provenLogs([header36], {}, new Map([[header36.hash, { receipts: badLog as unknown as ReceiptJson[] }]])), { instanceOf: ProofError });
  t.is(b!.reason, 'malformed');
  t.regex(b!.field, /topics$/);
});

test('logs numbered per transaction: told exactly from a lie (a log dropped, added, altered, or numbered otherwise)', async (t) => {
  const proven = await proven36();
  const receipts = new Map([[header36.hash, { receipts: receipts36 }]]);
  // block 0x36: no log in transaction 0, ten in transaction 1, none in 2, one in 3 (logIndex 0xa in the block, 0x0 in its transaction)
  t.deepEqual(receipts36.map((r) => r.logs.length), [0, 10, 0, 1]);
  t.deepEqual(proven.map((l) => logIndexInTransaction(l, { receipts: receipts36 })), [0n, 1n, 2n, 3n, 4n, 5n, 6n, 7n, 8n, 9n, 0n]);
  const perTx = (): LogJson[] => {
    const logs = copy();
    let tx = '';
    let i = 0;
    for (const l of logs) {
      if (l.transactionHash !== tx) [tx, i] = [l.transactionHash as string, 0];
      (l as unknown as { logIndex: string }).logIndex = `0x${(i++).toString(16)}`;
    }
    return logs;
  };
  const honest = perTx();
  t.is(honest[10]!.logIndex, '0x0');
  const e = t.throws(() => checkLogsAnswer(proven, honest), { instanceOf: LogsProofError })!;
  t.deepEqual(e.diff.altered.map((a) => a.fields), [['logIndex']]);
  t.true(numberedPerTransaction(proven, honest, e.diff, receipts), 'every log as proven, numbered per transaction');
  const lies: [string, (logs: LogJson[]) => LogJson[]][] = [
    ['a log dropped', (logs) => logs.slice(0, -1)],
    ['a log dropped in the middle', (logs) => [...logs.slice(0, 3), ...logs.slice(4)]],
    ['a log added', (logs) => [...logs, { ...logs[10]!, data: '0x01', logIndex: '0x1' }]],
    ['a log altered', (logs) => logs.map((l, i) => (i === 10 ? { ...l, data: '0xdead' } : l))],
    ['numbered from 1 in each transaction', (logs) => logs.map((l) => ({ ...l, logIndex: `0x${(Number(l.logIndex) + 1).toString(16)}` }))],
    ['numbered per block from another block\'s count', (logs) => logs.map((l, i) => (i === 10 ? { ...l, logIndex: '0x5' } : l))],
  ];
  for (const [what, lie] of lies) {
    const answer = lie(perTx());
    const err = t.throws(() => checkLogsAnswer(proven, answer), { instanceOf: LogsProofError }, what);
    if (err) t.false(numberedPerTransaction(proven, answer, err.diff, receipts), what);
  }
  t.false(numberedPerTransaction(proven, perTx(), e.diff, new Map()), 'without the block\'s receipts nothing is told');
});
