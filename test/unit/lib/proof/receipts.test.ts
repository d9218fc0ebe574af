/**
 * Receipts proven against receiptsRoot on the execution-apis corpus (blocks 0x1, whose receipts
 * carry the post-state root of receipts before Byzantium, and 0x36; the corpus holds their headers
 * and eth_getBlockReceipts answers), the encoding compared with the node's own
 * (debug_getRawReceipts), blooms rebuilt; one receipt or log tampered with is caught and named;
 * eth_getTransactionReceipt answers checked against the proven receipts.
 */
import test from 'ava';
import { bloomMayMatch, bloomQuery, logsBloom, logsBloomMayMatch, orBlooms, type LogJson } from '../../../../lib/proof/bloom.js';
import { toHex } from '../../../../lib/proof/bytes.js';
import { ProofError } from '../../../../lib/proof/failure.js';
import { checkHeader, type BlockJson } from '../../../../lib/proof/header.js';
import { blockBloom, checkReceiptAnswer, checkReceiptDetails, checkReceipts, checkReceiptsOfTransactions, receiptBytes, receiptsRoot, type ReceiptJson } from '../../../../lib/proof/receipts.js';
import { recordedPairs } from '../../../support/execution-apis.js';

const pairs = recordedPairs();
const result = (name: string) => pairs.find((p) => p.name === name)!.response.result;
const block1 = checkHeader(result('eth_getBlockByHash/get-block-by-hash.io#0') as BlockJson);
const block36 = checkHeader(result('eth_getBlockByNumber/get-latest.io#0') as BlockJson);
const receipts1 = result('eth_getBlockReceipts/get-block-receipts-n.io#0') as ReceiptJson[];
const receipts36 = result('eth_getBlockReceipts/get-block-receipts-latest.io#0') as ReceiptJson[];

test('the receipts of real blocks rebuild their receiptsRoot', async (t) => {
  t.is(block1.number, 1n);
  t.true(receipts1.length > 1);
  t.is(await receiptsRoot(receipts1), block1.receiptsRoot);
  t.is(await checkReceipts(block1, receipts1), receipts1);
  t.is(await receiptsRoot(receipts36), block36.receiptsRoot);
  await checkReceipts(block36, receipts36);
  t.is(await receiptsRoot([]), '0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421');
});

test("a receipt's encoding is the node's own (debug_getRawReceipts)", (t) => {
  const raw = result('debug_getRawReceipts/get-block-n.io#0') as string[];
  const receipt = result('eth_getTransactionReceipt/get-legacy-receipt.io#0') as ReceiptJson;
  t.is(receipt.blockNumber, '0x3');
  t.is(toHex(receiptBytes(receipt)), raw[0]!);
});

test('blooms are rebuilt from the logs, per receipt and per block', (t) => {
  let logs = 0;
  for (const r of [...receipts1, ...receipts36]) {
    t.is(logsBloom(r.logs), r.logsBloom);
    logs += r.logs.length;
  }
  t.true(logs > 0, 'the corpus has logs');
  t.is(blockBloom(receipts36), block36.logsBloom);
  t.is(orBlooms([]), `0x${'00'.repeat(256)}`);
});

test('logsBloomMayMatch: an address or topic of a log may match; one that is absent is ruled out', (t) => {
  const withLogs = receipts36.find((r) => r.logs.length > 0)!;
  const log = withLogs.logs[0]!;
  const bloom = block36.logsBloom;
  const absentAddress = `0x${'ab'.repeat(20)}`;
  const absentTopic = `0x${'cd'.repeat(32)}`;
  t.false(logsBloomMayMatch(bloom, { address: absentAddress }), 'sanity: the made-up address is not in the bloom');
  t.true(logsBloomMayMatch(bloom, {}));
  t.true(logsBloomMayMatch(bloom, { address: log.address }));
  t.true(logsBloomMayMatch(bloom, { address: [absentAddress, log.address.toUpperCase().replace('0X', '0x')] }));
  t.true(logsBloomMayMatch(bloom, { address: [] }), 'an empty list is a wildcard');
  if (log.topics.length > 0) {
    t.true(logsBloomMayMatch(bloom, { address: log.address, topics: [log.topics[0]!] }));
    t.true(logsBloomMayMatch(bloom, { topics: [null, ...log.topics.slice(1)] }));
    t.true(logsBloomMayMatch(bloom, { topics: [[absentTopic, log.topics[0]!]] }));
    t.false(logsBloomMayMatch(bloom, { address: log.address, topics: [absentTopic] }));
    t.false(logsBloomMayMatch(bloom, { topics: [log.topics[0]!, absentTopic] }));
  }
  t.false(logsBloomMayMatch(`0x${'00'.repeat(256)}`, { topics: [log.topics[0] ?? absentTopic] }));
  t.false(logsBloomMayMatch(`0x${'00'.repeat(256)}`, { topics: [null] }), 'an empty bloom: the block has no log at all');
});

