/**
 * Merged requests on the wire: identical confirmable requests in flight share one agreement.
 * Each client gets its own id (any JSON type) and the same answer and headers; the upstreams are
 * asked once; a request that is not the same question for every node runs its own agreement.
 */
import http from 'node:http';
import test, { type ExecutionContext } from 'ava';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream.js';
import { learnHeads, rpc, startGateway, type Gateway } from '../../support/gateway.js';
import { until } from '../../support/wait.js';

const ADDRESS = '0x00000000000000000000000000000000000000aa';

/** A promise the test settles: the fakes' answers wait for it (FakeOptions.hold). */
function gate(): { promise: Promise<void>; open(): void; calls(body: unknown): Promise<void> | undefined } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  // Head polls (eth_blockNumber, learnHeads) are answered at once: only the calls under test wait.
  const calls = (body: unknown) => ((body as { method?: unknown } | undefined)?.method === 'eth_blockNumber' ? undefined : promise);
  return { promise, open, calls };
}

async function setup(
  t: ExecutionContext,
  options: { delayMs?: number; profiles?: ('honest' | 'liar')[]; hold?: (body: unknown) => Promise<unknown> | undefined } = {},
): Promise<{ list: FakeUpstream[]; gw: Gateway }> {
  const profiles = options.profiles ?? ['honest', 'honest', 'honest'];
  const list = await Promise.all(profiles.map((profile) => startFakeUpstream({ profile, delayMs: options.delayMs ?? 300, ...(options.hold && { hold: options.hold }) })));
  // Calls are counted exactly, and a loaded machine (or a held answer) makes an answer late: no
  // hedged call to a third upstream.
  const gw = await startGateway({ refreshInterval: 3600, timeouts: { hedgeMs: 0 }, chains: { 1337: { rpcs: list.map((f) => f.url) } } });
  t.teardown(async () => {
    await gw.close();
    await Promise.all(list.map((f) => f.close()));
  });
  // (heads known, block 0x10: a log range is voted on only by upstreams known to have its toBlock)
  await learnHeads(gw, list);
  return { list, gw };
}

/** Whether /metrics counts `n` requests of chain 1337 that joined a run in flight. */
const mergedNow = async (gw: Gateway, n: number) => new RegExp(`omnigate_merged_requests_total\\{chain="1337"\\} ${n}\\n`).test((await gw.request('GET', '/metrics')).text);

const calls = (list: FakeUpstream[], method = 'eth_getBalance') =>
  list.reduce((n, f) => n + f.requests.filter((r) => (r.body as { method?: string } | undefined)?.method === method).length, 0);

test('50 identical concurrent confirmable requests make one agreement; each client gets its own id and the seven headers', async (t) => {
  // The answers wait until the 49 others joined the first request's run (on a loaded machine the
  // fifty requests may take longer to arrive than any fixed delay).
  const answers = gate();
  const { list, gw } = await setup(t, { hold: answers.calls });
  const valid: unknown[] = Array.from({ length: 50 }, (_, i) => (i % 3 === 0 ? `client-${i}` : i % 3 === 1 ? i : `é\\"-${i}`));
  const pending = Promise.all(valid.map((id) => gw.post('/confirmations/2/rpc/1337', rpc('eth_getBalance', [ADDRESS, '0x1'], id))));
  await until(async () => mergedNow(gw, 49));
  answers.open();
  const replies = await pending;
  t.is(calls(list), 2, 'one agreement of N=2: two upstream calls for fifty requests');
  const first = replies[0]!;
  for (const [i, reply] of replies.entries()) {
    t.is(reply.status, 200, reply.text);
    t.deepEqual(reply.body.id, valid[i], 'the client\'s own id, of its own type');
    t.is(reply.body.result, first.body.result);
    t.is(reply.headers['x-confirmable'], 'true');
    t.is(reply.headers['x-required-confirmations'], '2');
    t.is(reply.headers['x-json-hash'], first.headers['x-json-hash']);
    t.is(reply.headers['x-checked-urls'], first.headers['x-checked-urls']);
    t.is(reply.headers['x-forwarded-from'], first.headers['x-forwarded-from']);
  }
  t.is(new Set(replies.map((r) => r.headers['x-request-id'])).size, 50, 'each request keeps its own request id');
  // The id is the only byte that differs: the answers are the same bytes otherwise.
  t.is(new Set(replies.map((r, i) => r.text.replace(`"id":${JSON.stringify(valid[i])}`, '"id":_'))).size, 1);
  const metrics = await gw.request('GET', '/metrics');
  t.regex(metrics.text, /omnigate_merged_requests_total\{chain="1337"\} 49/);
});

