/**
 * Batches per member (issues 25 and 17): every member of a batch is validated, classified,
 * confirmed, failed and timed on its own. The batch always gets HTTP 200 and one array, one
 * response per member in the order they came, each with its own id; a member the gateway refuses
 * gets its own error. Notifications get no response (a batch of notifications only: 204). Real fake
 * upstreams on port 0; what each upstream received is counted per method.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import test, { type ExecutionContext } from 'ava';
import { defaultAnswer, startFakeUpstream, type AnswerFn, type FakeOptions, type FakeUpstream } from '../../support/fake-upstream.js';
import { startFaultyUpstream, type HttpFaultMode } from '../../support/faulty-upstream.js';
import { rpc, startGateway } from '../../support/gateway.js';

const address = `0x${'11'.repeat(20)}`;
const balanceAt = (block: string, id: unknown) => rpc('eth_getBalance', [address, block], id);

async function setup(t: ExecutionContext, options: FakeOptions[], config: Record<string, unknown> = {}) {
  const fakes = await Promise.all(options.map((o) => startFakeUpstream(o)));
  t.teardown(() => Promise.all(fakes.map((f) => f.close())));
  const { chain, ...rest } = config;
  const gw = await startGateway({ ...rest, chains: { 1: { rpcs: fakes.map((f) => f.url), ...(chain as object | undefined) } } });
  t.teardown(() => gw.close());
  return { fakes, gw };
}

/** Every call a fake received, alone or in an upstream batch. */
const callsOf = (f: FakeUpstream) => f.requests.flatMap((r) => (Array.isArray(r.body) ? r.body : [r.body]) as { method?: string; id?: unknown }[]);
/** How many calls of `method` each fake received (alone or in upstream batches). */
const received = (fakes: FakeUpstream[], method: string) => fakes.map((f) => callsOf(f).filter((c) => c?.method === method).length);
/** Each fake's requests, as the number of calls in each (1: a single call, not a batch). */
const shapes = (fakes: FakeUpstream[]) => fakes.map((f) => f.requests.map((r) => (Array.isArray(r.body) ? r.body.length : 1)));
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

test('a refused member, a member whose upstreams all fail and valid members: an array in order, each with its own id', async (t) => {
  // eth_getCode fails on every upstream (an answer with neither result nor error, in a batch
  // answer that is otherwise well formed); every other call is answered.
  const broken: FakeOptions = {
    rawBatch: true,
    raw: (call) => JSON.stringify(call.method === 'eth_getCode' ? { jsonrpc: '2.0', id: call.id } : { jsonrpc: '2.0', id: call.id, ...defaultAnswer(call) }),
  };
  const { fakes, gw } = await setup(t, [broken, broken]);
  const batch = [
    balanceAt('0x5', 'first'),
    rpc('eth_getLogs', [{ blockHash: `0x${'1'.repeat(64)}`, fromBlock: '0x1' }], 2),
    rpc('eth_getCode', [address, '0x5'], 3),
    rpc('eth_blockNumber', [], 4),
  ];
  const r = await gw.post('/rpc/1', batch);
  t.is(r.status, 200, r.text);
  t.is(r.headers['content-type'], 'application/json');
  t.deepEqual(r.body.map((m: { id: unknown }) => m.id), ['first', 2, 3, 4]);
  t.is(r.body[0].result, (defaultAnswer(balanceAt('0x5', 1)) as { result: string }).result);
  t.is(r.body[1].error.code, -32602);
  t.regex(r.body[1].error.message, /blockHash/);
  t.is(r.body[2].error.code, -32011);
  t.is(r.body[2].error.data.failures.length, 2);
  t.is(r.body[3].result, '0x10');
  for (const m of r.body) t.is(m.jsonrpc, '2.0');
  t.deepEqual(received(fakes, 'eth_getLogs'), [0, 0], 'the refused member is never sent');
  t.is(sum(received(fakes, 'eth_getCode')), 2, 'the failing member asked every upstream');
  t.is(sum(received(fakes, 'eth_getBalance')), 1);
  t.is(sum(received(fakes, 'eth_blockNumber')), 1);
  // The three sent members went to one upstream as one batch (N=1 members of a batch ask the
  // same upstream first); eth_getCode, failed there, asked the other one alone.
  t.deepEqual(shapes(fakes).map((s) => s.join()).sort(), ['1', '3']);
  // one error among the members: the batch as a whole is not confirmed
  t.is(r.headers['x-confirmable'], 'false');
  t.is(r.headers['x-required-confirmations'], '1');
  t.truthy(r.headers['x-request-id']);
  t.regex(r.headers['x-json-hash'] as string, /^[0-9a-f]{64}$/);
});