const clone = <T>(v: T): T => structuredClone(v);
const withLogIndex = receipts36.findIndex((r) => r.logs.length > 0);

async function failure(t: import('ava').ExecutionContext, receipts: ReceiptJson[]): Promise<ProofError> {
  const e = await t.throwsAsync(checkReceipts(block36, receipts), { instanceOf: ProofError });
  return e!;
}

test('tampering: a dropped, added, reordered or altered receipt is named', async (t) => {
  t.true(withLogIndex >= 0);
  const dropped = await failure(t, receipts36.slice(0, -1));
  t.is(dropped.reason, 'receipts-root');
  t.is(dropped.expected, block36.receiptsRoot);

  const added = clone(receipts36);
  added.push({ ...clone(receipts36.at(-1)!), transactionIndex: `0x${receipts36.length.toString(16)}` });
  t.is((await failure(t, added)).reason, 'receipts-root');

  const swapped = clone(receipts36);
  [swapped[0], swapped[1]] = [swapped[1]!, swapped[0]!];
  const order = await failure(t, swapped);
  t.is(order.reason, 'wrong-block');
  t.is(order.field, 'receipts[0].transactionIndex');

  const status = clone(receipts36);
  (status[0] as { status: string }).status = status[0]!.status === '0x1' ? '0x0' : '0x1';
  t.is((await failure(t, status)).reason, 'receipts-root');

  const gas = clone(receipts36);
  (gas[0] as { cumulativeGasUsed: string }).cumulativeGasUsed = '0x1';
  t.is((await failure(t, gas)).reason, 'receipts-root');
});

test('tampering: a log altered is caught by the bloom (address, topic) or the root (data)', async (t) => {
  const logPath = `receipts[${withLogIndex}]`;
  const address = clone(receipts36);
  (address[withLogIndex]!.logs[0] as { address: string }).address = `0x${'ab'.repeat(20)}`;
  const a = await failure(t, address);
  t.is(a.reason, 'logs-bloom');
  t.is(a.field, `${logPath}.logsBloom`);

  const data = clone(receipts36);
  const log = data[withLogIndex]!.logs[0] as { data: string };
  log.data = log.data === '0x' ? '0x01' : `${log.data.slice(0, -2)}ff`;
  t.is((await failure(t, data)).reason, 'receipts-root');

  const otherBlock = clone(receipts36);
  (otherBlock[withLogIndex]!.logs[0] as unknown as { blockHash: string }).blockHash = block1.hash;
  const b = await failure(t, otherBlock);
  t.is(b.reason, 'wrong-block');
  t.is(b.field, `${logPath}.logs[0].blockHash`);

  const forgedBoth = clone(receipts36);
  const r = forgedBoth[withLogIndex] as unknown as { logs: LogJson[]; logsBloom: string };
  r.logs = r.logs.slice(1);
  r.logsBloom = logsBloom(r.logs);
  t.is((await failure(t, forgedBoth)).reason, 'receipts-root', 'a log dropped with a consistent bloom still changes the root');
});

test('a receipt of another block, an unknown type, a malformed field', async (t) => {
  const e = await t.throwsAsync(checkReceipts(block1, receipts36), { instanceOf: ProofError });
  t.is(e!.reason, 'wrong-block');
  t.is(e!.field, 'receipts[0].blockHash');
  t.is(t.throws(() => receiptBytes({ ...receipts1[0]!, type: '0x50' }), { instanceOf: ProofError })!.reason, 'unsupported');
  t.is(t.throws(() => receiptBytes({ ...receipts1[0]!, cumulativeGasUsed: 'x' }, 'receipts[0]'), { instanceOf: ProofError })!.field, 'receipts[0].cumulativeGasUsed');
});