test('a merged answer of several megabytes (put under each id a slice at a time) reaches each client under its own id, every other byte as sent', async (t) => {
  // The id after the result, as Nethermind writes it: the whole answer is scanned to find it.
  const logs = Array.from({ length: 12_000 }, (_, i) => `{"address":"${ADDRESS}","data":"0x${i.toString(16).padStart(64, '0')}${'00'.repeat(64)}","logIndex":"0x${i.toString(16)}","removed":false}`);
  const raw = (call: { id: unknown; method: string }) =>
    call.method === 'eth_getLogs' ? `{"jsonrpc":"2.0","result":[${logs.join(',')}],"id":${JSON.stringify(call.id)}}` : `{"jsonrpc":"2.0","id":${JSON.stringify(call.id)},"result":"0x10"}`;
  // (answered once the three others joined the first request's run)
  const answers = gate();
  const list = await Promise.all([0, 1, 2].map(() => startFakeUpstream({ raw, hold: answers.calls })));
  const gw = await startGateway({ refreshInterval: 3600, timeouts: { hedgeMs: 0 }, chains: { 1337: { rpcs: list.map((f) => f.url) } } });
  t.teardown(async () => {
    answers.open();
    await gw.close();
    await Promise.all(list.map((f) => f.close()));
  });
  // (heads known, block 0x10: a log range is voted on only by upstreams known to have its toBlock)
  await learnHeads(gw, list);
  const ids: unknown[] = [1, 'client "b"', 'é', 12345678901];
  const pending = Promise.all(ids.map((id) => gw.post('/confirmations/3/rpc/1337', rpc('eth_getLogs', [{ fromBlock: '0x1', toBlock: '0x2' }], id))));
  await until(() => mergedNow(gw, 3));
  answers.open();
  const replies = await pending;
  t.is(calls(list, 'eth_getLogs'), 3, 'one agreement of N=3 for four requests');
  for (const [i, reply] of replies.entries()) {
    t.is(reply.status, 200, reply.text.slice(0, 300));
    t.true(reply.text.length > 3_000_000, `${reply.text.length} bytes`);
    t.is(reply.headers['x-confirmable'], 'true');
    t.is(reply.headers['x-json-hash'], replies[0]!.headers['x-json-hash']);
    t.deepEqual(reply.body.id, ids[i]);
    t.is(reply.text, raw({ id: ids[i], method: 'eth_getLogs' }), 'the upstream\'s bytes, under the client\'s id');
  }
});

