/** A 2.5 MB eth_getLogs answer (5,000 logs) is confirmed by 3 upstreams (issue 3, item 8). */
import test from 'ava';
import { log, startFakeUpstream, type AnswerFn } from '../../support/fake-upstream.js';
import { rpc, startGateway } from '../../support/gateway.js';
import { assessBody } from '../../../lib/verify/answers/answers.js';
import { offThreadCounts, offThreadFrom } from '../../../lib/verify/answers/off-thread.js';

const logs = Array.from({ length: 5_000 }, (_, i) => ({
  ...log(i),
  data: `0x${i.toString(16).padStart(64, '0')}${'00'.repeat(96)}`,
}));
const answer: AnswerFn = (call) => (call.method === 'eth_getLogs' ? { result: logs } : { result: null });

test('should confirm a 2.5 MB eth_getLogs answer with 3 upstreams', async (t) => {
  const fakes = await Promise.all([
    startFakeUpstream({ answer }),
    startFakeUpstream({ answer, profile: 'reordered' }),
    startFakeUpstream({ answer, profile: 'extras' }),
  ]);
  const gw = await startGateway({ chains: { 1: { rpcs: fakes.map((f) => f.url), confirmations: 3 } } });
  t.teardown(() => Promise.all([gw.close(), ...fakes.map((f) => f.close())]));
  const r = await gw.post('/rpc/1', rpc('eth_getLogs', [{ fromBlock: '0x1312d00', toBlock: '0x1313000' }]));
  t.is(r.status, 200);
  t.true(r.text.length >= 2_500_000, `answer is ${r.text.length} bytes`);
  t.is(r.body.result.length, 5_000);
  t.is(r.headers['x-confirmable'], 'true');
  t.is(String(r.headers['x-checked-urls']).split(',').length, 3);
  t.deepEqual(fakes.map((f) => f.calls), [1, 1, 1]);
  // Judged in the worker thread (lib/verify/answers/off-thread.ts): the hash is the main thread's.
  t.true(r.text.length >= offThreadFrom);
  const main = assessBody(Buffer.from(r.text), { batch: false, calls: [{ id: 1, method: 'eth_getLogs', params: [] }] });
  t.is(r.headers['x-json-hash'], main.ok ? main.hash : 'not a vote');
});

// Serial: it runs alone, so the thread's counts are this request's.
test.serial('should judge three byte-identical 2.5 MB answers once and compare the other two with it', async (t) => {
  const fakes = await Promise.all([startFakeUpstream({ answer }), startFakeUpstream({ answer }), startFakeUpstream({ answer })]);
  const gw = await startGateway({ chains: { 1: { rpcs: fakes.map((f) => f.url), confirmations: 3 } } });
  t.teardown(() => Promise.all([gw.close(), ...fakes.map((f) => f.close())]));
  const before = { ...offThreadCounts };
  const r = await gw.post('/rpc/1', rpc('eth_getLogs', [{ fromBlock: '0x1312d00', toBlock: '0x1313000' }]));
  t.is(r.status, 200);
  t.is(r.body.result.length, 5_000);
  t.is(r.headers['x-confirmable'], 'true');
  t.deepEqual(fakes.map((f) => f.calls), [1, 1, 1]);
  t.deepEqual({ judged: offThreadCounts.judged - before.judged, same: offThreadCounts.same - before.same }, { judged: 1, same: 2 });
  const main = assessBody(Buffer.from(r.text), { batch: false, calls: [{ id: 1, method: 'eth_getLogs', params: [] }] });
  t.is(r.headers['x-json-hash'], main.ok ? main.hash : 'not a vote');
});

test('should refuse an answer over limits.responseBytes and say so', async (t) => {
  const fakes = await Promise.all([startFakeUpstream({ answer }), startFakeUpstream({ answer })]);
  const gw = await startGateway({ limits: { responseBytes: 1_000_000 }, chains: { 1: { rpcs: fakes.map((f) => f.url) } } });
  t.teardown(() => Promise.all([gw.close(), ...fakes.map((f) => f.close())]));
  const r = await gw.post('/rpc/1', rpc('eth_getLogs', [{ fromBlock: '0x1', toBlock: '0x2' }]));
  t.is(r.status, 502);
  t.is(r.body.error.code, -32011);
  t.regex(JSON.stringify(r.body.error.data.failures), /over the 1000000-byte limit/);
});

/** The same list with one log's data changed: a liar a large answer's slices must catch. */
const lying: AnswerFn = (call) => (call.method === 'eth_getLogs' ? { result: logs.map((l, i) => (i === 4_321 ? { ...l, data: `${l.data.slice(0, -1)}1` } : l)) } : { result: null });

test('should outvote a large answer that differs in one log, and fail a large answer that is not JSON, naming why', async (t) => {
  const fakes = await Promise.all([
    startFakeUpstream({ answer }),
    startFakeUpstream({ answer: lying }),
    startFakeUpstream({ raw: (call) => (call.method === 'eth_getLogs' ? `{"jsonrpc":"2.0","id":${JSON.stringify(call.id)},"result":[${'{"data":"0x00"},'.repeat(100_000)}]}` : `{"jsonrpc":"2.0","id":${JSON.stringify(call.id)},"result":null}`) }),
    startFakeUpstream({ answer, profile: 'pretty' }),
  ]);
  const gw = await startGateway({ chains: { 1: { rpcs: fakes.map((f) => f.url), confirmations: 2 } } });
  t.teardown(() => Promise.all([gw.close(), ...fakes.map((f) => f.close())]));
  const r = await gw.post('/rpc/1', rpc('eth_getLogs', [{ fromBlock: '0x1312d00', toBlock: '0x1313000' }]));
  t.is(r.status, 200);
  t.is(r.body.result.length, 5_000);
  const bare = (u: string) => u.replace(/\/$/, '');
  t.deepEqual(String(r.headers['x-checked-urls']).split(',').map(bare), [fakes[0]!.url, fakes[3]!.url].map(bare));
  t.deepEqual(fakes.map((f) => f.calls), [1, 1, 1, 1]);
  const chains = await gw.request('GET', '/chains');
  t.regex(chains.text, /not JSON/);
});
