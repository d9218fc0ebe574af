/** A 2.5 MB eth_getLogs answer (5,000 logs) is confirmed by 3 upstreams (issue 3, item 8). */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import { log, startFakeUpstream, type AnswerFn } from '../../support/fake-upstream.js';
import { learnHeads, rpc, startGateway } from '../../support/gateway.js';
import { assessBody } from '../../../lib/verify/answers/answers.js';
import { offThreadCounts, offThreadFrom } from '../../../lib/verify/answers/off-thread.js';

const logs = Array.from({ length: 5_000 }, (_, i) => ({
  ...log(i),
  data: `0x${i.toString(16).padStart(64, '0')}${'00'.repeat(96)}`,
}));
/** A node at block 0x1313000 (a log range is voted on only by upstreams known to have its toBlock). */
const answer: AnswerFn = (call) => (call.method === 'eth_getLogs' ? { result: logs } : call.method === 'eth_blockNumber' ? { result: '0x1313000' } : { result: null });

test('should confirm a 2.5 MB eth_getLogs answer with 3 upstreams', async (t) => {
  const fakes = await Promise.all([
    startFakeUpstream({ answer }),
    startFakeUpstream({ answer, profile: 'reordered' }),
    startFakeUpstream({ answer, profile: 'extras' }),
  ]);
  const gw = await startGateway({ chains: { 1: { rpcs: fakes.map((f) => f.url), confirmations: 3 } } });
  t.teardown(() => Promise.all([gw.close(), ...fakes.map((f) => f.close())]));
  await learnHeads(gw, fakes);
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
  await learnHeads(gw, fakes);
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
const lying: AnswerFn = (call) => (call.method === 'eth_getLogs' ? { result: logs.map((l, i) => (i === 4_321 ? { ...l, data: `${l.data.slice(0, -1)}1` } : l)) } : answer(call));

test('should outvote a large answer that differs in one log, and fail a large answer that is not JSON, naming why', async (t) => {
  const fakes = await Promise.all([
    startFakeUpstream({ answer }),
    startFakeUpstream({ answer: lying }),
    startFakeUpstream({ raw: (call) => (call.method === 'eth_getLogs' ? `{"jsonrpc":"2.0","id":${JSON.stringify(call.id)},"result":[${'{"data":"0x00"},'.repeat(100_000)}]}` : `{"jsonrpc":"2.0","id":${JSON.stringify(call.id)},"result":null}`) }),
    startFakeUpstream({ answer, profile: 'pretty' }),
  ]);
  const gw = await startGateway({ chains: { 1: { rpcs: fakes.map((f) => f.url), confirmations: 2 } } });
  t.teardown(() => Promise.all([gw.close(), ...fakes.map((f) => f.close())]));
  await learnHeads(gw, fakes);
  const r = await gw.post('/rpc/1', rpc('eth_getLogs', [{ fromBlock: '0x1312d00', toBlock: '0x1313000' }]));
  t.is(r.status, 200);
  t.is(r.body.result.length, 5_000);
  const bare = (u: string) => u.replace(/\/$/, '');
  t.deepEqual(String(r.headers['x-checked-urls']).split(',').map(bare), [fakes[0]!.url, fakes[3]!.url].map(bare));
  t.deepEqual(fakes.map((f) => f.calls), [1, 1, 1, 1]);
  const chains = await gw.request('GET', '/chains');
  t.regex(chains.text, /not JSON/);
});

/**
 * An upstream whose eth_getLogs answer nests 300 levels (limits.jsonDepth: 256) after `filler` log
 * objects, with its Content-Length (a declared length: the transport may leave the scan to the
 * judging thread) or chunked (the transport leaves it from 1 MiB on); its other answers are null.
 * Counts its calls and connections.
 */
async function deepUpstream(filler: number, chunked: boolean) {
  const up = { url: '', calls: 0, connections: 0, length: 0, close: () => Promise.resolve() };
  const server = http.createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString()));
    req.on('end', () => {
      const call = JSON.parse(text) as { id: unknown; method: string };
      if (call.method === 'eth_getLogs') up.calls += 1;
      const body = call.method === 'eth_getLogs'
        ? `{"jsonrpc":"2.0","id":${JSON.stringify(call.id)},"result":[${'{"data":"0x00"},'.repeat(filler)}${'['.repeat(300)}${']'.repeat(300)}]}`
        : `{"jsonrpc":"2.0","id":${JSON.stringify(call.id)},"result":null}`;
      if (call.method === 'eth_getLogs') up.length = body.length;
      res.writeHead(200, chunked ? { 'content-type': 'application/json' } : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }).end(body);
    });
  });
  server.on('connection', () => (up.connections += 1));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  up.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  up.close = () => new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
  return up;
}