test('each joined client\'s copy of a long merged answer is charged to limits.bufferedBytes: past it the client gets -32013 (503) under its own id', async (t) => {
  const logs = Array.from({ length: 12_000 }, (_, i) => `{"address":"${ADDRESS}","data":"0x${i.toString(16).padStart(64, '0')}${'00'.repeat(64)}","logIndex":"0x${i.toString(16)}","removed":false}`);
  const raw = (call: { id: unknown; method: string }) =>
    call.method === 'eth_getLogs' ? `{"jsonrpc":"2.0","id":${JSON.stringify(call.id)},"result":[${logs.join(',')}]}` : `{"jsonrpc":"2.0","id":${JSON.stringify(call.id)},"result":"0x10"}`;
  // (answered once the two others joined the first request's run)
  const answers = gate();
  const node = await startFakeUpstream({ raw, hold: answers.calls });
  const MiB = 2 ** 20;
  // The answer is about 3.3 MB: the run's own upstream answer and one copy fit in 8 MiB, a second copy does not.
  const gw = await startGateway({ refreshInterval: 3600, timeouts: { hedgeMs: 0 }, limits: { responseBytes: 4 * MiB, bufferedBytes: 8 * MiB }, chains: { 1337: { rpcs: [node.url] } } });
  t.teardown(async () => {
    answers.open();
    await gw.close();
    await node.close();
  });
  await learnHeads(gw, [node]);
  const ids = ['first', 'second', 'third'];
  const pending = Promise.all(ids.map((id) => gw.post('/confirmations/1/rpc/1337', rpc('eth_getLogs', [{ fromBlock: '0x1', toBlock: '0x2' }], id))));
  await until(() => mergedNow(gw, 2));
  answers.open();
  const replies = await pending;
  t.is(calls([node], 'eth_getLogs'), 1, 'one upstream call for the three requests');
  t.deepEqual(replies.map((r) => r.status), [200, 200, 503], replies.map((r) => r.text.slice(0, 200)).join(' | '));
  t.is(replies[1]!.text, raw({ id: 'second', method: 'eth_getLogs' }), 'the copy that fits: the upstream\'s bytes under the client\'s id');
  const refused = replies[2]!;
  t.is(refused.body.id, 'third');
  t.is(refused.body.error.code, -32013);
  t.is(refused.body.error.data.bufferedBytes, 8 * MiB);
  t.is(refused.headers['retry-after'], '1');
  // Once the answers are written the budget is free again: the same request alone succeeds.
  const again = await gw.post('/confirmations/1/rpc/1337', rpc('eth_getLogs', [{ fromBlock: '0x1', toBlock: '0x2' }], 'again'));
  t.is(again.status, 200);
});

test('a request that is not the same question runs its own agreement: other params, other N, a number in params, other chain path', async (t) => {
  const { list, gw } = await setup(t);
  const bodies: [string, unknown][] = [
    ['/confirmations/2/rpc/1337', rpc('eth_getBalance', [ADDRESS, '0x1'], 1)],
    ['/confirmations/2/rpc/1337', rpc('eth_getBalance', [ADDRESS, '0x2'], 2)],
    ['/confirmations/3/rpc/1337', rpc('eth_getBalance', [ADDRESS, '0x1'], 3)],
  ];
  const replies = await Promise.all(bodies.map(([path, body]) => gw.post(path, body)));
  for (const r of replies) t.is(r.status, 200, r.text);
  t.is(calls(list), 2 + 2 + 3, 'three questions, three agreements');
  t.deepEqual(replies.map((r) => r.body.id), [1, 2, 3]);
});

test('the same question with keys in another order merges; a parameter object holding a number does not', async (t) => {
  const answers = gate();
  const { list, gw } = await setup(t, { hold: answers.calls });
  t.teardown(() => answers.open());
  const filterA = { fromBlock: '0x1', toBlock: '0x2', address: ADDRESS };
  const filterB = { address: ADDRESS, toBlock: '0x2', fromBlock: '0x1' };
  const pending = Promise.all([
    gw.post('/confirmations/2/rpc/1337', rpc('eth_getLogs', [filterA], 'a')),
    gw.post('/confirmations/2/rpc/1337', rpc('eth_getLogs', [filterB], 'b')),
  ]);
  // (answered once the second joined the first's run; the numeric ones below are answered at once)
  await until(() => mergedNow(gw, 1));
  answers.open();
  const same = await pending;
  for (const r of same) t.is(r.status, 200, r.text);
  t.is(same[0]!.body.id, 'a');
  t.is(same[1]!.body.id, 'b');
  t.deepEqual(same[0]!.body.result, same[1]!.body.result);
  t.is(calls(list, 'eth_getLogs'), 2);
  // (JSON.parse reads 12345678901234567890 and 12345678901234567891 as one double: such params never merge.)
  const numeric = await Promise.all([
    gw.post('/confirmations/2/rpc/1337', `{"jsonrpc":"2.0","id":1,"method":"eth_getLogs","params":[{"fromBlock":"0x1","toBlock":"0x2","limit":12345678901234567890}]}`),
    gw.post('/confirmations/2/rpc/1337', `{"jsonrpc":"2.0","id":2,"method":"eth_getLogs","params":[{"fromBlock":"0x1","toBlock":"0x2","limit":12345678901234567891}]}`),
  ]);
  t.deepEqual(numeric.map((r) => r.body.id), [1, 2]);
  t.is(calls(list, 'eth_getLogs'), 2 + 4, 'two agreements: a number in the params never merges');
});

