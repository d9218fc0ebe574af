/**
 * Liars set aside and refusals not charged, on the wire (issue 16).
 * (Tests about the upstream ranked first set `strategy: priority`: N=1 reads go to it.)
 * - An upstream ranked first that loses `disputes.maxLost` of its last `disputes.window`
 *   agreements is distrusted: unverified (N=1) reads no longer reach it, /chains and /metrics
 *   show it, it still votes on verified requests (sampled every `disputes.sampleEvery`), and it is
 *   trusted again once it agrees again.
 * - An upstream that refuses one request as too large (a wide eth_getLogs) hands the request on
 *   without being charged a failure; when every upstream refuses, the client gets the refusal as a
 *   node gives it.
 */
import test, { type ExecutionContext } from 'ava';
import { defaultAnswer, startFakeUpstream, type AnswerFn, type FakeUpstream } from '../../support/fake-upstream.js';
import { learnHeads, rpc, startGateway } from '../../support/gateway.js';

const pinnedBalance = rpc('eth_getBalance', ['0x1111111111111111111111111111111111111111', '0x10']);
const unverifiedRead = rpc('eth_blockNumber');
const calls = (fakes: FakeUpstream[]) => fakes.map((f) => f.calls);

async function fakes(t: ExecutionContext, profiles: Parameters<typeof startFakeUpstream>[0][]) {
  const list = await Promise.all(profiles.map((p) => startFakeUpstream(p)));
  t.teardown(() => Promise.all(list.map((f) => f.close())));
  return list;
}

async function gateway(t: ExecutionContext, raw: Record<string, unknown>) {
  const gw = await startGateway(raw);
  t.teardown(() => gw.close());
  return gw;
}

const upstreamOf = async (gw: Awaited<ReturnType<typeof gateway>>, i: number) => (await gw.request('GET', '/chains')).body[0].upstreams[i];