test('confirmable and unconfirmable members each get their own N: upstream calls counted per member', async (t) => {
  const { fakes, gw } = await setup(t, [{}, {}, {}]);
  const mixed = [balanceAt('0x5', 1), rpc('eth_blockNumber', [], 2), rpc('eth_getBlockByNumber', ['0x7', false], 3), balanceAt('latest', 4)];
  const r = await gw.post('/confirmations/3/rpc/1', mixed);
  t.is(r.status, 200, r.text);
  t.deepEqual(r.body.map((m: { id: unknown }) => m.id), [1, 2, 3, 4]);
  t.true(r.body.every((m: { result?: unknown }) => m.result !== undefined), r.text);
  t.deepEqual(received(fakes, 'eth_getBalance').map((n) => n >= 1), [true, true, true], 'the pinned balance went to all three');
  t.is(sum(received(fakes, 'eth_getBalance')), 3 + 1, 'pinned balance: 3 votes; latest balance: 1');
  t.is(sum(received(fakes, 'eth_blockNumber')), 1);
  t.is(sum(received(fakes, 'eth_getBlockByNumber')), 3);
  t.is(r.headers['x-confirmable'], 'false', 'two members were not confirmable');
  t.is(r.headers['x-required-confirmations'], '1', 'always 1 when X-Confirmable is false');
  t.is(r.headers['x-checked-urls'], fakes.map((f) => f.url).join(','));
  // one upstream batch per upstream: both N=3 members everywhere, both N=1 members on one of them
  t.deepEqual(shapes(fakes).map((s) => s.join()).sort(), ['2', '2', '4']);

  const pinned = [balanceAt('0x5', 'a'), rpc('eth_getBlockByNumber', ['0x7', false], 'b'), rpc('eth_chainId', [], 'c')];
  const before = fakes.map((f) => f.calls);
  const c = await gw.post('/confirmations/3/rpc/1', pinned);
  t.is(c.status, 200, c.text);
  t.is(c.headers['x-confirmable'], 'true', 'every member confirmed by 3 (eth_chainId beside them too)');
  t.is(c.headers['x-required-confirmations'], '3');
  t.deepEqual(fakes.map((f, i) => f.calls - before[i]!), [1, 1, 1], 'one upstream batch of 3 each');
  t.deepEqual(shapes(fakes).map((s) => s.at(-1)), [3, 3, 3]);
  // the same answers give the same X-Json-Hash, whichever upstream's bytes were returned
  const again = await gw.post('/confirmations/3/rpc/1', pinned);
  t.is(again.headers['x-json-hash'], c.headers['x-json-hash']);
});

