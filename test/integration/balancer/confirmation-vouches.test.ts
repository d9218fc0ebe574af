/**
 * What a confirmation vouches for, on the wire (issue 16): every field but the ignored ones is
 * compared (in blocks, transactions, receipts and logs: every schema field, see
 * confirmation-extras.test.ts), an ignored field is returned only when the N agreed on it, numbers are compared as
 * written, -32000 errors with their message, and a duplicate key is that upstream's failure.
 */
import test from 'ava';
import { log, startFakeUpstream, type FakeOptions, type FakeUpstream } from '../../support/fake-upstream.js';
import { learnHeads, rpc, startGateway, type Gateway } from '../../support/gateway.js';

async function setup(t: { teardown(fn: () => Promise<unknown>): void }, options: FakeOptions[], confirmations: number, chain: Record<string, unknown> = {}) {
  const fakes: FakeUpstream[] = [];
  t.teardown(() => Promise.all(fakes.map((f) => f.close())));
  for (const o of options) fakes.push(await startFakeUpstream(o));
  const gw: Gateway = await startGateway({ chains: { 1: { rpcs: fakes.map((f) => f.url), confirmations, ...chain } } });
  t.teardown(() => gw.close());
  return { fakes, gw };
}

const checked = (r: { headers: Record<string, unknown> }) => String(r.headers['x-checked-urls']).split(',');
const calls = (fakes: FakeUpstream[]) => fakes.map((f) => f.calls);
const balance = rpc('eth_getBalance', ['0x1111111111111111111111111111111111111111', '0x10']);
/** The whole reply of a single call, with `result` written as given (raw JSON text). */
const reply = (result: string) => (call: { id: unknown }) => `{"jsonrpc":"2.0","id":${JSON.stringify(call.id)},"result":${result}}`;

const logsWith = (timestamp: (i: number) => string) => [1, 2, 3].map((i) => ({ ...log(i), blockTimestamp: timestamp(i) }));
/** A node at block 0x10 whose every other answer is this log list (a range is voted on only by upstreams known to have its toBlock). */
const logsAnswer = (logs: unknown[]) => (call: { method: string }) => (call.method === 'eth_blockNumber' ? { result: '0x10' } : { result: logs });

test('should compare a log blockTimestamp: a liar in one log is not in X-Checked-URLS, the honest answer is returned', async (t) => {
  const honest = logsWith(() => '0x6553f100');
  const lying = logsWith((i) => (i === 2 ? '0x6553f101' : '0x6553f100'));
  const { fakes, gw } = await setup(
    t,
    [{ answer: logsAnswer(honest) }, { answer: logsAnswer(lying) }, { answer: logsAnswer(honest) }],
    2,
  );
  await learnHeads(gw, fakes);
  const r = await gw.post('/rpc/1', rpc('eth_getLogs', [{ fromBlock: '0x10', toBlock: '0x10' }]));
  t.is(r.status, 200, r.text);
  t.is(r.headers['x-confirmable'], 'true');
  t.deepEqual(checked(r), [fakes[0]!.url, fakes[2]!.url]);
  t.deepEqual(r.body.result, honest);
  t.deepEqual(calls(fakes), [1, 1, 1]);
});

test('should not return totalDifficulty under a confirmation when only the forwarded upstream sent it', async (t) => {
  // the upstream with the extra answers first, so its bytes are the ones forwarded
  const { fakes, gw } = await setup(t, [{ profile: 'extras' }, { delayMs: 100 }], 2);
  const r = await gw.post('/rpc/1', rpc('eth_getBlockByNumber', ['0x20', true]));
  t.is(r.status, 200, r.text);
  t.is(r.headers['x-forwarded-from'], fakes[0]!.url);
  t.is(checked(r).length, 2);
  t.false('totalDifficulty' in r.body.result, r.text);
  t.false('chainId' in r.body.result.transactions[0], 'nor the transactions\' chainId and yParity');
  t.false('yParity' in r.body.result.transactions[0]);
  t.is(r.body.result.hash, `0x${'ab'.repeat(31)}20`);
  t.is(r.body.id, 1);
});

test('should return totalDifficulty when the N agreeing upstreams all sent the same value', async (t) => {
  const { gw } = await setup(t, [{ profile: 'extras' }, { profile: 'extras', delayMs: 50 }], 2);
  const r = await gw.post('/rpc/1', rpc('eth_getBlockByNumber', ['0x20', true]));
  t.is(r.status, 200, r.text);
  t.is(r.body.result.totalDifficulty, '0x1');
  t.is(r.body.result.transactions[0].chainId, '0x539');
});

test('should return an ignored field of config only when the N agreed on it', async (t) => {
  const withExtra = logsWith(() => '0x1');
  const { fakes, gw } = await setup(t, [{ answer: logsAnswer(withExtra) }, { delayMs: 100, answer: logsAnswer([log(1), log(2), log(3)]) }], 2, {
    ignoredFields: { log: ['blockTimestamp'] },
  });
  await learnHeads(gw, fakes);
  const r = await gw.post('/rpc/1', rpc('eth_getLogs', [{ fromBlock: '0x10', toBlock: '0x10' }]));
  t.is(r.status, 200, r.text);
  t.is(r.headers['x-forwarded-from'], fakes[0]!.url);
  t.deepEqual(r.body.result, [log(1), log(2), log(3)]);
});