test('the first client leaving does not cut the run the others wait for; the last one leaving does', async (t) => {
  // The fakes answer when the test says: `held` is what the calls of the moment wait for.
  let held = gate();
  const { list, gw } = await setup(t, { delayMs: 0, hold: (body) => held.calls(body) });
  t.teardown(() => held.open());
  const port = Number(new URL(gw.url).port);
  const body = JSON.stringify(rpc('eth_getBalance', [ADDRESS, '0x1'], 'leaver'));
  // The first request starts the run, then its client goes away.
  const leaver = http.request({ host: '127.0.0.1', port, path: '/confirmations/2/rpc/1337', method: 'POST', headers: { 'content-type': 'application/json' } });
  leaver.on('error', () => {});
  leaver.end(body);
  await until(() => calls(list) === 2);
  const stayer = gw.post('/confirmations/2/rpc/1337', rpc('eth_getBalance', [ADDRESS, '0x1'], 'stayer'));
  await until(() => mergedNow(gw, 1));
  leaver.destroy();
  // That the run is not cut can only be seen by giving the gateway a moment to cut it wrongly
  // before the answers come.
  await new Promise((resolve) => setTimeout(resolve, 300));
  held.open();
  const reply = await stayer;
  t.is(reply.status, 200, reply.text);
  t.is(reply.body.id, 'stayer');
  t.is(reply.headers['x-confirmable'], 'true');
  t.is(calls(list), 2, 'the run went on for the request still waiting');
  t.is(list.reduce((n, f) => n + f.aborted, 0), 0, 'no call was aborted');

  // Alone, a client that leaves stops its calls.
  held = gate();
  const alone = http.request({ host: '127.0.0.1', port, path: '/confirmations/2/rpc/1337', method: 'POST', headers: { 'content-type': 'application/json' } });
  alone.on('error', () => {});
  alone.end(JSON.stringify(rpc('eth_getBalance', [ADDRESS, '0x3'], 'alone')));
  await until(() => calls(list) === 4);
  alone.destroy();
  await until(() => list.reduce((n, f) => n + f.aborted, 0) >= 2).catch(() => undefined);
  t.is(list.reduce((n, f) => n + f.aborted, 0), 2, 'both calls of the abandoned run were cut');
});

test('a run that ends in a disagreement gives every request that joined it the error, under its own id', async (t) => {
  const { gw } = await setup(t, { profiles: ['honest', 'liar', 'honest'], delayMs: 200 });
  const replies = await Promise.all(['x', 'y', 'z'].map((id) => gw.post('/confirmations/3/rpc/1337', rpc('eth_getBalance', [ADDRESS, '0x1'], id))));
  for (const [i, r] of replies.entries()) {
    t.is(r.status, 502, r.text);
    t.is(r.body.id, ['x', 'y', 'z'][i]);
    t.is(r.body.error.code, replies[0]!.body.error.code);
  }
});

test('mergeRequests: false: every request runs its own agreement', async (t) => {
  const list = await Promise.all([0, 1, 2].map(() => startFakeUpstream({ delayMs: 200 })));
  const gw = await startGateway({ refreshInterval: 3600, timeouts: { hedgeMs: 0 }, mergeRequests: false, chains: { 1337: { rpcs: list.map((f) => f.url) } } });
  t.teardown(async () => {
    await gw.close();
    await Promise.all(list.map((f) => f.close()));
  });
  const replies = await Promise.all([1, 2, 3].map((id) => gw.post('/confirmations/2/rpc/1337', rpc('eth_getBalance', [ADDRESS, '0x1'], id))));
  t.deepEqual(replies.map((r) => r.body.id), [1, 2, 3]);
  t.is(calls(list), 6);
  t.notRegex((await gw.request('GET', '/metrics')).text, /omnigate_merged_requests_total/);
});