test('OP deposit receipts (0x7e) append depositNonce and depositReceiptVersion when present', (t) => {
  const base = { ...receipts1[0]!, type: '0x7e' };
  const plain = receiptBytes({ ...base, depositNonce: undefined, depositReceiptVersion: undefined });
  const regolith = receiptBytes({ ...base, depositNonce: '0x5', depositReceiptVersion: undefined });
  const canyon = receiptBytes({ ...base, depositNonce: '0x5', depositReceiptVersion: '0x1' });
  t.is(plain[0], 0x7e);
  t.true(regolith.length === plain.length + 1 && canyon.length === regolith.length + 1);
  t.is(regolith.at(-1), 0x05);
  t.is(canyon.at(-1), 0x01);
});

test("the receipts' other fields are checked against what proves them: gasUsed, log numbering, transaction hash and recipient", async (t) => {
  const latest = pairs.find((p) => p.name === 'eth_getBlockByNumber/get-latest.io#0')!.response.result as { transactions: { hash: string; to: string | null }[] };
  await checkReceipts(block36, receipts36);
  t.notThrows(() => checkReceiptDetails(receipts36, latest.transactions));
  t.notThrows(() => checkReceiptDetails(receipts1));
  const cases: [string, (r: any[]) => void, string][] = [
    ['gasUsed', (r) => { r[1].gasUsed = '0x1'; }, 'receipts[1].gasUsed'],
    ['logIndex', (r) => { r[withLogIndex].logs[0].logIndex = '0x63'; }, `receipts[${withLogIndex}].logs[0].logIndex`],
    ['log tx hash', (r) => { r[withLogIndex].logs[0].transactionHash = `0x${'ab'.repeat(32)}`; }, `receipts[${withLogIndex}].logs[0].transactionHash`],
    ['tx hash', (r) => { r[0].transactionHash = `0x${'ab'.repeat(32)}`; }, 'receipts[0].transactionHash'],
    ['to', (r) => { r[0].to = `0x${'ab'.repeat(20)}`; }, 'receipts[0].to'],
    ['removed', (r) => { r[withLogIndex].logs[0].removed = true; }, `receipts[${withLogIndex}].logs[0].removed`],
  ];
  for (const [name, patch, field] of cases) {
    const forged = clone(receipts36) as any[];
    patch(forged);
    const e = t.throws(() => checkReceiptDetails(forged, latest.transactions), { instanceOf: ProofError }, name)!;
    t.deepEqual([e.reason, e.field], ['value', field], name);
  }
});

test('receipts are bound to the block\'s transactions: a receipt labelled with another transaction\'s hash (or its logs), another recipient, or one receipt too many or too few is refused', async (t) => {
  const latest = pairs.find((p) => p.name === 'eth_getBlockByNumber/get-latest.io#0')!.response.result as { transactions: { hash: string; to: string | null }[] };
  await checkReceipts(block36, receipts36);
  t.notThrows(() => checkReceiptsOfTransactions(receipts36, latest.transactions));
  const [a, b] = [latest.transactions[0]!.hash, latest.transactions[1]!.hash];
  const cases: [string, (r: any[]) => void, string][] = [
    ['two receipts\' labels swapped', (r) => { r[0].transactionHash = b; r[1].transactionHash = a; }, 'receipts[0].transactionHash'],
    ['a hash never mined', (r) => { r[1].transactionHash = `0x${'fe'.repeat(32)}`; }, 'receipts[1].transactionHash'],
    ['a log of another transaction', (r) => { r[withLogIndex].logs[0].transactionHash = withLogIndex === 0 ? b : a; }, `receipts[${withLogIndex}].logs[0].transactionHash`],
    ['a log at another index', (r) => { r[withLogIndex].logs[0].transactionIndex = '0x63'; }, `receipts[${withLogIndex}].logs[0].transactionIndex`],
    ['another recipient', (r) => { r[0].to = `0x${'ab'.repeat(20)}`; }, 'receipts[0].to'],
    ['a gasUsed not its share of the cumulative gas', (r) => { r[1].gasUsed = '0x1'; }, 'receipts[1].gasUsed'],
    ['one receipt too few', (r) => { r.pop(); }, 'receipts'],
  ];
  for (const [name, patch, field] of cases) {
    const forged = clone(receipts36) as any[];
    patch(forged);
    const e = t.throws(() => checkReceiptsOfTransactions(forged, latest.transactions), { instanceOf: ProofError }, name)!;
    t.deepEqual([e.reason, e.field], ['value', field], name);
  }
});