test.serial('should fail a large answer nested deeper than limits.jsonDepth as it fails a small one (too-deep, the next upstream asked, its connection kept), its nesting checked by the judging thread', async (t) => {
  const outcome = async (filler: number, chunked = false) => {
    const deep = await deepUpstream(filler, chunked);
    const good = await startFakeUpstream({ answer });
    const gw = await startGateway({ chains: { 1: { rpcs: [deep.url, good.url], confirmations: 1 } } });
    t.teardown(() => Promise.all([gw.close(), deep.close(), good.close()]));
    // (the good one's head known; the deep one's stays unknown: its answer fails before any vote)
    await learnHeads(gw, [good]);
    const before = { ...offThreadCounts };
    const r = await gw.post('/rpc/1', rpc('eth_getLogs', [{ fromBlock: '0x1312d00', toBlock: '0x1313000' }]));
    const judged = offThreadCounts.judged - before.judged;
    const calls = [deep.calls, good.calls];
    const chains = (await gw.request('GET', '/chains')).body as { upstreams: { url: string; failures: number; lastError: string | null }[] }[];
    const failed = chains[0]!.upstreams.find((u) => u.url.replace(/\/$/, '') === deep.url)!;
    // A second request: the deep upstream is asked on the connection it kept.
    const again = await gw.post('/rpc/1', rpc('eth_getLogs', [{ fromBlock: '0x1312d00', toBlock: '0x1313000' }]));
    return { status: r.status, results: r.body.result?.length, calls, failures: failed.failures, lastError: failed.lastError, judged, length: deep.length, again: again.body.result?.length, connections: deep.connections };
  };
  const small = await outcome(0);
  const large = await outcome(80_000);
  // Without a declared length: scanned as it arrives up to 1 MiB, the rest (where it nests) left to the thread.
  const chunked = await outcome(80_000, true);
  t.true(small.length < offThreadFrom && large.length >= offThreadFrom, `${small.length} and ${large.length} bytes`);
  for (const o of [small, large, chunked]) {
    t.is(o.status, 200);
    t.is(o.results, 5_000, 'answered by the second upstream');
    t.deepEqual(o.calls, [1, 1]);
    t.is(o.failures, 1);
    t.regex(String(o.lastError), /answer nested deeper than 256 levels \(limits\.jsonDepth\)/);
    t.is(o.again, 5_000);
  }
  t.is(small.lastError, large.lastError);
  t.is(chunked.lastError, large.lastError);
  // The large deep answer and the good one were both judged in the thread: the deep one refused there.
  t.is(large.judged, 2);
  t.is(chunked.judged, 2);
  t.is(small.judged, 1);
  t.is(large.connections, 1, 'the too-deep answer was read whole: its connection was kept');
  t.is(chunked.connections, 1);
});

/**
 * The verdict of bytes already judged is the same request's only. Two providers answer request B
 * (id 2) with the very bytes they answered request A with (id 1), while A's verdicts are fresh:
 * judged for B, those bytes have the wrong id and do not vote, so B is not confirmed with A's logs.
 */