test('should set a liar aside for unverified reads after the window, and bring it back when it agrees again', async (t) => {
  const list = await fakes(t, [{ profile: 'liar' }, {}, {}]);
  const [liar, h1] = list;
  const gw = await gateway(t, { chains: { 1: { strategy: 'priority', rpcs: list.map((f) => f.url) } }, disputes: { window: 4, maxLost: 2, sampleEvery: 1 } });

  // Ranked first, it answers the unverified reads.
  const before = await gw.post('/rpc/1', unverifiedRead);
  t.is(before.headers['x-forwarded-from'], liar!.url);

  // Caught twice on confirmable requests: the answers are right, the liar loses.
  for (let i = 0; i < 2; i++) {
    const r = await gw.post('/confirmations/2/rpc/1', pinnedBalance);
    t.is(r.status, 200, r.text);
    t.false(String(r.headers['x-checked-urls']).split(',').includes(liar!.url));
  }
  t.like(await upstreamOf(gw, 0), { distrusted: true, recentLost: 2, disagreements: 2 });
  const metrics = (await gw.request('GET', '/metrics')).text;
  t.regex(metrics, new RegExp(`omnigate_upstream_distrusted\\{chain="1",upstream="${liar!.url.replace(/\/$/, '').replace(/[.]/g, '\\.')}"\\} 1`));

  // Unverified reads no longer reach it.
  const liarCalls = liar!.calls;
  for (let i = 0; i < 5; i++) {
    const r = await gw.post('/rpc/1', unverifiedRead);
    t.is(r.status, 200);
    t.is(r.headers['x-forwarded-from'], h1!.url);
  }
  t.is(liar!.calls, liarCalls, 'no N=1 read reached the distrusted upstream');

  // Still lying: every verified request samples it as a voter; the answer stays right, the liar stays aside.
  const still = await gw.post('/confirmations/2/rpc/1', pinnedBalance);
  t.is(still.status, 200, still.text);
  t.is(liar!.calls, liarCalls + 1, 'sampled as a voter');
  t.true((await upstreamOf(gw, 0)).distrusted);

  // Honest again: it agrees on the sampled verified requests and comes back once fewer than
  // ceil(maxLost / 2) = 1 of its last 4 votes were lost, i.e. after 4 agreements.
  liar!.profile = 'honest';
  for (let i = 0; i < 4; i++) {
    const r = await gw.post('/confirmations/2/rpc/1', pinnedBalance);
    t.is(r.status, 200, r.text);
    t.true(String(r.headers['x-checked-urls']).split(',').includes(liar!.url), `vote ${i + 1} counted`);
    t.is((await upstreamOf(gw, 0)).distrusted, i < 3, `after ${i + 1} agreements`);
  }
  const back = await gw.post('/rpc/1', unverifiedRead);
  t.is(back.headers['x-forwarded-from'], liar!.url, 'ranked first again');
  t.regex((await gw.request('GET', '/metrics')).text, /omnigate_upstream_distrusted\{chain="1",upstream="[^"]+"\} 0/);
});

test('should never sample a distrusted upstream on unverified reads, nor distrust with maxLost 0', async (t) => {
  const list = await fakes(t, [{ profile: 'liar' }, {}, {}]);
  const gw = await gateway(t, { chains: { 1: { rpcs: list.map((f) => f.url) } }, disputes: { maxLost: 0 } });
  for (let i = 0; i < 3; i++) t.is((await gw.post('/confirmations/2/rpc/1', pinnedBalance)).status, 200);
  t.like(await upstreamOf(gw, 0), { distrusted: false, disagreements: 3 });
  t.is((await gw.post('/rpc/1', unverifiedRead)).headers['x-forwarded-from'], list[0]!.url);
});

test('should sample a distrusted upstream on one verified request in sampleEvery only', async (t) => {
  const list = await fakes(t, [{ profile: 'liar' }, {}, {}]);
  const [liar] = list;
  const gw = await gateway(t, { chains: { 1: { rpcs: list.map((f) => f.url) } }, disputes: { window: 2, maxLost: 1, sampleEvery: 3 } });
  t.is((await gw.post('/confirmations/2/rpc/1', pinnedBalance)).status, 200);
  t.true((await upstreamOf(gw, 0)).distrusted);
  const after = liar!.calls;
  for (let i = 0; i < 6; i++) t.is((await gw.post('/confirmations/2/rpc/1', pinnedBalance)).status, 200);
  t.is(liar!.calls, after + 2, 'asked on the 3rd and the 6th verified request');
  t.deepEqual(calls(list).slice(1).map((n) => n > 0), [true, true]);
});

// ---- refusals ----

const wideLogs = rpc('eth_getLogs', [{ fromBlock: '0x0', toBlock: '0x10' }], 'client-id-7');
const refusing: AnswerFn = (call) =>
  call.method === 'eth_getLogs' ? { error: { code: -32005, message: 'query returned more than 10000 results' } } : defaultAnswer(call);
const rateLimited: AnswerFn = (call) =>
  call.method === 'eth_getLogs' ? { error: { code: -32005, message: 'daily request count exceeded, request rate limited' } } : defaultAnswer(call);

test('should hand a refused request on without charging the refusing upstream a failure', async (t) => {
  const list = await fakes(t, [{ answer: refusing }, {}]);
  const [refuser, other] = list;
  const gw = await gateway(t, { chains: { 1: { strategy: 'priority', rpcs: list.map((f) => f.url) } } });
  // (heads known: a log range is voted on only by upstreams known to have its toBlock)
  await learnHeads(gw, list);
  for (let i = 1; i <= 5; i++) {
    const r = await gw.post('/rpc/1', wideLogs);
    t.is(r.status, 200, r.text);
    t.is(r.headers['x-forwarded-from'], other!.url);
    t.true(Array.isArray(r.body.result));
    t.deepEqual(calls(list), [i, i], 'the refusing upstream is still asked first: no cool-down');
  }
  const shown = await upstreamOf(gw, 0);
  t.like(shown, { failures: 0, consecutiveFailures: 0, lastError: null });
  t.not(shown.state, 'cooling-down');
  t.is(refuser!.calls, 5);
  const metrics = (await gw.request('GET', '/metrics')).text;
  t.regex(metrics, /omnigate_upstream_request_duration_seconds_count\{chain="1",upstream="[^"]+",outcome="refusal"\} 5/);
  t.notRegex(metrics, /outcome="failure"/);
});

test('should not charge a rate limit (provider trouble) as a failure: the upstream is on back-off instead', async (t) => {
  const list = await fakes(t, [{ answer: rateLimited }, {}]);
  const gw = await gateway(t, { chains: { 1: { strategy: 'priority', rpcs: list.map((f) => f.url) } } });
  // (heads known first: the range is answered in one call, well within the back-off)
  await learnHeads(gw, list);
  t.is((await gw.post('/rpc/1', rpc('eth_chainId', []))).status, 200);
  const answers = [await gw.post('/rpc/1', wideLogs)];
  // Asked at once after it, within the first back-off (1 s; lib/health/rate-limits.ts).
  answers.push(...(await Promise.all([0, 1].map(() => gw.post('/rpc/1', wideLogs)))));
  t.true(answers.every((r) => r.status === 200));
  t.is(calls(list)[0], 2, 'the rate-limited upstream is not asked again during its back-off');
  t.like(await upstreamOf(gw, 0), { failures: 0, consecutiveFailures: 0, rateLimits: 1 });
});

test('should answer the node\'s refusal (200, the client\'s id) when every upstream refuses', async (t) => {
  const list = await fakes(t, [{ answer: refusing }, { answer: refusing }, { answer: refusing }]);
  const gw = await gateway(t, { chains: { 1: { rpcs: list.map((f) => f.url) } } });
  const r = await gw.post('/rpc/1', wideLogs);
  t.is(r.status, 200, r.text);
  t.deepEqual(r.body, { jsonrpc: '2.0', id: 'client-id-7', error: { code: -32005, message: 'query returned more than 10000 results' } });
  t.deepEqual(calls(list), [1, 1, 1], 'every upstream was asked before relaying the refusal');
  t.is(r.headers['x-forwarded-from'], list[0]!.url);
  t.is(String(r.headers['x-checked-urls']).split(',').length, 3);
  for (let i = 0; i < 3; i++) t.like(await upstreamOf(gw, i), { failures: 0, consecutiveFailures: 0 });
  const verified = await gw.post('/confirmations/2/rpc/1', wideLogs);
  t.is(verified.status, 200, verified.text);
  t.is(verified.body.error.code, -32005);
});

test('a refusal relayed from fewer than N providers is not confirmed: X-Confirmable false, X-Required-Confirmations 1', async (t) => {
  // N=2: the first upstream refuses as too large, the other two fail (HTTP 500). No vote: the
  // refusal is relayed, but one provider's word is not two confirmations.
  const list = await fakes(t, [{ answer: refusing }, { profile: 'error500' }, { profile: 'error500' }]);
  const gw = await gateway(t, { chains: { 1: { rpcs: list.map((f) => f.url) } } });
  const r = await gw.post('/confirmations/2/rpc/1', wideLogs);
  t.is(r.status, 200, r.text);
  t.deepEqual(r.body, { jsonrpc: '2.0', id: 'client-id-7', error: { code: -32005, message: 'query returned more than 10000 results' } });
  t.deepEqual(calls(list), [1, 1, 1]);
  t.is(r.headers['x-checked-urls'], list[0]!.url);
  t.is(r.headers['x-forwarded-from'], list[0]!.url);
  t.is(r.headers['x-confirmable'], 'false', 'one refusal is not confirmed by two');
  t.is(r.headers['x-required-confirmations'], '1');
  // Two providers refusing alike are two confirmations of that refusal.
  const both = await fakes(t, [{ answer: refusing }, { answer: refusing }, { profile: 'error500' }]);
  const gw2 = await gateway(t, { chains: { 1: { rpcs: both.map((f) => f.url) } } });
  const r2 = await gw2.post('/confirmations/2/rpc/1', wideLogs);
  t.is(r2.status, 200, r2.text);
  t.is(r2.body.error.code, -32005);
  t.is(r2.headers['x-confirmable'], 'true');
  t.is(r2.headers['x-required-confirmations'], '2');
});

test('should answer 502 when upstreams refused and another gave an answer that could not be confirmed', async (t) => {
  const list = await fakes(t, [{ answer: refusing }, {}]);
  const gw = await gateway(t, { chains: { 1: { rpcs: list.map((f) => f.url) } } });
  await learnHeads(gw, list);
  const r = await gw.post('/confirmations/2/rpc/1', wideLogs);
  t.is(r.status, 502, r.text);
  t.is(r.body.error.code, -32011);
  t.regex(JSON.stringify(r.body.error.data.failures), /refused as too large: -32005: query returned more than 10000 results/);
});

test('should not let unverified (N=1) answers dilute the window of lost votes', async (t) => {
  const list = await fakes(t, [{ profile: 'liar' }, {}, {}]);
  const gw = await gateway(t, { chains: { 1: { strategy: 'priority', rpcs: list.map((f) => f.url) } }, disputes: { window: 4, maxLost: 2, sampleEvery: 1 } });
  t.is((await gw.post('/confirmations/2/rpc/1', pinnedBalance)).status, 200);
  for (let i = 0; i < 10; i++) t.is((await gw.post('/rpc/1', pinnedBalance)).headers['x-forwarded-from'], list[0]!.url, 'the liar answers N=1 reads while trusted');
  t.like(await upstreamOf(gw, 0), { distrusted: false, recentLost: 1 });
  t.is((await gw.post('/confirmations/2/rpc/1', pinnedBalance)).status, 200);
  t.like(await upstreamOf(gw, 0), { distrusted: true, recentLost: 2 });
});