test('a filter hashed once (bloomQuery) answers as the bits logsBloom sets say, over many blooms and in either hex case', (t) => {
  const blooms = [...receipts1, ...receipts36].map((r) => r.logsBloom).concat(block36.logsBloom);
  const zeroAddress = `0x${'00'.repeat(20)}`;
  // The reference is built from logsBloom alone: a value may be in a bloom when every bit it sets is set there.
  const addressBits = (address: string) => BigInt(logsBloom([{ address, topics: [], data: '0x' }]));
  const topicBits = (topic: string) => BigInt(logsBloom([{ address: zeroAddress, topics: [topic], data: '0x' }])) ^ addressBits(zeroAddress);
  const within = (bits: bigint, bloom: string) => BigInt(bloom) !== 0n && (BigInt(bloom) & bits) === bits;
  const addresses = [...new Set(receipts36.flatMap((r) => r.logs.map((l) => l.address)))].concat(`0x${'ab'.repeat(20)}`);
  const topics = [...new Set(receipts36.flatMap((r) => r.logs.flatMap((l) => l.topics)))].concat(`0x${'cd'.repeat(32)}`)
    .filter((topic) => (topicBits(topic) & addressBits(zeroAddress)) === 0n); // (a topic sharing a bit with the zero address has no clean reference)
  const outcomes = new Set<boolean>();
  for (const bloom of blooms) {
    const upper = `0x${bloom.slice(2).toUpperCase()}`;
    for (const address of addresses) {
      const expected = within(addressBits(address), bloom);
      t.is(bloomMayMatch(upper, bloomQuery({ address })), expected, address);
      outcomes.add(expected);
    }
    for (const topic of topics) {
      const expected = within(topicBits(topic), bloom);
      t.is(bloomMayMatch(bloom, bloomQuery({ topics: [topic] })), expected, topic);
      t.is(bloomMayMatch(bloom, bloomQuery({ topics: [null, topic] })), expected, topic);
      outcomes.add(expected);
    }
  }
  t.deepEqual([...outcomes].sort(), [false, true], 'both outcomes were met');
  t.is(t.throws(() => bloomMayMatch('0x12', bloomQuery({})), { instanceOf: ProofError })!.field, 'logsBloom');
});

test("a provider's eth_getTransactionReceipt answer is checked against the block's proven receipts", async (t) => {
  await checkReceipts(block1, receipts1);
  checkReceiptDetails(receipts1);
  const answers = pairs.filter((p) => p.method === 'eth_getTransactionReceipt' && (p.response.result as ReceiptJson | null)?.blockNumber === '0x1');
  t.true(answers.length >= 2);
  for (const p of answers) {
    const answer = p.response.result as ReceiptJson;
    const asked = (p.request.params as string[])[0]!;
    t.is(checkReceiptAnswer(receipts1, answer, asked), receipts1[Number(answer.transactionIndex)]!, p.name);
  }
  const answer = answers[0]!.response.result as ReceiptJson;
  const cases: [string, (r: any) => void, string][] = [
    ['status', (r) => { r.status = r.status === '0x1' ? '0x0' : '0x1'; }, 'result.status'],
    ['gas', (r) => { r.gasUsed = '0x1'; }, 'result.gasUsed'],
    ['index', (r) => { r.transactionIndex = r.transactionIndex === '0x0' ? '0x1' : '0x0'; }, 'result.transactionHash'],
    ['beyond', (r) => { r.transactionIndex = '0x63'; }, 'result.transactionIndex'],
    ['log added', (r) => { r.logs = [...r.logs, { address: `0x${'ab'.repeat(20)}`, topics: [], data: '0x' }]; }, 'result.logs'],
    ['post-state root missing (a receipt before Byzantium)', (r) => { delete r.root; }, 'result.root'],
  ];
  for (const [name, patch, field] of cases) {
    const forged = structuredClone(answer) as any;
    patch(forged);
    const e = t.throws(() => checkReceiptAnswer(receipts1, forged), { instanceOf: ProofError }, name)!;
    t.deepEqual([e.reason, e.field], ['value', field], name);
  }
  t.is(t.throws(() => checkReceiptAnswer(receipts1, answer, `0x${'ab'.repeat(32)}`), { instanceOf: ProofError })!.field, 'result.transactionHash');
  // a block with logs: a log's data altered in the answer
  await checkReceipts(block36, receipts36);
  const withLog = structuredClone(receipts36[withLogIndex]!) as any;
  withLog.logs[0].data = '0xdeadbeef';
  t.is(t.throws(() => checkReceiptAnswer(receipts36, withLog), { instanceOf: ProofError })!.field, 'result.logs[0].data');
  t.is(checkReceiptAnswer(receipts36, receipts36[withLogIndex]!), receipts36[withLogIndex]!);
});