test('a member pinned to a block the lagging upstreams lack gets -32016 while the others are answered', async (t) => {
  const node = (head: number): AnswerFn => (call) => {
    if (call.method === 'eth_chainId') return { result: '0x1' }; // chain 1: the probes check it
    if (call.method === 'eth_blockNumber') return { result: `0x${head.toString(16)}` };
    if (call.method === 'eth_getBalance') return Number((call.params ?? [])[1]) <= head ? { result: '0x1' } : { error: { code: -32000, message: 'header not found' } };
    return defaultAnswer(call);
  };
  const { gw } = await setup(t, [{ answer: node(100) }, { answer: node(100) }, { answer: node(110) }], { heads: { waitMs: 200 }, chain: { confirmations: 2 } });
  await gw.rpc.startHealthChecks().firstRound;
  const r = await gw.post('/rpc/1', [balanceAt('0x60', 1), balanceAt('0x69', 2), rpc('eth_chainId', [], 3)]);
  t.is(r.status, 200, r.text);
  t.deepEqual(r.body.map((m: { id: unknown }) => m.id), [1, 2, 3]);
  t.is(r.body[0].result, '0x1', r.text);
  t.is(r.body[1].error.code, -32016);
  t.is(r.body[1].error.data.block, '0x69');
  t.is(r.body[2].result, '0x1');
  // The two answers were agreed by two, but one member could not be confirmed: the array as a
  // whole is not, and X-Required-Confirmations is 1 whenever X-Confirmable is false (spec B2).
  t.is(r.headers['x-confirmable'], 'false');
  t.is(r.headers['x-required-confirmations'], '1');
  // the unions over the members: the upstreams that agreed on each answer, each named once
  const checked = String(r.headers['x-checked-urls']).split(',');
  t.true(checked.length >= 2 && checked.length <= 3 && new Set(checked).size === checked.length, checked.join());
  t.true(String(r.headers['x-forwarded-from']).split(',').every((u) => checked.includes(u)));
});

test('one member the gateway could not confirm beside members confirmed by 3: X-Confirmable false and X-Required-Confirmations 1', async (t) => {
  const { fakes, gw } = await setup(t, [{}, {}, {}]);
  const urls = fakes.map((f) => f.url);
  const confirmed = [balanceAt('0x5', 1), rpc('eth_getBlockByNumber', ['0x7', false], 2)];
  const all = await gw.post('/confirmations/3/rpc/1', confirmed);
  t.is(all.status, 200, all.text);
  t.is(all.headers['x-confirmable'], 'true');
  t.is(all.headers['x-required-confirmations'], '3', 'every member confirmed by 3: N');
  t.deepEqual(String(all.headers['x-checked-urls']).split(',').sort(), [...urls].sort());

  for (const [what, odd] of [
    ['a member refused by the gateway (-32602: a block number without 0x)', rpc('eth_getBalance', [address, '5'], 3)],
    ['a member not confirmable (latest)', balanceAt('latest', 3)],
    ['a member refused by the gateway (eth_subscribe, -32601)', rpc('eth_subscribe', ['newHeads'], 3)],
  ] as const) {
    const before = fakes.map((f) => f.requests.length);
    const r = await gw.post('/confirmations/3/rpc/1', [...confirmed, odd]);
    t.is(r.status, 200, r.text);
    t.deepEqual(r.body.map((m: { id: unknown }) => m.id), [1, 2, 3], what);
    t.is(r.body[0].result, all.body[0].result, what);
    t.is(r.headers['x-confirmable'], 'false', what);
    t.is(r.headers['x-required-confirmations'], '1', `${what}: 1 whenever X-Confirmable is false, not the 3 of the others`);
    // X-Checked-URLS: the union over the members (the two confirmed ones went to all three)
    const checked = String(r.headers['x-checked-urls']).split(',');
    t.deepEqual([...checked].sort(), [...urls].sort(), what);
    // X-Forwarded-From: each answered member's upstream, once, among those checked
    const forwarded = String(r.headers['x-forwarded-from']).split(',');
    t.true(forwarded.length >= 1 && forwarded.length <= (r.body[2].result === undefined ? 2 : 3), what);
    t.true(forwarded.every((u) => checked.includes(u)), what);
    t.is(new Set(forwarded).size, forwarded.length, what);
    if (r.body[2].result === undefined) {
      t.is(typeof r.body[2].error.code, 'number', what);
      t.deepEqual(fakes.map((f, i) => f.requests.slice(before[i]).flatMap((q) => (Array.isArray(q.body) ? q.body : [q.body]) as { id: unknown }[]).filter((c) => c.id === 3).length), [0, 0, 0], `${what}: never sent`);
    }
  }
});