test.serial('should not let bytes judged for one request vote on another: two providers replaying request A\'s large answer to B confirm nothing', async (t) => {
  const answerOf = (id: unknown, fromBlock: string) => JSON.stringify({ jsonrpc: '2.0', id, result: fromBlock === '0x10' ? logs : logs.slice(1) });
  const textA = answerOf(1, '0x10');
  type Call = { id: unknown; params?: unknown[] };
  const fromOf = (c: Call) => (c.params?.[0] as { fromBlock: string }).fromBlock;
  const head = (c: Call) => JSON.stringify({ jsonrpc: '2.0', id: c.id, result: '0x30' });
  const replaying = (c: Call & { method: string }) => (c.method === 'eth_blockNumber' ? head(c) : fromOf(c) === '0x20' ? textA : answerOf(c.id, fromOf(c)));
  const fakes = await Promise.all([
    startFakeUpstream({ raw: replaying }),
    startFakeUpstream({ raw: replaying }),
    startFakeUpstream({ raw: (c) => (c.method === 'eth_blockNumber' ? head(c) : answerOf(c.id, fromOf(c))) }),
  ]);
  const gw = await startGateway({ chains: { 1: { rpcs: fakes.map((f) => f.url), confirmations: 2 } } });
  t.teardown(() => Promise.all([gw.close(), ...fakes.map((f) => f.close())]));
  await learnHeads(gw, fakes);
  const before = { ...offThreadCounts };
  const [a, b] = await Promise.all([
    gw.post('/rpc/1', rpc('eth_getLogs', [{ fromBlock: '0x10', toBlock: '0x30' }], 1)),
    gw.post('/rpc/1', rpc('eth_getLogs', [{ fromBlock: '0x20', toBlock: '0x30' }], 2)),
  ]);
  t.is(a.status, 200);
  t.is(a.headers['x-confirmable'], 'true');
  t.is(a.body.result.length, 5_000);
  t.is(b.status, 502, b.text.slice(0, 300));
  t.is(b.body.error.code, -32011);
  t.is(b.body.id, 2);
  const reasons = (b.body.error.data.failures as { reason: string }[]).map((f) => f.reason);
  t.deepEqual(reasons, ['wrong id 1 (expected 2)', 'wrong id 1 (expected 2)']);
  // (The third upstream is asked for B, and for A too when a loaded machine's judging passes the hedge delay.)
  t.deepEqual(fakes.slice(0, 2).map((f) => f.calls), [2, 2]);
  t.true(offThreadCounts.judged - before.judged >= 2, 'A\'s answer and B\'s replay of it both judged');
});

// Serial: the thread's counts are this request's.
test.serial('should judge in the thread an answer under 1 MiB that costs far more than its size to judge (50 000 keys), with the main thread\'s verdict', async (t) => {
  const keys = Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`k${i}`, i]));
  const costly: AnswerFn = (call) => (call.method === 'eth_getBalance' ? { result: keys } : call.method === 'eth_blockNumber' ? { result: '0x1313000' } : { result: null });
  const fake = await startFakeUpstream({ answer: costly });
  const gw = await startGateway({ chains: { 1: { rpcs: [fake.url], confirmations: 1 } } });
  t.teardown(() => Promise.all([gw.close(), fake.close()]));
  await learnHeads(gw, [fake]);
  const before = { ...offThreadCounts };
  const r = await gw.post('/rpc/1', rpc('eth_getBalance', ['0x' + '11'.repeat(20), '0x1312d00']));
  t.is(r.status, 200);
  t.true(r.text.length < offThreadFrom, `answer is ${r.text.length} bytes`);
  t.is(Object.keys(r.body.result).length, 50_000);
  t.is(r.headers['x-confirmable'], 'true');
  t.is(fake.requests.filter((q) => (q.body as { method?: string }).method === 'eth_getBalance').length, 1);
  t.deepEqual({ costly: offThreadCounts.costly - before.costly, judged: offThreadCounts.judged - before.judged }, { costly: 1, judged: 1 });
  const main = assessBody(Buffer.from(r.text), { batch: false, calls: [{ id: 1, method: 'eth_getBalance', params: [] }] });
  t.is(r.headers['x-json-hash'], main.ok ? main.hash : 'not a vote');
});