const disagreements: [string, string, string][] = [
  ['integers beyond 2^53', '12345678901234567993', '12345678901234567992'],
  // (in an object: a top-level null balance is "not there", below)
  ['1e400 and null', '{"v":1e400}', '{"v":null}'],
  ['1.0 and 1', '{"v":1.0}', '{"v":1}'],
];
for (const [name, a, b] of disagreements) {
  test(`should find no quorum between ${name}`, async (t) => {
    const { fakes, gw } = await setup(t, [{ raw: reply(a) }, { raw: reply(b) }], 2);
    const r = await gw.post('/rpc/1', balance);
    t.is(r.status, 502, r.text);
    t.is(r.body.error.code, -32010);
    t.is(r.body.error.data.groups.length, 2);
    t.deepEqual(calls(fakes), [1, 1]);
  });
}

test('should not confirm a top-level 1e400 beside a null balance from an upstream whose head is unknown: -32016', async (t) => {
  // (null is "not there" for eth_getBalance: a vote only from an upstream known to have the block;
  // these fakes answer eth_blockNumber with the same text, so no head is ever known)
  const { gw } = await setup(t, [{ raw: reply('1e400') }, { raw: reply('null') }], 2);
  const r = await gw.post('/rpc/1', balance);
  t.is(r.status, 503, r.text);
  t.is(r.body.error.code, -32016);
  t.is(r.body.result, undefined);
});

test('should confirm big integers written alike and return them as written', async (t) => {
  const { gw } = await setup(t, [{ raw: reply('12345678901234567993') }, { raw: reply('12345678901234567993') }], 2);
  const r = await gw.post('/rpc/1', balance);
  t.is(r.status, 200, r.text);
  t.is(r.text, '{"jsonrpc":"2.0","id":1,"result":12345678901234567993}');
});

const error32000 = (message: string) => () => ({ error: { code: -32000, message } });

test('should find no quorum between two -32000 errors that differ in message', async (t) => {
  const { gw } = await setup(t, [{ answer: error32000('execution reverted') }, { answer: error32000('insufficient funds for gas * price + value') }], 2);
  const r = await gw.post('/rpc/1', balance);
  t.is(r.status, 502, r.text);
  t.is(r.body.error.code, -32010);
});

test('should relay a -32000 error that N upstreams gave with the same message, with 200', async (t) => {
  const { fakes, gw } = await setup(t, [{ answer: error32000('execution reverted') }, { answer: error32000('execution reverted') }], 2);
  const r = await gw.post('/rpc/1', balance);
  t.is(r.status, 200, r.text);
  t.deepEqual(r.body.error, { code: -32000, message: 'execution reverted' });
  t.deepEqual(calls(fakes), [1, 1]);
});

test('should count an answer with a duplicate key as that upstream\'s failure and confirm with the others', async (t) => {
  const dup = (call: { id: unknown }) => `{"jsonrpc":"2.0","id":${JSON.stringify(call.id)},"result":"0x1","result":"0x2"}`;
  const { fakes, gw } = await setup(t, [{ raw: dup }, { raw: reply('"0x2"') }, { raw: reply('"0x2"') }], 2);
  const r = await gw.post('/rpc/1', balance);
  t.is(r.status, 200, r.text);
  t.deepEqual(checked(r), [fakes[1]!.url, fakes[2]!.url]);
  t.is(r.body.result, '0x2');
  t.deepEqual(calls(fakes), [1, 1, 1]);
});

test('should name the duplicate key as the reason when too few upstreams are left', async (t) => {
  const dup = (call: { id: unknown }) => `{"jsonrpc":"2.0","id":${JSON.stringify(call.id)},"result":{"a":"0x1","a":"0x2"}}`;
  const { fakes, gw } = await setup(t, [{ raw: dup }, { raw: reply('{"a":"0x2"}') }], 2);
  const r = await gw.post('/rpc/1', balance);
  t.is(r.status, 502, r.text);
  t.is(r.body.error.code, -32011);
  t.deepEqual(r.body.error.data.failures.map((f: { upstream: string }) => f.upstream), [fakes[0]!.url.replace(/\/$/, '')]);
  t.regex(r.body.error.data.failures[0].reason, /duplicate key/);
});

test('should remove an unconfirmed ignored field from a batch member and keep the batch as sent', async (t) => {
  const { fakes, gw } = await setup(t, [{ profile: 'extras' }, { delayMs: 100 }], 2);
  const r = await gw.post('/rpc/1', [rpc('eth_getBlockByNumber', ['0x20', false], 'b'), balance]);
  t.is(r.status, 200, r.text);
  t.is(r.headers['x-forwarded-from'], fakes[0]!.url);
  t.deepEqual(r.body.map((m: { id: unknown }) => m.id), ['b', 1]);
  t.false('totalDifficulty' in r.body[0].result, r.text);
  t.is(r.body[0].result.number, '0x20');
  t.is(r.body[1].result, '0xde0b6b3a764002a');
});