test('notifications get no response and are not forwarded; a batch of notifications only gets 204', async (t) => {
  const { fakes, gw } = await setup(t, [{}]);
  const notification = { jsonrpc: '2.0', method: 'eth_blockNumber', params: [] };
  const r = await gw.post('/rpc/1', [notification, rpc('eth_chainId', [], 'x'), notification]);
  t.is(r.status, 200, r.text);
  t.deepEqual(r.body, [{ jsonrpc: '2.0', id: 'x', result: '0x539' }]);
  t.is(fakes[0]!.calls, 1);
  const only = await gw.post('/rpc/1', [notification, notification]);
  t.is(only.status, 204);
  t.is(only.text, '');
  t.truthy(only.headers['x-request-id']);
  t.is(fakes[0]!.calls, 1, 'no upstream call');
  // an invalid member without an id is not a notification: it gets an error with id null
  const invalid = await gw.post('/rpc/1', [{ jsonrpc: '2.0', method: 7 }]);
  t.is(invalid.status, 200, invalid.text);
  t.is(invalid.body[0].id, null);
  t.is(invalid.body[0].error.code, -32600);
});

test('ids are kept byte for byte: string ids, ids above 2^32, escapes in a refused member', async (t) => {
  const { gw } = await setup(t, [{}]);
  const big = 2 ** 40 + 7;
  const body = `[{"jsonrpc":"2.0","id":${big},"method":"eth_chainId"},{"jsonrpc":"2.0","id":"s-1","method":"eth_chainId"},{"jsonrpc":"2.0","id":"\\u0041b","method":"eth_getBalance","params":[]},{"jsonrpc":"2.0","id":1.5,"method":"eth_chainId"},5]`;
  const r = await gw.post('/rpc/1', body);
  t.is(r.status, 200, r.text);
  t.true(r.text.startsWith(`[{"jsonrpc":"2.0","id":${big},"result":"0x539"},{"jsonrpc":"2.0","id":"s-1","result":"0x539"},{"jsonrpc":"2.0","id":"\\u0041b","error":{"code":-32602,`), r.text);
  t.deepEqual(r.body.map((m: { id: unknown }) => m.id), [big, 's-1', 'Ab', null, null]);
  t.is(r.body[3].error.code, -32600, 'a float id is not valid: refused with id null');
  t.is(r.body[4].error.code, -32600);
});

test('an empty batch is one error object; a batch over limits.batchSize is refused whole; unparseable JSON is -32700', async (t) => {
  const { fakes, gw } = await setup(t, [{}], { limits: { batchSize: 2 } });
  const empty = await gw.post('/rpc/1', '[]');
  t.is(empty.status, 400);
  t.deepEqual([empty.body.id, empty.body.error.code], [null, -32600]);
  const large = await gw.post('/rpc/1', [rpc('eth_chainId', [], 1), rpc('eth_chainId', [], 2), rpc('eth_chainId', [], 3)]);
  t.is(large.status, 400);
  t.deepEqual([large.body.id, large.body.error.code], [null, -32007]);
  const broken = await gw.post('/rpc/1', '[{"jsonrpc":"2.0","id":1,"method":"eth_chainId"},');
  t.is(broken.status, 400);
  t.deepEqual([broken.body.id, broken.body.error.code], [null, -32700]);
  t.is(fakes[0]!.calls, 0);
});

test('each member has its own deadline: a member whose upstream never answers times out alone (-32012)', async (t) => {
  // One upstream that answers eth_chainId at once and never answers eth_getCode.
  const sockets = new Set<import('node:net').Socket>();
  let hanging = 0;
  const server = http.createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString()));
    req.on('end', () => {
      const call = JSON.parse(text) as { id: unknown; method: string };
      if (call.method === 'eth_getCode') return void (hanging += 1);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: call.id, result: '0x539' }));
    });
  });
  server.on('connection', (s) => sockets.add(s));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // batchUpstream: false: each member goes alone, so only eth_getCode's call hangs (coalesced,
  // the shared call would hang for all three: see the coalescing tests below).
  // (2 s: the other members must be answered well within it on a loaded machine.)
  const gw = await startGateway({ timeouts: { requestMs: 2_000, upstreamMs: 60_000 }, chains: { 1: { rpcs: [url], batchUpstream: false } } });
  t.teardown(async () => {
    await gw.close();
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const r = await gw.post('/rpc/1', [rpc('eth_chainId', [], 1), rpc('eth_getCode', [address, '0x5'], 2), rpc('eth_chainId', [], 3)]);
  t.is(r.status, 200, r.text);
  t.deepEqual(r.body.map((m: { id: unknown }) => m.id), [1, 2, 3]);
  t.is(r.body[0].result, '0x539');
  t.is(r.body[1].error.code, -32012, r.text);
  t.is(r.body[2].result, '0x539');
  t.is(hanging, 1);
});

// Coalescing (lib/upstream/transport/coalesce.ts): the members' calls to one upstream in one turn go as one
// upstream batch, split back by id.

/** A batch of 10 eth_getBalance of distinct accounts at `block`, ids 1…10. */
const tenBalances = (block: string) => Array.from({ length: 10 }, (_, i) => rpc('eth_getBalance', [`0x${String(i).repeat(40)}`, block], i + 1));
const honest = (body: unknown[]) => body.map((c) => ({ jsonrpc: '2.0', id: (c as { id: unknown }).id, ...defaultAnswer(c as Parameters<AnswerFn>[0]) }));

test('coalesced: a batch of 10 at N=1 makes one upstream request of 10 calls; at N=3 one per upstream', async (t) => {
  const { fakes, gw } = await setup(t, [{}, {}, {}]);
  const n1 = tenBalances('latest');
  const r = await gw.post('/rpc/1', n1);
  t.is(r.status, 200, r.text);
  t.deepEqual(r.body, honest(n1));
  t.deepEqual(shapes(fakes).flat(), [10], 'one upstream request in all, with the 10 calls');
  t.deepEqual(fakes.flatMap(callsOf).map((c) => c.id), n1.map((c) => c.id), 'the members in order, ids as sent');
  t.is(r.headers['x-forwarded-from'], fakes[shapes(fakes).findIndex((s) => s.length === 1)]!.url);

  const before = fakes.map((f) => f.requests.length);
  const n3 = tenBalances('0x5');
  const c = await gw.post('/confirmations/3/rpc/1', n3);
  t.is(c.status, 200, c.text);
  t.deepEqual(c.body, honest(n3));
  t.is(c.headers['x-confirmable'], 'true');
  t.is(c.headers['x-required-confirmations'], '3');
  t.deepEqual(fakes.map((f, i) => f.requests.length - before[i]!), [1, 1, 1], 'one upstream request per upstream');
  t.deepEqual(shapes(fakes).map((s) => s.at(-1)), [10, 10, 10]);
});

test('coalesced: a mangled upstream batch answer fails its members there; they escalate and are answered from another upstream', async (t) => {
  for (const mode of ['batch-missing-id', 'batch-foreign-id', 'batch-duplicate-id', 'garbage-status', 'truncated-json'] as HttpFaultMode[]) {
    const faulty = await startFaultyUpstream(mode);
    t.teardown(() => faulty.close());
    const good = await Promise.all([startFakeUpstream(), startFakeUpstream()]);
    t.teardown(() => Promise.all(good.map((f) => f.close())));
    // N=2 asks the first two in list order: the faulty one and good[0]; good[1] replaces the faulty one.
    const gw = await startGateway({ chains: { 1: { rpcs: [faulty.url, ...good.map((f) => f.url)], confirmations: 2 } } });
    t.teardown(() => gw.close());
    const body = [rpc('eth_getBalance', [address, '0x10'], 1), rpc('eth_getBlockByNumber', ['0x2', false], 'b'), rpc('eth_getBalance', [address, '0x11'], 3)];
    const r = await gw.post('/rpc/1', body);
    t.is(r.status, 200, `${mode}: ${r.text}`);
    t.deepEqual(r.body, honest(body), `${mode}: each member the honest answer, in order`);
    t.is(r.headers['x-confirmable'], 'true', mode);
    t.is(r.headers['x-checked-urls'], good.map((f) => f.url).join(','), `${mode}: the faulty upstream is no vote`);
    t.is(faulty.requests, 1, `${mode}: the faulty upstream asked once (one batch)`);
    t.deepEqual(shapes(good), [[3], [3]], `${mode}: the three members escalated together, as one batch`);
  }
});

test('coalesced: an upstream that answers a batch with one error object gets the calls again one by one, and no batch after', async (t) => {
  const refusing = await startFaultyUpstream('batch-as-object');
  t.teardown(() => refusing.close());
  const gw = await startGateway({ chains: { 1: { rpcs: [refusing.url] } } });
  t.teardown(() => gw.close());
  const body = [rpc('eth_getBalance', [address, 'latest'], 1), rpc('eth_blockNumber', [], 2), rpc('eth_chainId', [], 3)];
  const r = await gw.post('/rpc/1', body);
  t.is(r.status, 200, r.text);
  t.deepEqual(r.body, honest(body));
  t.is(refusing.requests, 1 + 3, 'the batch, then each call alone');
  const again = await gw.post('/rpc/1', body);
  t.deepEqual(again.body, honest(body));
  t.is(refusing.requests, 4 + 3, 'one by one at once');
});

test('coalesced: members with repeated ids go in separate upstream batches and are answered in order', async (t) => {
  const { fakes, gw } = await setup(t, [{}]);
  const body = [rpc('eth_getBalance', [address, 'latest'], 1), rpc('eth_blockNumber', [], 1), rpc('eth_chainId', [], 2), rpc('eth_chainId', [], 1)];
  const r = await gw.post('/rpc/1', body);
  t.is(r.status, 200, r.text);
  t.deepEqual(r.body, honest(body), 'in order, each with its own answer');
  t.deepEqual(shapes(fakes)[0]!.sort(), [1, 1, 2], 'ids 1 and 2 together; the second and third id 1 alone');
});

test('coalesced: batchUpstream: false sends each member alone; a member over limits.responseBytes fails alone', async (t) => {
  const { fakes, gw } = await setup(t, [{}], { chain: { batchUpstream: false } });
  const r = await gw.post('/rpc/1', tenBalances('latest'));
  t.is(r.status, 200, r.text);
  t.deepEqual(shapes(fakes), [Array(10).fill(1)]);

  const large: AnswerFn = (call) => (call.method === 'eth_getCode' ? { result: `0x${'ab'.repeat(3000)}` } : defaultAnswer(call));
  const limited = await setup(t, [{ answer: large }, { answer: large }], { limits: { responseBytes: 4096 } });
  const body = [rpc('eth_getCode', [address, 'latest'], 1), rpc('eth_chainId', [], 2), rpc('eth_blockNumber', [], 3)];
  const l = await limited.gw.post('/rpc/1', body);
  t.is(l.status, 200, l.text);
  t.is(l.body[0].error.code, -32011, l.text);
  t.regex(l.body[0].error.data.failures[0].reason, /larger than 4096 bytes/);
  t.deepEqual(l.body.slice(1), honest(body.slice(1)));
  t.deepEqual(shapes(limited.fakes).map((s) => s.join()).sort(), ['1', '3'], 'the batch of 3, then eth_getCode alone elsewhere');
});
